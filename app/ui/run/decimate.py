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


def peak_decimate(x: np.ndarray, ys: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """x [n] sorted, ys [k, n] -> (x [m], ys [k, m]) with m <= 2 * bins.

    A bin holding a NaN (a gap between test steps) becomes NaN, so the gap survives decimation.
    """
    n = len(x)
    if n <= 2 * bins or n < 2:
        return x, ys
    edges = np.linspace(x[0], x[-1], bins + 1)[:-1]
    starts = np.unique(np.searchsorted(x, edges, side="left"))
    ends = np.append(starts[1:], n) - 1
    nan = np.isnan(ys)
    filled = np.where(nan, 0.0, ys)
    lo = np.minimum.reduceat(filled, starts, axis=1)
    hi = np.maximum.reduceat(filled, starts, axis=1)
    gap = np.logical_or.reduceat(nan, starts, axis=1)
    lo[gap] = np.nan
    hi[gap] = np.nan
    out_x = np.empty(2 * len(starts), dtype=np.float64)
    out_x[0::2] = x[starts]
    out_x[1::2] = x[ends]
    out_y = np.empty((ys.shape[0], 2 * len(starts)), dtype=ys.dtype)
    out_y[:, 0::2] = lo
    out_y[:, 1::2] = hi
    return out_x, out_y


class BinnedPeaks:
    """Incremental peak decimation on fixed bins [x0, x0 + width): bins that are complete are kept,
    so a live update decimates only the points that arrived since the last one.

    ``update(x, ys, n)`` takes the series' x (sorted), their values as an array [k, >= n] or as a
    function (a, b) -> array [k, b - a] (so only new points are gathered), and their length.
    """

    def __init__(self, x0: float, width: float, bins: int, rows: int):
        self.x0, self.bins, self.rows = x0, bins, rows
        self.bw = width / bins
        self.done = 0  # bins finished (no later point can fall into them)
        self.start = 0  # index of the first point of the unfinished bins
        self.x = np.empty(2 * bins, dtype=np.float64)
        self.y = np.empty((rows, 2 * bins), dtype=np.float64)

    def _peaks(self, x: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(bin numbers, x pairs, y pairs) for points already known to lie in bins >= self.done."""
        b = np.minimum(((x - self.x0) // self.bw).astype(np.int64), self.bins - 1)
        starts = np.flatnonzero(np.diff(b, prepend=-1))
        ends = np.append(starts[1:], len(x)) - 1
        nan = np.isnan(ys)
        filled = np.where(nan, 0.0, ys)
        lo = np.minimum.reduceat(filled, starts, axis=1)
        hi = np.maximum.reduceat(filled, starts, axis=1)
        gap = np.logical_or.reduceat(nan, starts, axis=1)
        lo[gap] = np.nan
        hi[gap] = np.nan
        px = np.empty(2 * len(starts))
        px[0::2], px[1::2] = x[starts], x[ends]
        py = np.empty((ys.shape[0], 2 * len(starts)))
        py[:, 0::2], py[:, 1::2] = lo, hi
        return b[starts], px, py

    def update(self, x: np.ndarray, ys: np.ndarray | Callable[[int, int], np.ndarray],
               n: int) -> tuple[np.ndarray, np.ndarray]:
        if n <= self.start:
            return self.x[:2 * self.done], self.y[:, :2 * self.done]
        xs = x[self.start:n]
        part = ys(self.start, n) if callable(ys) else ys[:, self.start:n]
        bins, px, py = self._peaks(xs, part)
        m = len(bins)
        head_x = np.concatenate([self.x[:2 * self.done], px])
        head_y = np.concatenate([self.y[:, :2 * self.done], py], axis=1)
        # every bin but the last is complete: keep them, recompute the last one next time
        if m > 1:
            keep = 2 * (m - 1)
            self.x[2 * self.done:2 * self.done + keep] = px[:keep]
            self.y[:, 2 * self.done:2 * self.done + keep] = py[:, :keep]
            self.done += m - 1
            last_bin = bins[-1]
            self.start += int(np.searchsorted(((xs - self.x0) // self.bw), last_bin, side="left"))
        return head_x, head_y


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

    def update(self, take: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
               n: np.ndarray, first: np.ndarray | None = None) -> int | None:
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
