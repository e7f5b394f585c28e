"""A stored run as Iometer's results.csv (rows ALL, then per manager MANAGER, WORKER, DISK)."""

from __future__ import annotations

from datetime import datetime

from app.analysis.iometer_csv import AMBIGUOUS, CsvRow, CsvStep, write_results_csv
from app.analysis.stored_plan import stored_plan
from app.model.plan import Plan
from app.store.records import ResultRow, Run, StepInfo


def _when(iso: str | None) -> datetime:
    """Iometer writes local time."""
    if not iso:
        return datetime.now()
    return datetime.fromisoformat(iso).astimezone().replace(tzinfo=None)


def _common(values: list[int]) -> int:
    return values[0] if values and all(v == values[0] for v in values) else AMBIGUOUS


def run_plan(run: Run) -> Plan | None:
    return stored_plan(run)


def _step(run: Run, plan: Plan | None, step: StepInfo) -> CsvStep:
    names = step.spec_name.split(" + ")
    specs = [s for n in names if plan and (s := plan.spec(n)) is not None]
    spec = step.spec_name if len(names) == 1 else ""
    workers = {(w.manager, w.key): w for w in run.workers}
    targets = {(t.manager, t.key): t for t in run.targets}
    by_level: dict[str, list[ResultRow]] = {}
    for r in step.results:
        by_level.setdefault(r.level, []).append(r)

    def detail(manager: str, worker_key: str, field: str) -> int:
        w = workers.get((manager, worker_key))
        return int(w.details.get(field, AMBIGUOUS)) if w else AMBIGUOUS

    def qd(manager: str, worker_key: str) -> int:
        return (
            step.queue_depth if step.queue_depth is not None else detail(manager, worker_key, "queue_depth")
        )

    rows: list[CsvRow] = []
    order = {m.name: i for i, m in enumerate(run.managers)}
    managers = sorted(by_level.get("manager", []), key=lambda r: order.get(r.key, len(order)))
    worker_rows = by_level.get("worker", [])
    target_rows = by_level.get("target", [])
    wkeys = [(r.manager or "", r.key) for r in worker_rows]
    for r in by_level.get("all", []):
        rows.append(
            CsvRow(
                "ALL",
                "All",
                r.metrics,
                spec,
                len(managers),
                len(worker_rows),
                len(target_rows),
                _common([detail(m, k, "start_sector") for m, k in wkeys]),
                _common([detail(m, k, "max_size") for m, k in wkeys]),
                _common([qd(m, k) for m, k in wkeys]),
            )
        )
    for mr in managers:
        mname = mr.key
        mine = [w for w in worker_rows if w.manager == mname]
        my_targets = [t for t in target_rows if t.manager == mname]
        rows.append(
            CsvRow(
                "MANAGER",
                mname,
                mr.metrics,
                spec,
                None,
                len(mine),
                len(my_targets),
                _common([detail(mname, w.key, "start_sector") for w in mine]),
                _common([detail(mname, w.key, "max_size") for w in mine]),
                _common([qd(mname, w.key) for w in mine]),
            )
        )
        for wr in mine:
            w = workers.get((mname, wr.key))
            disks = [t for t in my_targets if t.key.startswith(wr.key + ".")]
            sector_cols = (
                detail(mname, wr.key, "start_sector"),
                detail(mname, wr.key, "max_size"),
                qd(mname, wr.key),
            )
            rows.append(
                CsvRow(
                    "WORKER", w.name if w else wr.key, wr.metrics, spec, None, None, len(disks), *sector_cols
                )
            )
            for tr in disks:
                t = targets.get((mname, tr.key))
                rows.append(
                    CsvRow("DISK", t.name if t else tr.key, tr.metrics, "", None, None, None, *sector_cols)
                )
    return CsvStep(specs, _when(step.started), _when(step.ended), rows)


def run_results_csv(run: Run) -> str:
    plan = run_plan(run)
    test_type = plan.setup.test_type if plan else "NORMAL"
    steps = [_step(run, plan, s) for s in run.steps if s.results]
    return write_results_csv(
        test_type, run.description or run.name, _when(run.started), steps, completed=run.status == "complete"
    )


def run_results_csv_bytes(run: Run) -> bytes:
    """The file's bytes: Iometer writes results.csv in the Windows ANSI code page."""
    return run_results_csv(run).encode("cp1252", errors="replace")
