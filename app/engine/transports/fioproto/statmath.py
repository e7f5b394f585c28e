"""The arithmetic fio's stat.c applies when it turns a thread_stat into JSON, reproduced exactly.

Everything here must give the same numbers as fio (x86-64 build), bit for bit where fio prints
floats with ``%f``: the order of floating-point operations follows fio's, and the percentile
threshold is computed in x87 extended precision (64-bit significand) as fio does with
``long double``.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from itertools import accumulate

from app.engine.common.fio_buckets import (  # re-exported: the decoder's API
    BIN_KEY as BIN_KEY,
)
from app.engine.common.fio_buckets import (
    BIN_VALUE as BIN_VALUE,
)
from app.engine.common.fio_buckets import (
    PLAT_NR as PLAT_NR,
)
from app.engine.common.fio_buckets import (
    plat_idx_to_val as plat_idx_to_val,
)

# A sparse histogram row: (bin indexes, counts) of the non-zero bins, ascending by index.
Histogram = tuple[tuple[int, ...], tuple[int, ...]]
EMPTY_HIST: Histogram = ((), ())


@dataclass(slots=True)
class IoStat:
    """fio's ``struct io_stat``: running min/max/count and Welford mean and S (sum of squares)."""

    max_val: int = 0
    min_val: int = 0
    samples: int = 0
    mean: float = 0.0
    S: float = 0.0


def calc_lat(st: IoStat) -> tuple[int, int, float, float] | None:
    """min, max, mean, stddev, or None when there are no samples (fio's ``calc_lat``)."""
    n = float(st.samples)
    if n == 0:
        return None
    dev = math.sqrt(st.S / (n - 1.0)) if n > 1.0 else 0.0
    return st.min_val, st.max_val, st.mean, dev


_LD_BITS = 64  # x87 extended precision significand


def _round_ld(x: Fraction) -> Fraction:
    """Round a positive rational to the nearest x87 long double (64-bit significand, ties to even)."""
    if x <= 0:
        return x
    n, d = x.numerator, x.denominator
    shift = (_LD_BITS - 1) - (n.bit_length() - d.bit_length())
    while True:
        num, den = (n << shift, d) if shift >= 0 else (n, d << -shift)
        q, r = divmod(num, den)
        if q >= 1 << _LD_BITS:
            shift -= 1
        elif q < 1 << (_LD_BITS - 1):
            shift += 1
        else:
            break
    if 2 * r > den or (2 * r == den and q & 1):
        q += 1
    return Fraction(q, 1 << shift) if shift >= 0 else Fraction(q << -shift)


# fio is built with -ffast-math, so "sum >= (long double) p / 100.0 * nr" is compiled as
# p * (nr * 0.01L) in x87 extended precision, with nr * 0.01L hoisted out of the loop (read in
# the disassembly of Debian's fio 3.33 and of fio 3.42 built from source).
LD_HUNDREDTH = _round_ld(Fraction(1, 100))  # 0xA3D70A3D70A3D70A * 2**-70


def percentile_threshold(p: float, nr: int) -> int:
    """Smallest cumulative count that fio accepts as reaching percentile ``p`` of ``nr`` samples.

    A double-precision estimate decides unless it lies within rounding distance of an integer;
    only then does the exact extended-precision evaluation matter (e.g. p=60, nr=3035: 1821).
    """
    t = p / 100.0 * nr
    if abs(t - round(t)) > t * 1e-12:
        return math.ceil(t)
    return math.ceil(_round_ld(Fraction(p) * _round_ld(nr * LD_HUNDREDTH)))


@lru_cache(maxsize=512)
def _thresholds(plist: tuple[float, ...], nr: int) -> tuple[int, ...]:
    """percentile_threshold for every entry (a TS's clat and lat rows share N, and so do
    consecutive calls for the same job)."""
    out = []
    for p in plist:
        t = p / 100.0 * nr
        out.append(math.ceil(t) if abs(t - round(t)) > t * 1e-12 else percentile_threshold(p, nr))
    return tuple(out)


def calc_percentiles(hist: Histogram, nr: int, plist: tuple[float, ...] | list[float]) -> list[int]:
    """fio's ``calc_clat_percentiles``: the bin value where the running count reaches p% of nr.

    ``plist`` must already be sorted. When the histogram holds fewer samples than ``nr`` (a live
    snapshot can catch them out of step) fio leaves the unreached entries uninitialised; we
    report the highest bin seen instead.
    """
    idxs, counts = hist
    if not plist:
        return []
    if not idxs:
        return [0] * len(plist)
    cumulative = list(accumulate(counts))
    last = len(idxs) - 1
    values = BIN_VALUE
    return [values[idxs[min(bisect_left(cumulative, need), last)]] for need in _thresholds(tuple(plist), nr)]


def stat_calc_dist(counts: tuple[int, ...] | list[int], total: int) -> list[float]:
    """Percentages of an I/O depth map; any non-zero share below 0.1 shows as 0.1."""
    out = []
    for c in counts:
        if total:
            v = float(c) / float(total)
            v *= 100.0
            if v < 0.1 and c:
                v = 0.1
        else:
            v = 0.0
        out.append(v)
    return out


def stat_calc_lat(counts: tuple[int, ...] | list[int], total: int) -> list[float]:
    """Percentages of a latency bucket map; any non-zero share below 0.01 shows as 0.01."""
    out = []
    for c in counts:
        if total:
            v = float(c) / float(total)
            v *= 100.0
            if v < 0.01 and c:
                v = 0.01
        else:
            v = 0.0
        out.append(v)
    return out


def agg_percent(agg_bytes: int, mean: float) -> float:
    """fio's ``convert_agg_kbytes_percent``; note fio passes the mean as an int."""
    p_of_agg = 100.0
    if agg_bytes > 1024:
        p_of_agg = int(mean) * 100.0 / (agg_bytes / 1024.0)
        if p_of_agg > 100.0:
            p_of_agg = 100.0
    return p_of_agg


def sum_io_stat(dst: IoStat, src: IoStat, pure_sum: bool) -> None:
    """fio's ``sum_stat``: merge ``src`` into ``dst`` (parallel Welford, or a plain sum for bw/iops)."""
    if src.samples == 0:
        return
    first = dst.samples == 0
    if not pure_sum:
        dst.min_val = min(dst.min_val, src.min_val)
        dst.max_val = max(dst.max_val, src.max_val)
        if first:
            mean, S = src.mean, src.S
        else:
            delta = src.mean - dst.mean
            mean = ((src.mean * src.samples) + (dst.mean * dst.samples)) / (dst.samples + src.samples)
            S = (
                src.S
                + dst.S
                + math.pow(delta, 2.0) * (dst.samples * src.samples) / (dst.samples + src.samples)
            )
        dst.samples += src.samples
        dst.mean = mean
        dst.S = S
        return
    if first:
        dst.min_val, dst.max_val, dst.samples = src.min_val, src.max_val, src.samples
        dst.mean, dst.S = src.mean, src.S
    else:
        dst.min_val += src.min_val
        dst.max_val += src.max_val
        dst.samples += src.samples
        dst.mean += src.mean
        dst.S += src.S


def merge_hist(a: Histogram, b: Histogram) -> Histogram:
    if not a[0]:
        return b
    if not b[0]:
        return a
    d = dict(zip(*a, strict=True))
    for i, c in zip(*b, strict=True):
        d[i] = d.get(i, 0) + c
    keys = sorted(d)
    return tuple(keys), tuple(d[k] for k in keys)
