"""Conversion of an imported Iometer document into a plan, keeping Iometer's meaning."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import icf_import
from app.model import plan as P
from app.model.builtin_specs import find_builtin
from app.model.units import format_bytes
from icf_import.document import Worker as IcfWorker
from icf_import.read_specs import percent_total_words

WORKER_KINDS = {"DISK": "disk", "NETWORK,TCP": "network_tcp", "NETWORK,VI": "network_vi"}


def _spec(s: icf_import.AccessSpec) -> P.AccessSpec:
    lines = [
        P.SpecLine(ln.size, ln.of_size, ln.reads, ln.random, ln.delay, ln.burst, ln.align, ln.reply)
        for ln in s.lines
    ]
    return P.AccessSpec(s.name, lines, s.default_assignment)


def _not_zero(value: int, what: str, notes: list[P.FidelityNote]) -> int:
    """Iometer's input check on the cycling fields (``CheckData(..., no_zero=TRUE)``) turns 0 into 1 when
    a test starts; so does Fiometer, saying so."""
    if value != 0:
        return value
    notes.append(
        P.FidelityNote(
            "test setup",
            f"{what} is 0; Iometer's input check turns it into 1 when the test starts, and so does Fiometer",
        )
    )
    return 1


def _setup(doc: icf_import.IcfDocument, notes: list[P.FidelityNote]) -> P.TestSetup:
    t = doc.test_setup or icf_import.TestSetup()

    def cycling(c: icf_import.Cycling, what: str) -> P.Cycling:
        return P.Cycling(
            _not_zero(c.start, f"{what} start", notes), _not_zero(c.step, f"{what} step", notes), c.step_type
        )

    q = t.queue_depth_cycling
    description = t.description
    if "," in description:  # Iometer's window replaces them when it reads its description box
        description = description.replace(",", "-")
        notes.append(
            P.FidelityNote(
                "test setup",
                "the test description's commas are dashes, as Iometer writes "
                "it into results (a comma would split its results.csv row)",
            )
        )
    setup = P.TestSetup(
        description=description,
        run_time=t.run_seconds,
        ramp_up=t.ramp_up,
        test_type=t.test_type,
        worker_cycling=cycling(t.worker_cycling, "Worker Cycling"),
        target_cycling=cycling(t.disk_cycling, "Disk Cycling"),
        queue_depth_cycling=P.QueueDepthCycling(
            _not_zero(q.start, "Queue Depth Cycling start", notes),
            q.end,
            _not_zero(q.step, "Queue Depth Cycling step", notes),
            q.step_type,
        ),
        record_results=t.record_results,
    )
    setup.iometer.disk_workers_to_spawn = t.disk_workers_to_spawn
    setup.iometer.network_workers_to_spawn = t.network_workers_to_spawn
    rd = doc.results_display
    if rd is None:  # Iometer resets its Results Display: updates of the last interval
        setup.update_type = "LAST_UPDATE"
        if doc.test_setup is not None:
            notes.append(
                P.FidelityNote(
                    "results display",
                    "the file has no RESULTS DISPLAY section; as in Iometer, "
                    "the results shown are those since the last update",
                )
            )
        return setup
    setup.update_frequency = rd.update_frequency
    setup.update_type = rd.update_type
    setup.iometer.bar_charts = [c.statistic for c in sorted(rd.bar_charts, key=lambda c: c.index)]
    if rd.record_last_update is None:
        notes.append(
            P.FidelityNote(
                "results display",
                "the file has the key 'Update Frequency,Update Type' of "
                "Iometer 2008.06.18 and earlier; Iometer 1.1.0 refuses it, "
                "Fiometer reads it (an export writes 1.1.0's key)",
            )
        )
    elif rd.record_last_update:
        setup.iometer.record_last_update = True
        notes.append(
            P.FidelityNote(
                "results display",
                "Record Last Update Results is ENABLED: as Iometer, Fiometer "
                "writes every update to inst<results file> beside the "
                "results file (Start asks for it; fiometer run "
                "--results-file FILE.csv), and stores every update in its "
                "results database either way",
            )
        )
    return setup


_DEFAULT_FOR_KIND = {"disk": ("ALL", "DISK"), "network_tcp": ("ALL", "NET"), "network_vi": ("ALL", "NET")}
IOMETER_GIVES_NONE = (
    "no access specs assigned; Iometer 1.1.0 gives a worker it loads none (a spec's default "
    "assignment only applies to workers created in its window)"
)


def _without_specs(plan: P.Plan, bare: list[tuple[str, P.Worker, str]], notes: list[P.FidelityNote]) -> None:
    """Workers the file assigns no spec. As in Iometer they get none, unless no worker of the file has any:
    Iometer would then refuse to start, and Fiometer gives them the specs whose default assignment fits
    (what the file's author meant, e.g. the widely shared VMware template), saying so."""
    if any(w.specs for m in plan.managers for w in m.workers):
        for where, _, _ in bare:
            notes.append(
                P.FidelityNote(
                    where, IOMETER_GIVES_NONE + ", so it does no I/O; assign it specs to use its targets"
                )
            )
        return
    for where, worker, kind in bare:
        defaults = [s.name for s in plan.specs if s.default_assignment in _DEFAULT_FOR_KIND[kind]]
        if defaults:
            worker.specs = defaults
            notes.append(
                P.FidelityNote(
                    where,
                    IOMETER_GIVES_NONE + " and would not start; as no worker has "
                    "any, Fiometer gives it the specs whose default assignment is ALL"
                    + (" or DISK" if kind == "disk" else " or NET")
                    + ": "
                    + ", ".join(repr(n) for n in defaults),
                )
            )


def nothing_to_run(plan: P.Plan) -> str | None:
    """Why the plan has no step to run (Iometer would not start it), or None."""
    if any(w.specs for m in plan.managers for w in m.workers):
        return None
    return (
        "nothing to run: "
        + (
            "the file has no managers or workers"
            if not any(m.workers for m in plan.managers)
            else "no worker has an access specification assigned"
        )
        + "; Iometer would not start it. Add a worker and assign it access specifications"
    )


def _worker(w: IcfWorker, where: str, resolve_spec: Callable[[str, str], str | None]) -> P.Worker:
    """One worker of the file, with its assigned specs (those that resolve) and its targets."""
    worker = P.Worker(
        name=w.name,
        kind=WORKER_KINDS.get(w.type.upper(), "disk"),
        queue_depth=w.queue_depth,
        max_size=w.disk_max_size or 0,
        start_sector=w.disk_start_sector or 0,
        data_pattern=w.data_pattern or 0,
        fixed_seed=w.fixed_seed if w.use_fixed_seed else None,
        test_connection_rate=w.test_connection_rate,
        transactions_per_connection=w.transactions_per_connection,
    )
    for name in w.assigned_specs or []:
        resolved = resolve_spec(name, where)
        if resolved is not None:
            worker.specs.append(resolved)
    for t in w.targets or []:
        is_net = t.type.upper().startswith("NETWORK")
        partner = t.partner_manager[1] if t.partner_manager else None
        worker.targets.append(
            P.Target(name=t.name, kind="network" if is_net else "disk", partner_manager=partner)
        )
    return worker


def plan_from_icf(doc: icf_import.IcfDocument) -> P.Plan:
    """Build a plan from a parsed .icf (its diagnostics are the caller's to show)."""
    notes: list[P.FidelityNote] = []
    plan = P.Plan(
        name=Path(doc.source).stem if doc.source != "<string>" else "Imported plan",
        setup=_setup(doc, notes),
        source=doc.source,
        notes=notes,
    )
    if plan.setup.description.strip():
        plan.name = plan.setup.description.strip()
    plan.specs = [_spec(s) for s in doc.access_specs or []]
    if doc.test_setup is None:
        notes.append(
            P.FidelityNote("test setup", "the file has no TEST SETUP section; Iometer's defaults are used")
        )
    for sp in plan.specs:
        total = sum(ln.of_size for ln in sp.lines)
        if sp.lines and total != 100:
            notes.append(
                P.FidelityNote(
                    f"access spec {sp.name!r}",
                    percent_total_words(total),
                )
            )

    def resolve_spec(name: str, where: str) -> str | None:
        if name.casefold() == P.IDLE.casefold() or plan.spec(name):
            return name
        builtin = find_builtin(name)
        if builtin is not None:
            plan.specs.append(builtin)
            notes.append(
                P.FidelityNote(
                    where,
                    f"spec {name!r} is not in the file; Iometer 1.1.0's built-in spec of that name is used",
                )
            )
            return name
        notes.append(
            P.FidelityNote(
                where, f"assigned spec {name!r} is not defined in the file; skipped (as Iometer does)"
            )
        )
        return None

    fill: list[str] = []  # disk workers with Maximum size 0
    bare: list[tuple[str, P.Worker, str]] = []  # workers without assigned specs
    for i, m in enumerate(doc.managers or []):
        # Only the first manager runs here by default; the others need a host chosen by the user.
        mgr = P.Manager(name=m.name, host=P.LOCAL if i == 0 else None, address_in_file=m.address)
        for w in m.workers:
            where = f"manager {m.name!r} / worker {w.name!r}"
            worker = _worker(w, where, resolve_spec)
            if not w.assigned_specs:
                bare.append((where, worker, worker.kind))
            if worker.kind == "disk" and w.targets and not w.disk_max_size:
                fill.append(w.name)
            mgr.workers.append(worker)
        plan.managers.append(mgr)
    _without_specs(plan, bare, notes)
    if fill:
        notes.append(
            P.FidelityNote(
                "workers " + ", ".join(repr(n) for n in dict.fromkeys(fill)),
                "Maximum size is 0 (\u201cfill the target\u201d): on a raw disk both Iometer and fio use all of it; on "
                f"a drive Iometer prepares an iobw.tst filling the free space, Fiometer a "
                f"{format_bytes(P.DEFAULT_TEST_FILE_SIZE)} test file (set Maximum size, or the file size when running, "
                "for another size)",
            )
        )
    return plan
