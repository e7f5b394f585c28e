"""Conversion of an imported Iometer document into a plan, keeping Iometer's meaning."""

from __future__ import annotations

from pathlib import Path

import icf_import
from app.model import plan as P
from app.model.builtin_specs import find_builtin

WORKER_KINDS = {"DISK": "disk", "NETWORK,TCP": "network_tcp", "NETWORK,VI": "network_vi"}
_DEFAULT_FOR_KIND = {"disk": ("ALL", "DISK"), "network_tcp": ("ALL", "NET"), "network_vi": ("ALL", "NET")}


def _spec(s: icf_import.AccessSpec) -> P.AccessSpec:
    lines = [P.SpecLine(ln.size, ln.of_size, ln.reads, ln.random, ln.delay, ln.burst, ln.align, ln.reply)
             for ln in s.lines]
    return P.AccessSpec(s.name, lines, s.default_assignment)


def _setup(doc: icf_import.IcfDocument) -> P.TestSetup:
    t = doc.test_setup or icf_import.TestSetup()
    setup = P.TestSetup(
        description=t.description,
        run_time=t.run_seconds,
        ramp_up=t.ramp_up,
        test_type=t.test_type,
        worker_cycling=P.Cycling(t.worker_cycling.start, t.worker_cycling.step, t.worker_cycling.step_type),
        target_cycling=P.Cycling(t.disk_cycling.start, t.disk_cycling.step, t.disk_cycling.step_type),
        queue_depth_cycling=P.QueueDepthCycling(t.queue_depth_cycling.start, t.queue_depth_cycling.end,
                                                t.queue_depth_cycling.step, t.queue_depth_cycling.step_type),
        record_results=t.record_results,
    )
    if doc.results_display is not None:
        setup.update_frequency = doc.results_display.update_frequency
        setup.update_type = doc.results_display.update_type
    return setup


def plan_from_icf(doc: icf_import.IcfDocument) -> P.Plan:
    """Build a plan from a parsed .icf (its diagnostics are the caller's to show)."""
    plan = P.Plan(name=Path(doc.source).stem if doc.source != "<string>" else "Imported plan",
                  setup=_setup(doc), source=doc.source)
    if plan.setup.description.strip():
        plan.name = plan.setup.description.strip()
    plan.specs = [_spec(s) for s in doc.access_specs or []]
    notes = plan.notes
    if doc.test_setup is None:
        notes.append(P.FidelityNote("test setup", "the file has no TEST SETUP section; Iometer's defaults are used"))
    for sp in plan.specs:
        total = sum(ln.of_size for ln in sp.lines)
        if sp.lines and total != 100:
            notes.append(P.FidelityNote(f"access spec {sp.name!r}", f"'% of size' adds up to {total}, not 100; "
                                        "Iometer would refuse this spec, Fiometer scales its lines to 100"))

    def resolve_spec(name: str, where: str) -> str | None:
        if name.casefold() == P.IDLE.casefold() or plan.spec(name):
            return name
        builtin = find_builtin(name)
        if builtin is not None:
            plan.specs.append(builtin)
            notes.append(P.FidelityNote(where, f"spec {name!r} is not in the file; Iometer 1.1.0's built-in "
                                               "spec of that name is used"))
            return name
        notes.append(P.FidelityNote(where, f"assigned spec {name!r} is not defined in the file; skipped "
                                           "(as Iometer does)"))
        return None

    for i, m in enumerate(doc.managers or []):
        # Only the first manager runs here by default; the others need a host chosen by the user.
        mgr = P.Manager(name=m.name, host=P.LOCAL if i == 0 else None, address_in_file=m.address)
        for w in m.workers:
            kind = WORKER_KINDS.get(w.type.upper(), "disk")
            where = f"manager {m.name!r} / worker {w.name!r}"
            worker = P.Worker(
                name=w.name, kind=kind, queue_depth=w.queue_depth,
                max_size=w.disk_max_size or 0, start_sector=w.disk_start_sector or 0,
                data_pattern=w.data_pattern or 0,
                fixed_seed=w.fixed_seed if w.use_fixed_seed else None,
                test_connection_rate=w.test_connection_rate,
                transactions_per_connection=w.transactions_per_connection,
            )
            for name in w.assigned_specs or []:
                resolved = resolve_spec(name, where)
                if resolved is not None:
                    worker.specs.append(resolved)
            if not w.assigned_specs:
                defaults = [s.name for s in plan.specs if s.default_assignment in _DEFAULT_FOR_KIND[kind]]
                if defaults:
                    worker.specs = defaults
                    notes.append(P.FidelityNote(where, "no access specs assigned; it gets the specs whose default "
                                                       "assignment is ALL" + (" or DISK" if kind == "disk" else "")
                                                       + ": " + ", ".join(repr(n) for n in defaults)))
            for t in w.targets or []:
                is_net = t.type.upper().startswith("NETWORK")
                partner = t.partner_manager[1] if t.partner_manager else None
                worker.targets.append(P.Target(name=t.name, kind="network" if is_net else "disk",
                                               partner_manager=partner))
            mgr.workers.append(worker)
        plan.managers.append(mgr)
    return plan
