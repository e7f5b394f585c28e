"""Where response times fall, from the latency histograms the store keeps (Qt-free): the distribution over a
step (share of I/Os per latency bin, with fio's percentiles) and over time (a heat map: per time column, the
share of that column's I/Os in each latency bin).

fio files each I/O's latency under one of its log-linear buckets (64 per power of two, ~1-2 % wide). Drawn on
a log axis those buckets have uneven widths (a smooth distribution would show a saw-tooth at every power of
two), so they are regrouped into bins of equal logarithmic width (5 to 40 per decade, fewer when the data
spans many decades), a bucket's count split between the bins its range overlaps. The percentiles are read
on fio's own buckets by fio's rule (``array_percentile``), so they are the results table's numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from app.engine.common.fio_buckets import BIN_EDGE, BIN_VALUE, PLAT_NR, plat_val_to_idx
from app.model.metrics import array_percentile
from app.store.codec import decode_hist_arrays
from app.store.database import Store
from app.store.hist_blocks import series_hists, summaries

BUCKET_NS = np.array(BIN_VALUE, dtype=np.int64)
# fio's bucket edges (ns); the first bucket's [0, 1) starts at 0.5 so that every edge has a logarithm
EDGES_NS = np.array(BIN_EDGE, dtype=np.float64)
EDGES_NS[0] = 0.5
MARKERS = (50.0, 99.0, 99.9)  # the percentiles marked on the step's histogram
PER_DECADE = (40, 20, 10, 5, 2, 1)  # bins per decade, finest first
MAX_BINS = 100  # latency bins of the step's histogram
MAX_ROWS = 60  # latency bins of the heat map
MAX_COLUMNS = 600  # time columns of the heat map

Sparse = tuple[np.ndarray, np.ndarray]  # (bucket values ns, counts), as the store decodes a histogram


def bucket_index(values_ns: np.ndarray) -> np.ndarray:
    """The index of fio's bucket for each stored bucket value (ns): the stored values are fio's own, any
    other value is filed as fio would file it."""
    values_ns = np.asarray(values_ns, dtype=np.int64)
    idx = np.minimum(np.searchsorted(BUCKET_NS, values_ns), PLAT_NR - 1)
    odd = np.nonzero(BUCKET_NS[idx] != values_ns)[0]
    for i in odd:
        idx[i] = plat_val_to_idx(int(values_ns[i]))
    return idx


def dense_counts(parts: Iterable[Sparse]) -> np.ndarray:
    """Histograms added up over fio's PLAT_NR buckets (int64)."""
    out = np.zeros(PLAT_NR, dtype=np.int64)
    for values, counts in parts:
        if len(values):
            out += np.bincount(bucket_index(values), weights=counts, minlength=PLAT_NR).astype(np.int64)
    return out


def log_edges(lo_ns: float, hi_ns: float, max_bins: int) -> np.ndarray:
    """Edges of equal logarithmic width covering [lo_ns, hi_ns], on a grid of 1/n decade (the finest of
    PER_DECADE that keeps to ``max_bins``), so that decades fall on edges."""
    a, b = math.log10(lo_ns), math.log10(hi_ns)
    for n in PER_DECADE:
        first, last = math.floor(a * n + 1e-9), math.ceil(b * n - 1e-9)
        if last - first <= max_bins or n == PER_DECADE[-1]:
            return 10.0 ** (np.arange(first, max(last, first + 1) + 1) / n)
    raise AssertionError("unreachable")


def rebin(counts: np.ndarray, lo: int, edges: np.ndarray) -> np.ndarray:
    """Counts over fio's buckets lo, lo + 1, ... (last axis) regrouped into the bins ``edges`` (ns), each
    bucket's count spread evenly over its range."""
    n = counts.shape[-1]
    fine = EDGES_NS[lo : lo + n + 1]
    cum = np.concatenate(
        [np.zeros(counts.shape[:-1] + (1,)), np.cumsum(counts, axis=-1, dtype=np.float64)], axis=-1
    )
    j = np.clip(np.searchsorted(fine, edges, side="right") - 1, 0, n - 1)
    frac = np.clip((edges - fine[j]) / (fine[j + 1] - fine[j]), 0.0, 1.0)
    at_edges = cum[..., j] + frac * counts[..., j]
    return np.diff(at_edges, axis=-1)


