"""Every per-second sample of a stored run in long form (one row per step, time and level), so anyone can
plot or check the numbers themselves: ``fiometer export RUN --samples FILE.csv``."""

from __future__ import annotations

import csv
import io

from app.analysis.csv_safe import safe_cell
from app.store.database import Store
from app.store.queries import step_samples, step_series
from app.store.records import Run

COLUMNS = ("run", "step", "spec", "t_s", "interval_s", "level", "manager", "name", "iops", "read_iops",
           "write_iops", "mbps", "read_mbps", "write_mbps", "lat_mean_ms", "read_lat_mean_ms", "write_lat_mean_ms",
           "lat_max_ms", "errors")
LEVEL_ORDER = {"all": 0, "manager": 1, "worker": 2, "target": 3}


def display_names(run: Run) -> dict[tuple[str, str | None, str], str]:
    """(level, manager, key) -> the name the plan gives a worker or target (keys elsewhere are names)."""
    out: dict[tuple[str, str | None, str], str] = {}
    for w in run.workers:
        out[("worker", w.manager, w.key)] = w.name or w.key
    for t in run.targets:
        out[("target", t.manager, t.key)] = t.name or t.key
    return out


def _n(v: float) -> float:
    return float(f"{v:.10g}")


def samples_csv(store: Store, run: Run) -> str:
    """The interval window of every series, ordered by step, time, then level (ALL first)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(COLUMNS)
    names = display_names(run)
    for s in run.steps:
        rows = []
        for level, manager, key in step_series(store, s.id):
            for t, m in step_samples(store, s.id, level, key, manager=manager):
                rows.append((t, LEVEL_ORDER.get(level, 9), manager or "", key, [
                    run.id, s.index + 1, s.spec_name, _n(t), _n(m.seconds), level, manager or "",
                    names.get((level, manager, key), key), _n(m.iops), _n(m.read_iops), _n(m.write_iops),
                    _n(m.mbps), _n(m.read_mbps), _n(m.write_mbps), _n(m.lat_mean_ms), _n(m.read_lat_mean_ms),
                    _n(m.write_lat_mean_ms), _n(m.lat_max_ms), m.errors]))
        for *_, cells in sorted(rows, key=lambda r: r[:4]):
            w.writerow([safe_cell(c) for c in cells])
    return buf.getvalue()
