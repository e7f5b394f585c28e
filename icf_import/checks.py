"""Checks across sections, made after every section has been read."""

from __future__ import annotations

from icf_import.cursor import Context
from icf_import.document import IcfDocument, Worker
from icf_import.read_managers import SpecRef

IDLE = "idle"  # Iometer's built-in spec 0; it is never saved but may be assigned


def check_assigned_specs(doc: IcfDocument, refs: list[SpecRef], ctx: Context) -> None:
    """Assigned names must name a spec of the file; Iometer ignores the others (with a message)."""
    if doc.managers is None:
        return
    defined = {s.name.casefold() for s in doc.access_specs or []} | {IDLE}
    for ref in refs:
        if ref.name.casefold() in defined:
            continue
        where = (
            "the file does not define it"
            if doc.access_specs is not None
            else "the file has no ACCESS SPECIFICATIONS section"
        )
        ctx.warn(
            ref.line,
            f"worker '{ref.worker.name}' is assigned access specification '{ref.name}', but "
            f"{where}; Iometer ignores this assignment",
        )


def check_some_worker_has_a_spec(doc: IcfDocument, ctx: Context) -> None:
    """Iometer refuses to start when no worker has any access spec; say so at the first worker."""
    workers = [w for m in doc.managers or [] for w in m.workers]
    if not workers or any(_has_spec(w, doc) for w in workers):
        return
    ctx.error(
        workers[0].line_no,
        "no worker has an access specification: expected an 'Assigned access specs' "
        "entry naming a spec of the file, or a spec whose default assignment is ALL, DISK or NET; "
        'found none (Iometer stops with "You must assign at least one access specification to a worker.")',
    )


def _has_spec(wkr: Worker, doc: IcfDocument) -> bool:
    defined = {s.name.casefold() for s in doc.access_specs or []} | {IDLE}
    if any(name.casefold() in defined for name in wkr.assigned_specs or []):
        return True
    wanted = {"ALL", "DISK" if wkr.type == "DISK" else "NET"}
    return any(s.default_assignment in wanted for s in doc.access_specs or [])
