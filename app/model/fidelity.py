"""What fio cannot reproduce exactly from an access spec or worker, in words for the user."""

from __future__ import annotations

from app.model.plan import AccessSpec, FidelityNote, Plan, Worker


def spec_notes(spec: AccessSpec) -> list[FidelityNote]:
    where = f"access spec {spec.name!r}"
    out: list[FidelityNote] = []
    lines = spec.lines
    if any(ln.reply for ln in lines):
        out.append(
            FidelityNote(
                where,
                "reply sizes are not reproduced: fio has no request/reply transactions "
                "for disks; each request runs alone and transactions = I/Os",
            )
        )
    if len({(ln.delay, ln.burst) for ln in lines}) > 1:
        out.append(
            FidelityNote(
                where,
                "lines have different delay/burst; fio applies one think time per job, "
                "so the I/O-weighted mean delay and burst are used",
            )
        )
    elif lines and lines[0].delay:
        out.append(
            FidelityNote(
                where,
                "delay is applied with fio's thinktime, which first waits for all "
                "outstanding I/Os; Iometer keeps completing I/Os during the delay",
            )
        )
    if len({ln.align for ln in lines}) > 1 or (
        len(lines) > 1 and any(ln.align not in (0, ln.size) for ln in lines)
    ):
        out.append(
            FidelityNote(
                where,
                "lines have different alignments; fio aligns all random I/Os of a job "
                "to one boundary, the smallest one is used",
            )
        )
    if any(0 < ln.reads < 100 and ln.random < 100 for ln in lines):
        out.append(
            FidelityNote(
                where,
                "sequential mixed I/O: fio keeps separate sequential positions for "
                "reads and writes, Iometer one shared position",
            )
        )
    if len(lines) > 1 and len({ln.random for ln in lines}) > 1:
        out.append(
            FidelityNote(
                where,
                "lines with different % random: fio draws random/sequential per "
                "direction, so the mix per transfer size is averaged",
            )
        )
    return out


def worker_notes(manager: str, worker: Worker) -> list[FidelityNote]:
    where = f"manager {manager!r} / worker {worker.name!r}"
    out: list[FidelityNote] = []
    if worker.kind == "network_tcp":
        out.append(
            FidelityNote(
                where,
                "network worker: runs on fio's TCP engine between its manager and its "
                "partner manager, the receiving side listening; data flows one way (the "
                "spec's majority of reads or writes), and delay, burst, reply and "
                "alignment are not sent",
            )
        )
    elif worker.kind != "disk":
        out.append(
            FidelityNote(
                where,
                "VI network workers have no fio equivalent; the worker is kept in the plan but does not run",
            )
        )
    if worker.test_connection_rate:
        out.append(
            FidelityNote(
                where,
                f"'test connection rate' ({worker.transactions_per_connection} "
                "transactions per connection) is not reproduced: fio keeps targets open; "
                "connections are reported as 0",
            )
        )
    return out


def all_notes(plan: Plan) -> list[FidelityNote]:
    """Import notes kept in the plan, plus what the current specs and workers imply."""
    used = {n.casefold() for m in plan.managers for w in m.workers for n in w.specs}
    out = list(plan.notes)
    for spec in plan.specs:
        if spec.name.casefold() in used:
            out.extend(spec_notes(spec))
    for m in plan.managers:
        for w in m.workers:
            out.extend(worker_notes(m.name, w))
    return out
