"""fio's latency histogram buckets (stat.h since fio 3.0): 29 groups of 64, named by their middle in ns.

One place for this fio fact: the network decoder reads histograms as bucket rows, telemetry
differences json+ ``bins`` keyed by bucket value, both through these functions.
"""

from __future__ import annotations

PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
PLAT_NR = 29 * PLAT_VAL  # 1856 buckets


def _idx_to_val(idx: int) -> int:
    if idx < (PLAT_VAL << 1):
        return idx
    error_bits = (idx >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    k = idx % PLAT_VAL
    # (k + 0.5) * 2^error_bits with error_bits >= 1 is an integer: (2k + 1) * 2^(error_bits - 1)
    return base + ((2 * k + 1) << (error_bits - 1))


def _idx_to_low(idx: int) -> int:
    """The lowest latency (ns) filed under a bucket: its range is [low, next bucket's low)."""
    if idx < (PLAT_VAL << 1):
        return idx
    error_bits = (idx >> PLAT_BITS) - 1
    return (1 << (error_bits + PLAT_BITS)) + ((idx % PLAT_VAL) << error_bits)


BIN_VALUE: tuple[int, ...] = tuple(_idx_to_val(i) for i in range(PLAT_NR))
# The buckets' ranges: bucket i holds [BIN_EDGE[i], BIN_EDGE[i + 1]) ns; the last also holds all above.
BIN_EDGE: tuple[int, ...] = tuple(_idx_to_low(i) for i in range(PLAT_NR + 1))
BIN_KEY: tuple[str, ...] = tuple(str(v) for v in BIN_VALUE)  # json+ "bins" keys


def plat_idx_to_val(idx: int) -> int:
    """The latency (ns) a histogram bucket stands for: the middle of its range, truncated."""
    return BIN_VALUE[idx]


def plat_val_to_idx(val: int) -> int:
    """The bucket fio files a latency (ns) under."""
    msb = val.bit_length() - 1 if val > 0 else 0
    if msb <= PLAT_BITS:
        return max(val, 0)
    error_bits = msb - PLAT_BITS
    idx = ((error_bits + 1) << PLAT_BITS) + ((PLAT_VAL - 1) & (val >> error_bits))
    return min(idx, PLAT_NR - 1)
