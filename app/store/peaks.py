"""Each series' peaks per 10 seconds, kept when a step ends, so a long run's charts read a few hundred
rows per series instead of every sample.

A peak row holds, for one series and one bin of ``PEAK_BIN_S`` seconds, the smallest and largest value
of each charted number (``PEAK_FIELDS``) in both windows (i_: each interval, w_: since the step
started), and the times of the bin's first and last samples: what a chart's peak decimation keeps
(spikes stay visible). Derived from the samples, which stay the record.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

import numpy as np

from app.model.metrics import MB

PEAK_BIN_S = 10.0
# The charted numbers, in this order: IOPS, MB/s, mean latency ms, max latency ms, p99 latency ms.
PEAK_FIELDS = ("iops", "mbps", "lat_mean_ms", "lat_max_ms", "p99_ms")
WINDOW_PREFIXES = ("i_", "w_")


def field_sql(p: str) -> list[str]:
    """SQL for the PEAK_FIELDS of one window (prefix i_ or w_) of a samples row, computed as
    Metrics computes them (the same double arithmetic). The whole window keeps no histograms: no p99."""
    return [
        f"{p}read_iops + {p}write_iops",
        f"({p}read_bps + {p}write_bps) / {MB}.0",
        f"CASE WHEN {p}read_lat_n + {p}write_lat_n > 0 THEN ({p}read_lat_sum_ns + {p}write_lat_sum_ns) / "
        f"({p}read_lat_n + {p}write_lat_n) / 1e6 ELSE 0.0 END",
        f"max({p}read_lat_max_ns, {p}write_lat_max_ns) / 1e6",
        "i_p99_ns / 1e6" if p == "i_" else "NULL",
    ]


def _columns() -> list[str]:
    return [f"{p}{edge}_{f}" for p in WINDOW_PREFIXES for edge in ("lo", "hi") for f in PEAK_FIELDS]


PEAK_COLUMNS: tuple[str, ...] = tuple(_columns())
CREATE_PEAKS = (
    "CREATE TABLE sample_peaks (\n"
    "    series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,\n"
    "    bin       INTEGER NOT NULL,              -- t // PEAK_BIN_S\n"
    "    t_lo      REAL NOT NULL,                 -- the bin's first and last samples\n"
    "    t_hi      REAL NOT NULL,\n    "
    + ",\n    ".join(f"{c} REAL" for c in PEAK_COLUMNS)
    + ",\n    PRIMARY KEY (series_id, bin)\n) WITHOUT ROWID"
)


def peak_select(where: str, width: float = PEAK_BIN_S) -> str:
    """SELECT series_id, bin, t_lo, t_hi, <PEAK_COLUMNS> over the samples rows matching ``where``."""
    aggs = [f"{agg}({e})" for p in WINDOW_PREFIXES for agg in ("min", "max") for e in field_sql(p)]
    return (
        f"SELECT series_id, CAST(t / {width!r} AS INTEGER) AS bin, min(t), max(t), {', '.join(aggs)} "
        f"FROM samples WHERE {where} GROUP BY series_id, bin"
    )


def keep_peaks_of_rows(conn: sqlite3.Connection, step_id: int) -> None:
    """Compute the peaks of a step's series from rows of ``samples`` (database version 3's layout, used
    while migrating to it)."""
    own = "SELECT id FROM series WHERE step_id = ? AND same_as IS NULL"
    conn.execute(f"DELETE FROM sample_peaks WHERE series_id IN ({own})", (step_id,))
    conn.execute(
        f"INSERT INTO sample_peaks (series_id, bin, t_lo, t_hi, {', '.join(PEAK_COLUMNS)}) "
        + peak_select(f"series_id IN ({own})"),
        (step_id,),
    )


def field_arrays(cols: Mapping[str, np.ndarray], p: str) -> np.ndarray:
    """``field_sql`` on arrays of samples columns: the PEAK_FIELDS of window ``p`` as rows of a
    [fields, samples] float64 array (NaN where SQL gives NULL), with the same double arithmetic."""
    n = cols[p + "read_lat_n"] + cols[p + "write_lat_n"]
    lat_sum = cols[p + "read_lat_sum_ns"] + cols[p + "write_lat_sum_ns"]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(n > 0, lat_sum / np.where(n > 0, n, 1) / 1e6, 0.0)
    return np.array(
        [
            cols[p + "read_iops"] + cols[p + "write_iops"],
            (cols[p + "read_bps"] + cols[p + "write_bps"]) / float(MB),
            mean,
            np.maximum(cols[p + "read_lat_max_ns"], cols[p + "write_lat_max_ns"]) / 1e6,
            cols["i_p99_ns"] / 1e6 if p == "i_" else np.full(len(n), np.nan),
        ],
        dtype=np.float64,
    ).reshape(len(PEAK_FIELDS), len(n))


def bin_peaks(t: np.ndarray, ys: np.ndarray, bins: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per run of equal ``bins`` (t ascending): (bin, first t, last t, lowest ys, highest ys), as SQL's
    GROUP BY with min and max (NULLs, here NaN, left out)."""
    if not len(t):
        empty = np.empty((len(ys), 0))
        return bins[:0], t[:0], t[:0], empty, empty
    starts = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]])
    ends = np.r_[starts[1:], len(t)] - 1
    with np.errstate(invalid="ignore"):
        lo = np.fmin.reduceat(ys, starts, axis=1)
        hi = np.fmax.reduceat(ys, starts, axis=1)
    return bins[starts], t[starts], t[ends], lo, hi