def _span(present: np.ndarray) -> tuple[int, int] | None:
    """First and last non-empty bucket."""
    nz = np.nonzero(present)[0]
    return (int(nz[0]), int(nz[-1])) if len(nz) else None


@dataclass
class StepHistogram:
    """The share of a step's I/Os in each latency bin, and where its percentiles fall."""

    edges_ns: np.ndarray  # bin edges, len(share_pct) + 1, equal logarithmic width
    share_pct: np.ndarray  # % of all I/Os per bin
    total: int  # I/Os counted
    percentiles_ns: dict[float, float]  # MARKERS -> latency (ns), by fio's rule on its buckets

    def percentile_ms(self, pct: float) -> float | None:
        v = self.percentiles_ns.get(pct)
        return None if v is None else v / 1e6


def step_histogram(
    counts: np.ndarray, max_bins: int = MAX_BINS, edges: np.ndarray | None = None
) -> StepHistogram | None:
    """From counts over fio's buckets (``dense_counts``), on bins of its own or on ``edges`` (which must cover
    every non-empty bucket: ``common_edges``); None when no I/O was counted."""
    span = _span(counts)
    if span is None:
        return None
    lo, hi = span
    if edges is None:
        edges = log_edges(EDGES_NS[lo], EDGES_NS[hi + 1], max_bins)
    total = int(counts.sum())
    binned = rebin(counts[lo : hi + 1].astype(np.float64), lo, edges)
    pcts = {p: v for p in MARKERS if (v := array_percentile(BUCKET_NS, counts, p)) is not None}
    return StepHistogram(edges, binned * 100.0 / total, total, pcts)


def common_edges(counts: Sequence[np.ndarray], max_bins: int = MAX_BINS) -> np.ndarray | None:
    """Bins that cover every one of several histograms (to draw them over each other); None if all are empty."""
    spans = [s for c in counts if (s := _span(c)) is not None]
    if not spans:
        return None
    return log_edges(EDGES_NS[min(lo for lo, _ in spans)], EDGES_NS[max(hi for _, hi in spans) + 1], max_bins)


def counts_of(hists: Iterable[Mapping[int, int]]) -> np.ndarray:
    """Histograms as Metrics hold them (bucket ns -> count) added up over fio's buckets."""
    parts = []
    for h in hists:
        if h:
            keys = sorted(h)
            parts.append((np.array(keys, dtype=np.int64), np.array([h[k] for k in keys], dtype=np.int64)))
    return dense_counts(parts)


@dataclass
class HeatMap:
    """Per time column, the share of the column's I/Os in each latency bin (NaN: no I/O in that column)."""

    t_edges: np.ndarray  # column edges (s), len(columns) + 1
    edges_ns: np.ndarray  # latency bin edges (ns), equal logarithmic width
    share_pct: np.ndarray  # [column, latency bin], float32
    p99_ns: np.ndarray  # per column, fio's 99th percentile (NaN: no I/O)
    samples: int  # intervals read


