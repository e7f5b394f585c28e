"""What a report states about each run (Qt-free): tool and versions, hosts, targets, direct I/O, times,
plan hash, and the exact fio job files - so every number can be audited and the test reproduced."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.analysis.iometer_import import is_iometer_run
from app.report.tables import Cell, Column, Row, Table, run_label
from app.store.records import Run


@dataclass
class JobFile:
    title: str  # e.g. "Step 1 (Max Throughput-100%Read), manager PB-W2K3-04"
    text: str


def _when(iso: str | None) -> str:
    return iso[:19].replace("T", " ") + " UTC" if iso else "\u2013"


def job_options(run: Run, option: str) -> set[str]:
    """Every value a global or job option takes in the run's job files (e.g. direct, ioengine)."""
    pattern = re.compile(rf"^\s*{re.escape(option)}\s*=\s*(.+?)\s*$", re.MULTILINE)
    return {m.group(1) for s in run.steps for o in s.outputs.values() if o.job_text
            for m in pattern.finditer(o.job_text)}


def direct_io(run: Run) -> str:
    values = job_options(run, "direct")
    if values:
        return {frozenset({"1"}): "yes (direct=1)", frozenset({"0"}): "no (buffered, direct=0)"}.get(
            frozenset(values), "mixed: direct=" + "/".join(sorted(values)))
    flags = {t.details.get("direct") for t in run.targets if "direct" in t.details}
    return "yes" if flags == {True} else "no" if flags == {False} else "not recorded"


def facts_table(run: Run) -> Table:
    rows: list[tuple[str, str]] = [("Run", run_label(run)), ("Status", run.status),
                                   ("Started", _when(run.started)), ("Ended", _when(run.ended)),
                                   ("Plan", run.plan_name or "\u2013"), ("Plan SHA-256", run.plan_sha256)]
    if run.tags:
        rows.append(("Tags", ", ".join(run.tags)))
    if run.notes:
        rows.append(("Notes", run.notes))
    if is_iometer_run(run):
        rows.append(("Measured with", f"Iometer {run.host.get('tool_version', '')} (imported from "
                                      f"{run.host.get('imported_from', 'a results.csv')})"))
    else:
        h = run.host
        rows.append(("Measured with", ", ".join(f"fio {v}" for v in run.fio_versions) or "fio (version unknown)"))
        rows.append(("Fiometer host", f"{h.get('hostname', '?')}: {h.get('os', '?')}, {h.get('cpus', '?')} CPUs, "
                                      f"Fiometer {h.get('fiometer', '?')}"))
        engines = job_options(run, "ioengine")
        if engines:
            rows.append(("I/O engine", ", ".join(sorted(engines))))
    for m in run.managers:
        where = "this machine" if m.address in ("", "local") else m.address
        extra = ", ".join(x for x in (m.os, f"fio {m.fio_version}" if m.fio_version else "") if x)
        rows.append((f"Manager {m.name}", where + (f" ({extra})" if extra else "")))
    names = {(w.manager, w.key): w.name for w in run.workers}
    for t in run.targets:
        who = f"{t.manager} / {names.get((t.manager, t.worker), t.worker)}"
        rows.append((f"Target {t.name}", f"{t.path or t.name} ({who})"))
    rows.append(("Direct I/O", direct_io(run)))
    times = sorted({(s.run_s, s.ramp_s) for s in run.steps})
    rows.append(("Run time per step", "; ".join(f"{r:g} s" + (f" after {ramp:g} s ramp-up" if ramp else
                                                               ", no ramp-up") for r, ramp in times) or "\u2013"))
    rows.append(("Steps", f"{len(run.steps)} ({sum(1 for s in run.steps if s.status == 'complete')} complete)"))
    table_rows = [Row([Cell(k, k), Cell(v, v)]) for k, v in rows]
    return Table(f"facts-{run.id}", f"{run_label(run)} \u2014 run facts", [Column("Fact"), Column("Value")],
                 table_rows)


def job_files(run: Run) -> list[JobFile]:
    out = []
    for s in run.steps:
        for manager, o in sorted(s.outputs.items()):
            if o.job_text:
                out.append(JobFile(f"Step {s.index + 1} ({s.spec_name}), manager {manager}", o.job_text.rstrip()))
    return out
