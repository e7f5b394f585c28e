"""Measured numbers for one level (target, worker, manager or ALL) over one time window.

Counters and rates are kept separately: a leaf's rates are its counters over its own seconds,
while a roll-up's rates are the *sums* of its children's rates, as Iometer sums them. Latency
means are I/O-weighted (sums of latency over I/Os), maxima are maxima, and percentiles come from
merged histograms, never from averaged percentiles.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

MB = 1_000_000
MIB = 1_048_576


def merge_hist(into: dict[int, int], other: Mapping[int, int]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _merged_into(into: Mapping[int, int], other: Mapping[int, int]) -> dict[int, int]:
    """``other`` added to ``into`` in place when it is a dict; a read-only array histogram (telemetry's)
    is copied into one first."""
    out = into if type(into) is dict else dict(into.items())
    merge_hist(out, other)
    return out


def merged_hist(hists: list[Mapping[int, int]]) -> Mapping[int, int]:
    """The sum of histograms. Telemetry's count arrays are summed in numpy into another read-only one
    (ALL of 32 managers merged as dicts cost ~8 ms a second); anything else gives a new dict."""
    used = [h for h in hists if hasattr(h, "bucket_arrays") or h]
    found = _bucket_counts(used) if used else None
    if found is not None:
        from .bucket_hist import BucketHist  # numpy is loaded wherever such histograms exist

        return used[0] if len(used) == 1 else BucketHist(*found)
    out: dict[int, int] = {}
    for h in used:
        merge_hist(out, h)
    return out


def hist_percentile(hist: Mapping[int, int], pct: float) -> float | None:
    """fio's rule: the first bucket whose cumulative count reaches pct% of all samples (ns)."""
    total = sum(hist.values())
    if total <= 0:
        return None
    need = pct / 100.0 * total
    acc = 0
    for value in sorted(hist):
        acc += hist[value]
        if acc >= need:
            return float(value)
    return float(max(hist))


def hist_percentiles(hist: Mapping[int, int], pcts: Iterable[float]) -> list[float | None]:
    """``[hist_percentile(hist, p) for p in pcts]``, the buckets sorted and summed once."""
    pcts = list(pcts)
    total = sum(hist.values())
    if total <= 0:
        return [None] * len(pcts)
    keys = sorted(hist)
    cum = list(accumulate(hist[k] for k in keys))
    out: list[float | None] = []
    for pct in pcts:
        i = bisect_left(cum, pct / 100.0 * total)  # the first bucket whose cumulative count reaches it
        out.append(float(keys[min(i, len(keys) - 1)]))
    return out


def _counts_percentile(
    values: Any, counts: Any, pct: float
) -> Any:  # (ndarray [b], ndarray [k, b]) -> ndarray [k]
    """fio's rule on k count arrays over the same buckets at once: the first bucket whose cumulative count
    reaches pct% of the samples, between the first and the last non-empty bucket; NaN where empty."""
    import numpy as np  # already loaded where such histograms exist

    used = np.flatnonzero((counts != 0).any(axis=0))  # buckets empty in every row cannot change the answer
    if len(used) == 0:
        return np.full(counts.shape[0], np.nan)
    values, counts = values[used], counts[:, used]
    cs = np.cumsum(counts, axis=1)
    total = cs[:, -1]
    i = np.count_nonzero(cs < (pct / 100.0 * total)[:, None], axis=1)  # < len(values) wherever total > 0
    if pct <= 0:  # the first bucket that is not empty
        i = np.maximum(i, np.count_nonzero(cs <= 0, axis=1))
    return np.where(total > 0, values[np.minimum(i, len(values) - 1)].astype(np.float64), np.nan)


def _sorted_arrays_percentiles(pairs: list[tuple[Any, Any]], pcts: list[float]) -> list[float | None]:
    """``hist_percentiles`` of the sum of histograms given as (buckets, counts) arrays, each's buckets
    ascending (stored histograms read as arrays): a bucket in several is a run of equal values after sorting,
    and the first index whose cumulative count reaches a share is within the run of the bucket the merged
    histogram gives (numpy's stable sort over the buckets of all, one cumulative sum)."""
    import numpy as np  # loaded wherever stored histograms are read as arrays

    used = [(b, c) for b, c in pairs if len(b)]
    if not used:
        return [None] * len(pcts)
    buckets = np.concatenate([b for b, _ in used])
    counts = np.concatenate([c for _, c in used])
    if len(used) > 1:
        order = np.argsort(buckets, kind="stable")
        buckets, counts = buckets[order], counts[order]
    cum = np.cumsum(counts)
    total = int(cum[-1])
    if total <= 0:
        return [None] * len(pcts)
    need = [pct / 100.0 * total for pct in pcts]
    at = np.minimum(np.searchsorted(cum, need, "left"), len(buckets) - 1)
    return [float(v) for v in buckets[at].tolist()]


def _bucket_counts(hists: list[Any]) -> tuple[Any, Any] | None:
    """(bucket values, summed counts) of histograms that are count arrays over the same buckets (telemetry's);
    None when they are not (plain dicts)."""
    arrays = [getattr(h, "bucket_arrays", None) for h in hists]
    if not arrays or any(a is None for a in arrays):
        return None
    pairs = [a() for a in arrays if a is not None]
    values = pairs[0][0]
    if any(v is not values for v, _c in pairs):
        return None
    return values, (pairs[0][1] if len(pairs) == 1 else sum(c for _v, c in pairs))


def _arrays_percentile(hists: list[Any], pct: float) -> float | None | bool:
    """fio's rule on histograms that are count arrays over the same buckets (telemetry's), without dicts;
    False when they are not (plain dicts: the caller's way)."""
    found = _bucket_counts(hists)
    return False if found is None else array_percentile(found[0], found[1], pct)


def array_percentile(values: Any, counts: Any, pct: float) -> float | None:
    """fio's rule on a histogram as arrays (bucket values ascending, counts): the value of the first bucket
    whose cumulative count reaches pct% of all samples; None when it is empty."""
    import numpy as np

    v = float(_counts_percentile(np.asarray(values), np.asarray(counts)[None, :], pct)[0])
    return None if v != v else v


def _direction_hists(m: Metrics, direction: str) -> list[Any]:
    """The histograms a percentile of ``direction`` reads: array histograms, and dicts that are not empty."""
    hists = (
        (m.read_hist,)
        if direction == "read"
        else (m.write_hist,)
        if direction == "write"
        else (m.read_hist, m.write_hist)
    )
    return [h for h in hists if hasattr(h, "bucket_arrays") or h]


def percentiles_ms(windows: list[Metrics], pct: float) -> list[float | None]:
    """``[m.percentile_ms(pct) for m in windows]``, with the windows whose histograms are telemetry's bucket
    arrays done in one numpy pass (the live charts take p99 of every series each second)."""
    import numpy as np

    out: list[float | None] = [None] * len(windows)
    fast: list[int] = []
    rows: list[Any] = []  # per fast window: its count arrays (read, write; an empty histogram has none)
    values = None
    for i, m in enumerate(windows):
        arrays: list[Any] = []
        plain = False
        for h in (m.read_hist, m.write_hist):
            get = getattr(h, "bucket_arrays", None)
            if get is not None:
                arrays.append(get())
            elif h:  # a plain dict with counts
                plain = True
                break
        if (
            plain
            or not arrays
            or any(v is not (values if values is not None else arrays[0][0]) for v, _c in arrays)
        ):
            out[i] = m.percentile_ms(pct)
            continue
        values = arrays[0][0]
        fast.append(i)
        rows.append(arrays)
    # A few dozen rows at a time: their counts over all of fio's buckets (1856) then stay in the CPU's cache
    # while they are summed up (hundreds of rows at once were ~30 % slower, measured with 545 rows).
    for a in range(0, len(fast), _ROWS_AT_ONCE):
        part = rows[a : a + _ROWS_AT_ONCE]
        counts = np.stack([r[0][1] for r in part])
        two = [j for j, r in enumerate(part) if len(r) == 2]
        if two:
            counts[two] += np.stack([part[j][1][1] for j in two])
        got = _counts_percentile(values, counts, pct) / 1e6
        for i, v in zip(fast[a : a + _ROWS_AT_ONCE], got.tolist(), strict=True):
            out[i] = None if v != v else v
    return out


_ROWS_AT_ONCE = 64


@dataclass
class Metrics:
    seconds: float = 0.0  # length of the window (a roll-up: the longest child window)
    read_ios: int = 0
    write_ios: int = 0
    read_bytes: int = 0
    write_bytes: int = 0
    read_iops: float = 0.0
    write_iops: float = 0.0
    read_bps: float = 0.0  # bytes per second
    write_bps: float = 0.0
    read_lat_sum_ns: float = 0.0  # sum over completed I/Os of submit-to-completion latency
    write_lat_sum_ns: float = 0.0
    read_lat_n: int = 0
    write_lat_n: int = 0
    read_lat_max_ns: float = 0.0
    write_lat_max_ns: float = 0.0
    # latency bucket (ns) -> count: a dict, or telemetry's read-only count arrays (BucketHist)
    read_hist: Mapping[int, int] = field(default_factory=dict)
    write_hist: Mapping[int, int] = field(default_factory=dict)
    errors: int = 0
    usr_cpu: float = 0.0  # fio's own CPU use, percent (a roll-up: mean over children)
    sys_cpu: float = 0.0
    disk_util: float | None = None  # percent, where fio reports it

    # --- derived -------------------------------------------------------------------------
    @property
    def ios(self) -> int:
        return self.read_ios + self.write_ios

    @property
    def bytes(self) -> int:
        return self.read_bytes + self.write_bytes

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops

    @property
    def bps(self) -> float:
        return self.read_bps + self.write_bps

    @property
    def mbps(self) -> float:
        """Decimal MB/s."""
        return self.bps / MB

    @property
    def read_mbps(self) -> float:
        return self.read_bps / MB

    @property
    def write_mbps(self) -> float:
        return self.write_bps / MB

    @property
    def mibps(self) -> float:
        return self.bps / MIB

    @property
    def read_mibps(self) -> float:
        return self.read_bps / MIB

    @property
    def write_mibps(self) -> float:
        return self.write_bps / MIB

    @staticmethod
    def _mean_ms(total_ns: float, n: int) -> float:
        return total_ns / n / 1e6 if n else 0.0

    @property
    def lat_mean_ms(self) -> float:
        return self._mean_ms(self.read_lat_sum_ns + self.write_lat_sum_ns, self.read_lat_n + self.write_lat_n)

    @property
    def read_lat_mean_ms(self) -> float:
        return self._mean_ms(self.read_lat_sum_ns, self.read_lat_n)

    @property
    def write_lat_mean_ms(self) -> float:
        return self._mean_ms(self.write_lat_sum_ns, self.write_lat_n)

    @property
    def lat_max_ms(self) -> float:
        return max(self.read_lat_max_ns, self.write_lat_max_ns) / 1e6

    @property
    def read_lat_max_ms(self) -> float:
        return self.read_lat_max_ns / 1e6

    @property
    def write_lat_max_ms(self) -> float:
        return self.write_lat_max_ns / 1e6

    def percentile_ms(self, pct: float, direction: str = "total") -> float | None:
        v = self.percentile_ns(pct, direction)
        return None if v is None else v / 1e6

    def percentiles_ms(self, pcts: Iterable[float]) -> list[float | None]:
        """``[self.percentile_ms(p) for p in pcts]`` (both directions merged), the histograms merged and
        sorted once: a report's long-form rows take six percentiles of every result."""
        pcts = list(pcts)
        hists = _direction_hists(self, "total")
        if _bucket_counts(hists) is not None:
            return [self.percentile_ms(p) for p in pcts]
        stored = [getattr(h, "sorted_arrays", None) for h in hists]
        if all(a is not None for a in stored):  # stored blobs read as arrays: no dict is made
            values = _sorted_arrays_percentiles([a() for a in stored if a is not None], pcts)
            return [None if v is None else v / 1e6 for v in values]
        values = hist_percentiles(merged_hist([self.read_hist, self.write_hist]), pcts)
        return [None if v is None else v / 1e6 for v in values]

    def percentile_ns(self, pct: float, direction: str = "total") -> float | None:
        """fio's percentile of ``direction`` ("read", "write" or "total": both merged), in ns."""
        fast = _arrays_percentile(_direction_hists(self, direction), pct)
        if fast is not False:
            return fast
        if direction == "read":
            return hist_percentile(self.read_hist, pct)
        if direction == "write":
            return hist_percentile(self.write_hist, pct)
        return hist_percentile(merged_hist([self.read_hist, self.write_hist]), pct)

    # --- roll-up ---------------------------------------------------------------------------
    def add_counts(self, p: Metrics) -> None:
        """Add another window's I/O counts, bytes, latency sums/maxima, histograms and errors (not rates)."""
        self._add_counters(p)
        self.read_hist = _merged_into(self.read_hist, p.read_hist)
        self.write_hist = _merged_into(self.write_hist, p.write_hist)

    def _add_counters(self, p: Metrics) -> None:
        self.read_ios += p.read_ios
        self.write_ios += p.write_ios
        self.read_bytes += p.read_bytes
        self.write_bytes += p.write_bytes
        self.read_lat_sum_ns += p.read_lat_sum_ns
        self.write_lat_sum_ns += p.write_lat_sum_ns
        self.read_lat_n += p.read_lat_n
        self.write_lat_n += p.write_lat_n
        self.read_lat_max_ns = max(self.read_lat_max_ns, p.read_lat_max_ns)
        self.write_lat_max_ns = max(self.write_lat_max_ns, p.write_lat_max_ns)
        self.errors += p.errors

    @classmethod
    def combine(cls, parts: Iterable[Metrics]) -> Metrics:
        """Roll children up one level: counters and rates summed, maxima maxed, histograms merged."""
        out = cls()
        parts = list(parts)
        utils = [p.disk_util for p in parts if p.disk_util is not None]
        for p in parts:
            out.seconds = max(out.seconds, p.seconds)
            out._add_counters(p)
            out.read_iops += p.read_iops
            out.write_iops += p.write_iops
            out.read_bps += p.read_bps
            out.write_bps += p.write_bps
            out.usr_cpu += p.usr_cpu
            out.sys_cpu += p.sys_cpu
        if parts:
            out.usr_cpu /= len(parts)
            out.sys_cpu /= len(parts)
        out.disk_util = max(utils) if utils else None
        out.read_hist = merged_hist([p.read_hist for p in parts])
        out.write_hist = merged_hist([p.write_hist for p in parts])
        return out

    def headline(self) -> dict[str, float | None]:
        """The numbers people quote, in display units (ms, MB/s)."""
        return {
            "iops": self.iops,
            "read_iops": self.read_iops,
            "write_iops": self.write_iops,
            "mbps": self.mbps,
            "mibps": self.mibps,
            "lat_mean_ms": self.lat_mean_ms,
            "lat_max_ms": self.lat_max_ms,
            "p50_ms": self.percentile_ms(50),
            "p95_ms": self.percentile_ms(95),
            "p99_ms": self.percentile_ms(99),
            "p999_ms": self.percentile_ms(99.9),
            "errors": float(self.errors),
        }
