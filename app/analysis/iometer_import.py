"""Legacy Iometer results into the history: one stored run per series, one step per test.

So a client's old Iometer numbers sit in the same store, and the same comparison tables, as new fio
runs. Numbers are kept so that ``fiometer export --iometer-csv`` writes the same IOps, MB/s, response
times, byte and I/O counts and latency bins back (``export_run``): where a value can be derived more
precisely (from raw timer ticks or byte counts) the derivation is used only if it prints exactly as the
file's own cell does. Iometer's 21 latency bins become a histogram with each bin's count at the bin's
lower edge (kept in the read histogram: Iometer does not split them by direction); percentiles from it
are only bin edges, so reports leave p99 out for imported runs (``is_iometer_run``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from app.analysis.iometer_csv import BIN_EDGES_NS, TEST_TYPE_INDEX
from app.analysis.iometer_results_reader import (
    TARGET_KINDS,
    ResultRow,
    ResultsFileError,
    ResultsSeries,
    ResultsTest,
    read_results_file,
)
from app.analysis.iometer_updates import Slot, update_samples
from app.engine.jobs.jobfile import target_key, worker_key
from app.model import planfile
from app.model.metrics import MB, MIB, Metrics
from app.model.plan import AccessSpec, Manager, Plan, Target, TestSetup, Worker
from app.model.spec_words import spec_text
from app.store.database import Store
from app.store.recorder import Recorder
from app.store.records import ManagerInfo, Run, SampleRow, TargetInfo, WorkerInfo
from app.store.records import ResultRow as StoredRow

IMPORT_TAG = "iometer"
LOG_MANAGER = "Manager 1"  # a per-update log names no manager
TOOL = "Iometer"
BIN_COLUMNS = (
    "0 to 50 us",
    "50 to 100 us",
    "100 to 200 us",
    "200 to 500 us",
    "0.5 to 1 ms",
    "1 to 2 ms",
    "2 to 5 ms",
    "5 to 10 ms",
    "10 to 15 ms",
    "15 to 20 ms",
    "20 to 30 ms",
    "30 to 50 ms",
    "50 to 100 ms",
    "100 to 200 ms",
    "200 to 500 ms",
    "0.5 to 1 s",
    "1 to 2 s",
    "2 to 4.7 s",
    "4.7 to 5 s",
    "5 to 10 s",
    ">= 10 s",
)
BIN_LOWER_NS = [0, *BIN_EDGES_NS]
TEST_TYPES = {v: k for k, v in TEST_TYPE_INDEX.items()}


def is_iometer_run(run: Run) -> bool:
    """A run imported from an Iometer results.csv (its latency histogram is Iometer's coarse bins)."""
    return run.host.get("tool") == TOOL


def imported_file(run: Run) -> str | None:
    """Which results file an imported run came from (its content's SHA-256, or its name for runs imported
    before that was kept); None for a run Fiometer measured."""
    if not is_iometer_run(run):
        return None
    return run.host.get("imported_sha256") or run.host.get("imported_from") or ""


@dataclass
class ImportedRun:
    run_id: int
    description: str
    tests: int
    status: str


def _prints_as(value: float, cell: str) -> bool:
    try:
        return f"{value:.6f}" == f"{float(cell):.6f}"
    except ValueError:
        return False


def _latency_sum(row: ResultRow, d: str, n: int, speed: float, children: list[Metrics] | None) -> float:
    """Sum of response times (ns) over n I/Os that prints as the row's average: from raw timer ticks or the
    children's sums where those agree with the printed average, else the average times n."""
    cell = row.text(f"average {d} response time")
    if n <= 0:
        return 0.0
    candidates = []
    raw = _num(row, f"total raw {d} response time")
    if raw and speed:
        candidates.append(raw * 1e9 / speed)
    if children:
        candidates.append(sum(getattr(c, f"{d}_lat_sum_ns") for c in children))
    exact = [v for v in candidates if _prints_as(v / n / 1e6, cell)]
    return exact[0] if exact else _num(row, f"average {d} response time") * n * 1e6


def _num(row: ResultRow, column: str, default: float = 0.0) -> float:
    try:
        v = row.number(column)
    except ValueError:
        raise ResultsFileError(
            f"line {row.line}: {row.kind} {row.name!r}: column {column!r} holds "
            f"{row.text(column)!r}, not a number"
        ) from None
    return default if v is None else v


def _rate(row: ResultRow, d: str, nbytes: int, seconds: float, children: list[Metrics] | None) -> float:
    """Bytes per second that print as both of the row's MB/s cells (decimal and binary) where possible:
    Iometer computes a leaf's rate from bytes and time, and sums rates up the tree."""
    dec, binary, old = f"{d} mbps (decimal)", f"{d} mibps (binary)", f"{d} mbps"
    candidates = []
    if seconds > 0:
        candidates.append(nbytes / seconds)
    if children:
        candidates.append(sum(getattr(c, f"{d}_bps") for c in children))
    if dec not in row.cells:  # before 1.1.0: one "MBps" column, in binary megabytes
        return next((v for v in candidates if _prints_as(v / MIB, row.text(old))), _num(row, old) * MIB)
    both = [
        v for v in candidates if _prints_as(v / MB, row.text(dec)) and _prints_as(v / MIB, row.text(binary))
    ]
    return both[0] if both else _num(row, dec) * MB


def row_metrics(row: ResultRow, children: list[Metrics] | None = None) -> Metrics:
    """One row's numbers. ``children`` (a manager's workers, ALL's managers) give the roll-up sums Iometer
    itself adds up."""
    m = Metrics()
    m.read_ios, m.write_ios = int(_num(row, "read i/os")), int(_num(row, "write i/os"))
    m.read_bytes, m.write_bytes = int(_num(row, "bytes read")), int(_num(row, "bytes written"))
    m.read_iops, m.write_iops = _num(row, "read iops"), _num(row, "write iops")
    m.errors = int(_num(row, "errors"))
    ticks, speed = _num(row, "total raw run time"), _num(row, "processor speed")
    iops = _num(row, "iops")
    if ticks > 0 and speed > 0:
        m.seconds = ticks / speed
    elif children:
        m.seconds = max(c.seconds for c in children)
    elif iops > 0:
        m.seconds = (m.read_ios + m.write_ios) / iops
    for d in ("read", "write"):
        setattr(m, f"{d}_bps", _rate(row, d, getattr(m, f"{d}_bytes"), m.seconds, children))
        n = getattr(m, f"{d}_ios")
        sum_ns = _latency_sum(row, d, n, speed, children)
        setattr(m, f"{d}_lat_sum_ns", sum_ns)
        setattr(m, f"{d}_lat_n", n)
        setattr(m, f"{d}_lat_max_ns", _num(row, f"maximum {d} response time") * 1e6)
    if not m.read_lat_max_ns and not m.write_lat_max_ns:  # layouts without the split maxima
        overall = _num(row, "maximum response time") * 1e6
        if m.read_ios >= m.write_ios:
            m.read_lat_max_ns = overall
        else:
            m.write_lat_max_ns = overall
    for col, lower in zip(BIN_COLUMNS, BIN_LOWER_NS, strict=True):
        count = int(_num(row, col))
        if count:
            m.read_hist[lower] = count
    return m


@dataclass
class _Level:
    """Run-wide identity of managers, workers and targets, in first-seen order."""

    managers: list[str] = field(default_factory=list)
    workers: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # manager -> [(name, occurrence)]
    targets: dict[tuple[str, str], list[tuple[str, int]]] = field(default_factory=dict)  # (mgr, wkey) -> ...
    worker_rows: dict[tuple[str, str], ResultRow] = field(default_factory=dict)

    @staticmethod
    def _index(names: list[tuple[str, int]], name: str, seen: dict[str, int]) -> int:
        occurrence = seen.get(name, 0)
        seen[name] = occurrence + 1
        if (name, occurrence) not in names:
            names.append((name, occurrence))
        return names.index((name, occurrence))


@dataclass
class _Node:
    row: ResultRow | None  # None: the one manager of a per-update log, which names none
    level: str
    manager: str | None
    key: str
    children: list[_Node] = field(default_factory=list)


def _test_rows(test: ResultsTest, level: _Level) -> list[StoredRow]:
    return _test_results(test, level, None)[0]


def _tree(test: ResultsTest, level: _Level, per_update: bool) -> tuple[ResultRow | None, list[_Node]]:
    """A test's ALL row, and its managers with their workers and targets in file order (a per-update log's
    workers under one manager of its own)."""
    all_row: ResultRow | None = None
    managers: list[_Node] = []
    worker: _Node | None = None
    worker_seen: dict[str, int] = {}
    target_seen: dict[str, int] = {}
    mgr_seen: dict[str, int] = {}
    for row in test.rows:
        if row.kind == "ALL":
            all_row = row
        elif row.kind == "MANAGER":
            occurrence = mgr_seen.get(row.name, 0)
            mgr_seen[row.name] = occurrence + 1
            name = row.name if occurrence == 0 else f"{row.name} ({occurrence + 1})"
            if name not in level.managers:
                level.managers.append(name)
            managers.append(_Node(row, "manager", name, name))
            worker_seen, worker = {}, None
        elif row.kind == "WORKER":
            if not managers and per_update:
                if LOG_MANAGER not in level.managers:
                    level.managers.append(LOG_MANAGER)
                managers.append(_Node(None, "manager", LOG_MANAGER, LOG_MANAGER))
            if not managers:
                raise ResultsFileError(f"line {row.line}: a WORKER row before any MANAGER row")
            mgr = managers[-1].key
            wi = level._index(level.workers.setdefault(mgr, []), row.name, worker_seen)
            level.worker_rows.setdefault((mgr, worker_key(wi)), row)
            worker = _Node(row, "worker", mgr, worker_key(wi))
            managers[-1].children.append(worker)
            target_seen = {}
        elif row.kind in TARGET_KINDS:
            if worker is None:
                raise ResultsFileError(f"line {row.line}: a {row.kind} row before any WORKER row")
            ti = level._index(
                level.targets.setdefault((worker.manager, worker.key), []), row.name, target_seen
            )
            key = target_key(int(worker.key[1:]) - 1, ti)
            worker.children.append(_Node(row, "target", worker.manager, key))
    return all_row, managers


def _test_results(
    test: ResultsTest, level: _Level, started: datetime | None
) -> tuple[list[StoredRow], list[list[SampleRow]]]:
    """A test's rows as stored result rows: ALL, then per manager MANAGER, (WORKER, DISK*)* in file order;
    and for a per-update log its samples (``started``: when the test began; the first update if None)."""
    per_update = bool(test.updates) or any(r.at for r in test.rows)
    all_row, managers = _tree(test, level, per_update)
    if all_row is None:
        raise ResultsFileError(f"line {test.line}: this test has no ALL row")
    slots = _log_targets(managers, level) if per_update else []
    samples: list[list[SampleRow]] = []
    if slots:
        first = min((r.at for r in test.updates if r.at), default=None)
        samples = update_samples(
            test.updates, slots, LOG_MANAGER, started or first or datetime.now(), row_metrics
        )
    totals = {s.target: s.total for s in slots}
    out: list[StoredRow] = []
    manager_metrics = []
    for mnode in managers:
        rows_of_manager: list[StoredRow] = []
        worker_metrics = []
        for wnode in mnode.children:
            w = StoredRow(wnode.manager, "worker", wnode.key, row_metrics(wnode.row))
            if wnode.row is None:
                continue
            targets = [
                StoredRow(
                    t.manager,
                    "target",
                    t.key,
                    row_metrics(t.row)
                    if t.row is not None
                    else _log_target(w.metrics, totals, t.key, len(wnode.children)),
                )
                for t in wnode.children
            ]
            worker_metrics.append(w.metrics)
            rows_of_manager += [w, *targets]
        if mnode.row is None:  # the log's one manager: the same numbers as ALL
            m = StoredRow(mnode.manager, "manager", mnode.key, row_metrics(all_row, worker_metrics or None))
        else:
            m = StoredRow(mnode.manager, "manager", mnode.key, row_metrics(mnode.row, worker_metrics or None))
        manager_metrics.append(m.metrics)
        out += [m, *rows_of_manager]
    return [StoredRow(None, "all", "ALL", row_metrics(all_row, manager_metrics or None)), *out], samples


def _log_targets(managers: list[_Node], level: _Level) -> list[Slot]:
    """The per-update log names no targets: each worker average announces how many it had (# Disks); they
    are named after their worker. Returns them in the order the log writes their rows."""
    slots = []
    for mnode in managers:
        for wnode in mnode.children:
            if wnode.children or wnode.row is None:
                continue
            wi = int(wnode.key[1:]) - 1
            count = max(1, int(_num(wnode.row, "# disks", 1)))
            names = level.targets.setdefault((wnode.manager, wnode.key), [])
            for ti in range(count):
                if ti == len(names):
                    names.append((f"{wnode.row.name} target {ti + 1}", 0))
                key = target_key(wi, ti)
                wnode.children.append(_Node(None, "target", wnode.manager, key))
                slots.append(Slot(wnode.row.name, wnode.key, key))
    return slots


def _log_target(worker: Metrics, totals: dict[str, Metrics], key: str, count: int) -> Metrics:
    """A target's final numbers in a per-update log: its worker's when it is the only one, else the sum of
    its updates over the worker's time."""
    if count == 1 or key not in totals:
        return worker
    m = totals[key]
    m.seconds = worker.seconds
    if m.seconds > 0:
        m.read_iops, m.write_iops = m.read_ios / m.seconds, m.write_ios / m.seconds
        m.read_bps, m.write_bps = m.read_bytes / m.seconds, m.write_bytes / m.seconds
    return m


def _plan(series: ResultsSeries, level: _Level, specs: list[AccessSpec], seconds: float) -> Plan:
    plan = Plan(
        name=series.description or "Iometer results",
        setup=TestSetup(
            description=series.description,
            run_time=round(seconds),
            test_type=TEST_TYPES.get(series.test_type, "NORMAL"),
        ),
        specs=specs,
        source="Iometer results.csv",
    )
    for mname in level.managers:
        manager = Manager(mname, host=None, address_in_file=mname)
        for wi, (wname, _) in enumerate(level.workers.get(mname, [])):
            row = level.worker_rows.get((mname, worker_key(wi)))
            qd, max_size, start = (
                (int(_num(row, c, -1)) for c in ("queue depth", "maximum size", "starting sector"))
                if row
                else (1, 0, 0)
            )
            spec = row.text("access specification name") if row else ""
            manager.workers.append(
                Worker(
                    wname,
                    queue_depth=qd,
                    max_size=max_size,
                    start_sector=start,
                    specs=[spec] if spec else [],
                    targets=[Target(t) for t, _ in level.targets.get((mname, worker_key(wi)), [])],
                )
            )
        plan.managers.append(manager)
    return plan


def _test_specs(test: ResultsTest) -> list[AccessSpec]:
    """The specifications a test ran, from its own 'Access specifications block: those its workers name
    (all of the block where no worker row names one)."""
    used = {r.text("access specification name").casefold() for r in test.rows if r.kind == "WORKER"} - {""}
    return [s for s in test.specs if s.name.casefold() in used] or list(test.specs)


def import_series(
    store: Store, series: ResultsSeries, source: str, tags: Iterable[str] = (IMPORT_TAG,), sha256: str = ""
) -> ImportedRun:
    """Store one series as a run; its tests become steps. ``sha256``: of the file it came from."""
    level = _Level()
    tests = [t for t in series.tests if t.rows]
    results, samples = [], []
    began = series.started
    for t in tests:
        rows, test_samples = _test_results(t, level, began)
        results.append(rows)
        samples.append(test_samples)
        began = t.ended or began
    specs: dict[str, AccessSpec] = {}
    for t in tests:
        for s in t.specs:
            specs.setdefault(s.name.casefold(), s)
    seconds = results[0][0].metrics.seconds if results else 0.0
    plan = _plan(series, level, list(specs.values()), seconds)
    status = {"complete": "complete", "aborted": "stopped"}.get(series.end, "interrupted")
    started = series.started or (tests[0].ended if tests else None)
    rec = Recorder(store)
    host = {"tool": TOOL, "tool_version": series.version, "imported_from": source, "hostname": ""}
    if sha256:
        host["imported_sha256"] = sha256
    run_id = rec.begin_run(
        planfile.to_dict(plan),
        plan_name=plan.name,
        name=plan.name,
        description=series.description,
        tags=tags,
        host=host,
        started=started.astimezone() if started else None,
    )
    rec.add_managers(run_id, [ManagerInfo(m, address=m, os="", fio_version="") for m in level.managers])
    workers, targets = [], []
    for m in plan.managers:
        for wi, w in enumerate(m.workers):
            workers.append(
                WorkerInfo(
                    m.name,
                    worker_key(wi),
                    w.name,
                    {
                        "queue_depth": w.queue_depth,
                        "max_size": w.max_size,
                        "start_sector": w.start_sector,
                        "specs": w.specs,
                        "kind": "disk",
                    },
                )
            )
            targets += [
                TargetInfo(m.name, worker_key(wi), target_key(wi, ti), t.name, "", {})
                for ti, t in enumerate(w.targets)
            ]
    rec.add_workers(run_id, workers)
    rec.add_targets(run_id, targets)
    previous_end = started
    for index, (test, rows, test_samples) in enumerate(zip(tests, results, samples, strict=True)):
        all_row = next(r for r in test.rows if r.kind == "ALL")
        qd = int(_num(all_row, "queue depth", -1))
        spec_name = all_row.text("access specification name") or " + ".join(s.name for s in test.specs)
        step_id = rec.begin_step(
            run_id,
            index,
            spec_name=spec_name,
            spec_text=spec_text(_test_specs(test)),
            queue_depth=qd if qd > 0 else None,
            active_workers=sorted({(r.manager, r.key) for r in rows if r.level == "worker"}),
            active_targets=sorted({(r.manager, r.key) for r in rows if r.level == "target"}),
            ramp_s=0.0,
            run_s=float(round(rows[0].metrics.seconds)),  # the set run time; measured adds ms
            started=previous_end.astimezone() if previous_end else None,
        )
        for update in test_samples:
            rec.add_samples(step_id, update)
        rec.add_step_results(step_id, rows)
        rec.end_step(step_id, "complete", ended=test.ended.astimezone() if test.ended else None)
        previous_end = test.ended or previous_end
    for text in series.errors:
        rec.add_message(run_id, f"Iometer: {text}", level="error")
    rec.end_run(run_id, status, ended=previous_end.astimezone() if previous_end else None)
    return ImportedRun(run_id, series.description, len(tests), status)


def import_results_file(
    store: Store, path: str | Path, tags: Iterable[str] = (IMPORT_TAG,)
) -> list[ImportedRun]:
    """Every series of the file as a run. The whole file is read and checked before anything is stored."""
    series = read_results_file(path)
    name = Path(path).name
    checked = []
    for s in series:
        if not any(t.rows for t in s.tests):
            continue
        level = _Level()
        try:
            for t in s.tests:
                if t.rows:
                    _test_rows(t, level)
        except ResultsFileError as e:
            raise ResultsFileError(f"{path}:{str(e).removeprefix('line ')}") from None
        checked.append(s)
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return [import_series(store, s, name, tags, digest) for s in checked]
