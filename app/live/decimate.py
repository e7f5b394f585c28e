"""Peak decimation of many series at once (numpy only), so a chart draws about two points per pixel
column however long the run: each bin keeps its minimum and maximum, so spikes stay visible."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def clip_indices(x: np.ndarray, x_range: tuple[float, float] | None) -> tuple[int, int]:
    """The slice of sorted ``x`` that covers ``x_range``, one point beyond each side (lines leave the view)."""
    if x_range is None or len(x) == 0:
        return 0, len(x)
    lo = max(int(np.searchsorted(x, x_range[0], side="left")) - 1, 0)
    hi = min(int(np.searchsorted(x, x_range[1], side="right")) + 1, len(x))
    return lo, hi


class PeakGrid:
    """Peak decimation of many rows (series, each with its own x) at once, on fixed bins [x0, x0 + width):
    each row's minimum and maximum per bin, and the x of the bin's first and last point, kept as dense
    arrays [rows, bins]. ``update`` reads only the points that arrived since the last call (those of each
    row's unfinished last bin again), so a live update costs a few numpy operations however many rows.

    A bin holding a NaN (a gap between test steps) is NaN, so the gap survives; ``has`` tells which bins
    hold points at all.
    """

    def __init__(self, x0: float, width: float, bins: int, rows: int, fields: int):
        self.x0, self.bins = x0, bins
        self.bw = width / bins
        self.lo = np.full((rows, fields, bins), np.nan, dtype=np.float32)
        self.hi = np.full((rows, fields, bins), np.nan, dtype=np.float32)
        self.has = np.zeros((rows, bins), dtype=bool)
        self.xf = np.full((rows, bins), np.nan)
        self.xl = np.full((rows, bins), np.nan)
        self.start = np.zeros(rows, dtype=np.int64)  # per row: index of the first point of its last bin

    def update(
        self,
        take: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
        n: np.ndarray,
        first: np.ndarray | None = None,
    ) -> int | None:
        """Add the points [start, n) of every row (from ``first`` instead, if given); ``take(rows, columns)``
        returns their x [p] and values [p, fields]. Returns the first bin that changed (None: nothing did)."""
        start = self.start if first is None else first
        counts = np.maximum(n - start, 0)
        total = int(counts.sum())
        if total == 0:
            return None
        rows = np.repeat(np.arange(len(n)), counts)
        cols = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(start, counts)
        x, v = take(rows, cols)
        b = np.clip(((x - self.x0) // self.bw).astype(np.int64), 0, self.bins - 1)
        key = rows * self.bins + b  # grows along each row (x is sorted), so a bin's points are adjacent
        starts = np.flatnonzero(np.diff(key, prepend=-1))
        ends = np.append(starts[1:], total) - 1
        nan = np.isnan(v)
        filled = np.where(nan, 0.0, v)
        lo = np.minimum.reduceat(filled, starts, axis=0)
        hi = np.maximum.reduceat(filled, starts, axis=0)
        gap = np.logical_or.reduceat(nan, starts, axis=0)
        lo[gap] = np.nan
        hi[gap] = np.nan
        sr, sb = rows[starts], b[starts]
        self.lo[sr, :, sb] = lo
        self.hi[sr, :, sb] = hi
        self.has[sr, sb] = True
        self.xf[sr, sb] = x[starts]
        self.xl[sr, sb] = x[ends]
        last = np.append(sr[1:] != sr[:-1], True)  # each row's last bin: read again next time
        self.start[sr[last]] = cols[starts[last]]
        return int(sb.min())


def bucket_extremes(
    x: np.ndarray, columns: list[np.ndarray], buckets: int
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Points (sorted ``x`` [n], each of ``columns`` [fields, n]) cut into ``buckets`` of equal width in x,
    each bucket kept as at most two points: at its first x every field's minimum, at its last x every field's
    maximum (a bucket of one point stays that point). NaN is skipped unless a bucket holds nothing else.
    Decimating the result again keeps the same extremes, so old points can be thinned over and over."""
    n = len(x)
    if n == 0 or buckets <= 0:
        return x[:0].copy(), [c[:, :0].copy() for c in columns]
    span = float(x[-1] - x[0])
    if span > 0:
        b = np.minimum(((x - x[0]) * (buckets / span)).astype(np.int64), buckets - 1)
    else:
        b = np.zeros(n, dtype=np.int64)
    b = np.maximum.accumulate(b)  # a point out of order stays in its neighbours' bucket
    starts = np.flatnonzero(np.diff(b, prepend=-1))
    ends = np.append(starts[1:], n) - 1
    keep = np.stack([np.ones(len(starts), dtype=bool), ends > starts], axis=1).ravel()
    xs = np.stack([x[starts], x[ends]], axis=1).ravel()[keep]
    out = []
    for c in columns:
        lo = np.fmin.reduceat(c, starts, axis=1)
        hi = np.fmax.reduceat(c, starts, axis=1)
        out.append(np.stack([lo, hi], axis=2).reshape(c.shape[0], 2 * len(starts))[:, keep])
    return xs, out
