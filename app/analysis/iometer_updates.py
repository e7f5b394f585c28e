"""Iometer's per-update log as samples over time, so an old Iometer run charts beside a new one.

In the log (reference/iometer.md §3.6) every update writes one WORKER row per *target* of each active
worker, in manager, worker, target order, each with the worker's name and that target's numbers since the
previous update, and the time it was written. Rows are taken update by update: an update holds one row per
target the test's worker averages announce (their ``# Disks``). A target's row is its interval sample; a
worker's is the sum of its targets', ALL's (and the one manager's: the log names none) the sum of all. The
whole-test window of each sample is the sum of the intervals so far. Samples keep no latency histogram:
Iometer's 21 coarse bins give no percentile worth charting (the final results keep them, for export).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from app.analysis.iometer_results_reader import ResultRow
from app.model.metrics import Metrics
from app.store.records import SampleRow


@dataclass
class Slot:
    """A target the log has rows for: its worker's name, keys, and its final sum."""

    worker_name: str
    worker: str  # worker key
    target: str  # target key
    total: Metrics = field(default_factory=Metrics)


def _grow(prev: Metrics | None, interval: Metrics, t: float) -> Metrics:
    """The whole window up to t: the counts so far, rates over t."""
    whole = Metrics()
    if prev is not None:
        whole.add_counts(prev)
    whole.add_counts(interval)
    whole.seconds = t
    if t > 0:
        whole.read_iops, whole.write_iops = whole.read_ios / t, whole.write_ios / t
        whole.read_bps, whole.write_bps = whole.read_bytes / t, whole.write_bytes / t
    return whole


def update_samples(
    updates: list[ResultRow], slots: list[Slot], manager: str, started: datetime, metrics_of
) -> list[list[SampleRow]]:
    """One list of samples per update (target, worker, manager and ALL levels). ``metrics_of`` reads a
    row's numbers (``iometer_import.row_metrics``). Each slot's ``total`` gets the sum of its intervals."""
    if not slots:
        return []
    out: list[list[SampleRow]] = []
    wholes: dict[tuple[str, str], Metrics] = {}
    prev_t = 0.0
    for start in range(0, len(updates), len(slots)):
        chunk = updates[start : start + len(slots)]
        free = list(slots)
        placed: list[tuple[Slot, ResultRow]] = []
        for row in chunk:
            slot = next((s for s in free if s.worker_name == row.name), None)
            if slot is None:  # a worker the test's averages do not list: not this layout, stop here
                return out
            free.remove(slot)
            placed.append((slot, row))
        at = max(r.at for _, r in placed if r.at is not None)
        t = (at - started).total_seconds()
        if t <= prev_t:
            continue
        dt, prev_t = t - prev_t, t
        by_worker: dict[str, list[Metrics]] = {}
        levels: list[tuple[str, str | None, str, Metrics]] = []
        for slot, row in placed:
            m = metrics_of(row)
            m.seconds = dt
            m.read_hist, m.write_hist = {}, {}  # Iometer's 21 coarse bins give no percentile worth charting
            slot.total.add_counts(m)
            by_worker.setdefault(slot.worker, []).append(m)
            levels.append(("target", manager, slot.target, m))
        workers = {key: Metrics.combine(parts) for key, parts in by_worker.items()}
        levels += [("worker", manager, key, m) for key, m in workers.items()]
        everything = Metrics.combine(workers.values())
        levels += [
            ("manager", manager, manager, everything),
            ("all", None, "ALL", Metrics.combine([everything])),
        ]
        samples = []
        for level, mgr, key, m in levels:
            wholes[(level, key)] = whole = _grow(wholes.get((level, key)), m, t)
            samples.append(SampleRow(mgr, level, key, t, m, whole))
        out.append(samples)
    return out