class HeatGrid:
    """Builds a HeatMap one interval at a time (an hour of intervals is never held decoded at once): the
    intervals' end times (s) first, for the columns; then ``add`` each histogram, ``result`` at the end.
    Intervals are grouped into columns of equal width, one per interval up to ``max_columns``, so a column
    centred on t stands for the interval ending at t."""

    def __init__(self, times: Iterable[float], max_columns: int = MAX_COLUMNS) -> None:
        times = np.unique(np.fromiter(times, dtype=np.float64))
        self.samples = len(times)
        if not len(times):
            times = np.zeros(1)
        steps = np.diff(times)
        steps = steps[steps > 0.05]  # not fio's last report, a sliver after the last whole interval
        # as wide as the longest interval (not the typical one), so that no column inside a step is left
        # empty when fio's intervals run a little long (a column may then hold two); gaps between steps
        # (over 1.5 typical intervals) do not count
        typical = float(np.max(steps[steps <= 1.5 * np.median(steps)])) if len(steps) else 1.0
        self.width = max(typical, float(times[-1] - times[0]) / max(1, max_columns - 1))
        self.x0 = float(times[0]) - self.width / 2
        self.columns = int((times[-1] - self.x0) // self.width) + 1
        self.grid = np.zeros((self.columns, PLAT_NR))

    def add(self, t: float, values: np.ndarray, counts: np.ndarray) -> None:
        """One interval's histogram (reads, writes: add both); t among the times given."""
        if len(values):
            col = min(max(int((t - self.x0) // self.width), 0), self.columns - 1)
            self.grid[col] += np.bincount(bucket_index(values), weights=counts, minlength=PLAT_NR)

    def result(self, max_rows: int = MAX_ROWS) -> HeatMap | None:
        """None when no I/O was counted."""
        span = _span(self.grid.sum(axis=0))
        if span is None:
            return None
        lo, hi = span
        grid = self.grid[:, lo : hi + 1]
        n = hi - lo + 1
        totals = grid.sum(axis=1)
        edges = log_edges(EDGES_NS[lo], EDGES_NS[hi + 1], max_rows)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = rebin(grid, lo, edges) * 100.0 / totals[:, None]
            # fio's rule per column: the first bucket whose cumulative count reaches 99 % of the column's
            first = (np.cumsum(grid, axis=1) < 0.99 * totals[:, None]).sum(axis=1)
        p99 = np.where(totals > 0, BUCKET_NS[lo + np.minimum(first, n - 1)], np.nan)
        share[totals <= 0] = np.nan
        return HeatMap(
            self.x0 + self.width * np.arange(self.columns + 1),
            edges,
            share.astype(np.float32),
            p99.astype(np.float64),
            self.samples,
        )


def heat_map(
    samples: Sequence[tuple[float, Sparse]], max_columns: int = MAX_COLUMNS, max_rows: int = MAX_ROWS
) -> HeatMap | None:
    """From (t in seconds, histogram) per interval, t being the interval's end (a histogram may appear
    several times at one t: reads and writes)."""
    grid = HeatGrid((t for t, _h in samples), max_columns)
    for t, (values, counts) in samples:
        grid.add(t, values, counts)
    return grid.result(max_rows)


# --- reading the store -------------------------------------------------------------------------------------
def _decoded(read: bytes | str | None, write: bytes | str | None) -> list[Sparse]:
    return [decode_hist_arrays(h) for h in (read, write) if h]


def result_counts(
    store: Store, step_ids: Sequence[int], keys: Sequence[tuple[str, str | None, str]]
) -> np.ndarray:
    """The steps' final histograms (reads and writes) of the levels ``keys`` ((level, manager, key), e.g.
    ("all", None, "ALL")) added up over fio's buckets."""
    parts: list[Sparse] = []
    if not step_ids:
        return dense_counts(parts)
    steps = ", ".join(str(int(s)) for s in step_ids)
    with store.read("reading response time histograms") as conn:
        for level, manager, key in keys:
            for read, write in conn.execute(
                "SELECT read_hist, write_hist FROM results JOIN series ON series.id = results.series_id "
                f"WHERE series.step_id IN ({steps}) AND level = ? AND manager IS ? AND key = ?",
                (level, manager, key),
            ):
                parts += _decoded(read, write)
    return dense_counts(parts)


def interval_heat_map(
    store: Store,
    series: Sequence[tuple[int, float]],
    max_columns: int = MAX_COLUMNS,
    max_rows: int = MAX_ROWS,
) -> tuple[HeatMap | None, int]:
    """The heat map of the interval histograms kept with the samples of ``series`` ((samples' series id,
    seconds added to their t)), and how many intervals had them (0: none were kept; by default only
    managers' and ALL's are). When a column spans more than the bins of the steps' kept summaries (a run of
    hours), those binned sums are read instead of every interval (the count is then of bins)."""
    rows: list[tuple[float, Sparse, Sparse]] = []
    with store.read("reading response time histograms") as conn:
        kept = summaries(conn, [sid for sid, _o in series])
        if len(kept) == len(series) and kept:
            times = [t + offset for sid, offset in series for t, _r, _w in kept[sid][1]]
            if (max(times) - min(times)) / max(1, max_columns - 1) >= max(b for b, _h in kept.values()):
                # a column spans a summary's bin or more: the steps' binned sums, not every interval
                rows = [(t + offset, r, w) for sid, offset in series for t, r, w in kept[sid][1]]
        if not rows:
            for series_id, offset in series:
                rows += [(t + offset, r, w) for t, r, w in series_hists(conn, series_id)]
    grid = HeatGrid((t for t, _r, _w in rows), max_columns)
    for t, read, write in rows:
        for values, counts in (read, write):
            grid.add(t, values, counts)
    return grid.result(max_rows), len(rows)
