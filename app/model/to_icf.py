"""A plan as an Iometer 1.1.0 configuration document (for ``icf_import.write``): the inverse of
``from_icf`` for everything Iometer can hold. What it cannot hold is returned as notes."""

from __future__ import annotations

import icf_import
from app.model import plan as P
from icf_import.lexer import extract_token, first_non_token

ENCODING = "cp1252"  # Iometer writes and reads the Windows ANSI code page

ICF_VERSION = "1.1.0"
WORKER_TYPES = {"disk": "DISK", "network_tcp": "NETWORK,TCP", "network_vi": "NETWORK,VI"}
# Iometer 1.1.0's default bar charts (PageDisplay.cpp), so the file opens the way Iometer shows it.
DEFAULT_CHARTS = (
    "Total I/Os per Second",
    "Total MBs per Second (Decimal)",
    "Average I/O Response Time (ms)",
    "Maximum I/O Response Time (ms)",
    "% CPU Utilization (total)",
    "Total Error Count",
)


def plan_to_icf(plan: P.Plan) -> tuple[icf_import.IcfDocument, list[str]]:
    """(document, notes): notes say what the .icf cannot keep (file paths of targets, hosts)."""
    s = plan.setup
    notes: list[str] = []
    h, rest = divmod(s.run_time, 3600)
    setup = icf_import.TestSetup(
        description=s.description,
        run_time=(h, rest // 60, rest % 60),
        ramp_up=s.ramp_up,
        record_results=s.record_results,
        test_type=s.test_type,
        disk_workers_to_spawn=s.iometer.disk_workers_to_spawn,
        network_workers_to_spawn=s.iometer.network_workers_to_spawn,
        worker_cycling=icf_import.Cycling(
            s.worker_cycling.start, s.worker_cycling.step, s.worker_cycling.step_type
        ),
        disk_cycling=icf_import.Cycling(
            s.target_cycling.start, s.target_cycling.step, s.target_cycling.step_type
        ),
        queue_depth_cycling=icf_import.QueueDepthCycling(
            s.queue_depth_cycling.start,
            s.queue_depth_cycling.end,
            s.queue_depth_cycling.step,
            s.queue_depth_cycling.step_type,
        ),
    )
    charts = list(s.iometer.bar_charts[: len(DEFAULT_CHARTS)]) or list(DEFAULT_CHARTS)
    display = icf_import.ResultsDisplay(
        record_last_update=s.iometer.record_last_update,
        update_frequency=s.update_frequency,
        update_type=s.update_type,
        bar_charts=[icf_import.BarChart(i + 1, name) for i, name in enumerate(charts)],
    )
    specs = [
        icf_import.AccessSpec(
            sp.name,
            sp.default_assignment,
            [
                icf_import.SpecLine(
                    ln.size, ln.of_size, ln.reads, ln.random, ln.delay, ln.burst, ln.align, ln.reply
                )
                for ln in sp.lines
            ],
        )
        for sp in plan.specs
    ]
    managers = []
    ids = {m.name: i + 1 for i, m in enumerate(plan.managers)}
    for m in plan.managers:
        address = m.address_in_file or ("" if m.host in (None, P.LOCAL) else m.host)
        workers = []
        for w in m.workers:
            wtype = WORKER_TYPES.get(w.kind, "DISK")
            targets = []
            for t in w.targets:
                if t.path and t.path != t.name:
                    notes.append(
                        f"{m.name}/{w.name}: target {t.name!r} is placed at {t.path}; the .icf keeps "
                        "only the name"
                    )
                ttype = "DISK" if t.kind == "disk" else wtype
                partner = (ids.get(t.partner_manager, 0), t.partner_manager) if t.partner_manager else None
                targets.append(icf_import.Target(t.name, ttype, partner))
            workers.append(
                icf_import.Worker(
                    name=w.name,
                    type=wtype,
                    queue_depth=w.queue_depth,
                    test_connection_rate=w.test_connection_rate,
                    transactions_per_connection=w.transactions_per_connection,
                    use_fixed_seed=w.fixed_seed is not None,
                    fixed_seed=w.fixed_seed or 0,
                    disk_max_size=w.max_size if wtype == "DISK" else None,
                    disk_start_sector=w.start_sector if wtype == "DISK" else None,
                    data_pattern=w.data_pattern,
                    assigned_specs=list(w.specs),
                    targets=targets,
                )
            )
        if m.host not in (None, P.LOCAL) and not m.address_in_file:
            notes.append(
                f"manager {m.name!r}: written with address {m.host}; Iometer would expect Dynamo there"
            )
        managers.append(icf_import.Manager(ids[m.name], m.name, address, workers))
    doc = icf_import.IcfDocument(
        version=ICF_VERSION, test_setup=setup, results_display=display, access_specs=specs, managers=managers
    )
    return doc, notes


def _outside_cp1252(text: str) -> str:
    bad = []
    for ch in dict.fromkeys(text):
        try:
            ch.encode(ENCODING)
        except UnicodeEncodeError:
            bad.append(ch)
    return "".join(bad)


def unwritable(plan: P.Plan) -> list[str]:
    """What an .icf of this plan cannot hold as it is, so Iometer would read something else: characters
    outside Windows-1252 (they would become '?') and access specification names Iometer cuts short when it
    reads them back (it keeps a name up to the first character outside its token set: a comma, '|', a TAB,
    any non-ASCII letter ...). Empty when the plan can be saved faithfully."""
    texts = [("test description", plan.setup.description)]
    texts += [(f"access spec {s.name!r}", s.name) for s in plan.specs]
    for m in plan.managers:
        texts.append((f"manager {m.name!r}", m.name))
        for w in m.workers:
            texts.append((f"worker {m.name}/{w.name!r}", w.name))
            texts += [(f"target {t.name!r} of {m.name}/{w.name}", t.name) for t in w.targets]
    out = []
    for what, text in texts:
        bad = _outside_cp1252(text)
        if bad:
            out.append(
                f"{what}: {' '.join(repr(c) for c in bad)} cannot be written in an .icf (Windows-1252); "
                "Iometer would read '?' there - change it"
            )
    for s in plan.specs:
        token, _ = extract_token(s.name, spaces=True)
        if token != s.name and not _outside_cp1252(s.name):
            cut = first_non_token(s.name)
            out.append(
                f"access spec {s.name!r}: Iometer reads the name only up to {cut!r}, as {token!r}, so "
                "workers assigned it would lose it - rename it"
            )
    return out
