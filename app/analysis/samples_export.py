"""Every per-second sample of a stored run in long form (one row per step, time and level), so anyone can
plot or check the numbers themselves: ``fiometer export RUN --samples FILE.csv``.

The file is made a stretch of each step at a time (``samples_csv_chunks``): memory stays flat however
long the run is."""

from __future__ import annotations

import csv
import heapq
import io
from collections.abc import Iterator

from app.analysis.csv_safe import safe_cell
from app.store.database import Store
from app.store.queries import interval_metrics, sample_rows, step_samples_by_stretch
from app.store.records import Run

COLUMNS = (
    "run",
    "step",
    "spec",
    "t_s",
    "interval_s",
    "level",
    "manager",
    "name",
    "iops",
    "read_iops",
    "write_iops",
    "mbps",
    "read_mbps",
    "write_mbps",
    "lat_mean_ms",
    "read_lat_mean_ms",
    "write_lat_mean_ms",
    "lat_max_ms",
    "errors",
)
LEVEL_ORDER = {"all": 0, "manager": 1, "worker": 2, "target": 3}
STRETCH_S = 300.0  # seconds of a step read and written at a time
BOM = "\ufeff"  # the file starts with one, so that spreadsheet programs read it as UTF-8


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


def _series_lines(
    rank: int, level: str, manager: str | None, key: str, cols: list
) -> Iterator[tuple[float, int, tuple]]:
    for row in sample_rows(cols):
        yield row[0], rank, (level, manager, key, row)


def samples_csv_chunks(store: Store, run: Run, stretch_s: float = STRETCH_S) -> Iterator[str]:
    """The CSV text piece by piece (the header first, then a stretch of a step at a time): the interval
    window of every series, ordered by step, time, then level (ALL first), manager and key. Each
    series' samples are merged in that order as they are made (nothing but the stretch's arrays held)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(COLUMNS)
    yield buf.getvalue()
    names = display_names(run)
    for s in run.steps:
        for stretch in step_samples_by_stretch(store, s.id, stretch_s):
            buf.seek(0)
            buf.truncate()
            order = sorted(
                range(len(stretch)),
                key=lambda j: (LEVEL_ORDER.get(stretch[j][0], 9), stretch[j][1] or "", stretch[j][2]),
            )
            lines = heapq.merge(
                *(_series_lines(rank, *stretch[j]) for rank, j in enumerate(order)), key=lambda line: line[:2]
            )
            for t, _rank, (level, manager, key, row) in lines:
                m = interval_metrics(row)
                w.writerow(
                    [
                        safe_cell(c)
                        for c in (
                            run.id,
                            s.index + 1,
                            s.spec_name,
                            _n(t),
                            _n(m.seconds),
                            level,
                            manager or "",
                            names.get((level, manager, key), key),
                            _n(m.iops),
                            _n(m.read_iops),
                            _n(m.write_iops),
                            _n(m.mbps),
                            _n(m.read_mbps),
                            _n(m.write_mbps),
                            _n(m.lat_mean_ms),
                            _n(m.read_lat_mean_ms),
                            _n(m.write_lat_mean_ms),
                            _n(m.lat_max_ms),
                            m.errors,
                        )
                    ]
                )
                if buf.tell() > 1 << 20:
                    yield buf.getvalue()
                    buf.seek(0)
                    buf.truncate()
            yield buf.getvalue()


def samples_csv_bytes(store: Store, run: Run, stretch_s: float = STRETCH_S) -> Iterator[bytes]:
    """``samples_csv_chunks`` as the file's bytes: UTF-8 with a byte order mark."""
    yield BOM.encode("utf-8")
    for chunk in samples_csv_chunks(store, run, stretch_s):
        yield chunk.encode("utf-8")


def samples_csv(store: Store, run: Run) -> str:
    """The whole CSV as one string (a short run; a long one is better written with ``samples_csv_bytes``)."""
    return "".join(samples_csv_chunks(store, run))
