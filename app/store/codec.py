"""Metrics <-> database values.

Scalars are one column each (``schema.METRIC_COLUMNS``). A latency histogram (bucket ns -> count) is a
BLOB: a format byte, then zlib-compressed little-endian unsigned integers ``[b0, b1 - b0, ..., c0, c1, ...]``
(buckets ascending and delta-encoded, then counts), 32-bit when every number fits, else 64-bit. fio's
bucket values are long numbers close together, so this is ~6x smaller than the JSON list databases of
version 2 hold (``[b0, c0, b1 - b0, c1, ...]`` as TEXT), which are still read. An empty histogram is NULL.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from app.model.metrics import Metrics

from .schema import METRIC_COLUMNS

METRIC_NAMES: tuple[str, ...] = tuple(name for name, _ in METRIC_COLUMNS)


def metric_values(m: Metrics) -> tuple[Any, ...]:
    values = tuple(getattr(m, name) for name in METRIC_NAMES)
    if any(v != v for v in values):  # SQLite would turn NaN into NULL: refuse rather than change a number
        bad = [name for name, v in zip(METRIC_NAMES, values, strict=True) if v != v]
        raise ValueError(f"Metrics with NaN in {', '.join(bad)} cannot be stored")
    return values


def metrics_from(
    values: Sequence[Any], read_hist: str | None = None, write_hist: str | None = None
) -> Metrics:
    return Metrics(
        **dict(zip(METRIC_NAMES, values, strict=True)),
        read_hist=decode_hist(read_hist),
        write_hist=decode_hist(write_hist),
    )


_U32, _U64 = 1, 2  # format byte: the integers' width
_DTYPES = {_U32: np.dtype("<u4"), _U64: np.dtype("<u8")}


def encode_hist(hist: Mapping[int, int]) -> bytes | None:
    if not hist:
        return None
    buckets = np.fromiter((int(b) for b in hist), dtype=np.int64, count=len(hist))
    order = np.argsort(buckets, kind="stable")
    counts = np.fromiter((int(c) for c in hist.values()), dtype=np.int64, count=len(hist))[order]
    return encode_hist_arrays(buckets[order], counts)


def encode_hist_arrays(buckets: np.ndarray, counts: np.ndarray) -> bytes | None:
    """Buckets ascending (ns) and their counts."""
    if not len(buckets):
        return None
    if (counts < 0).any() or buckets[0] < 0:
        raise ValueError("a latency histogram holds negative buckets or counts")
    flat = np.concatenate([np.diff(buckets, prepend=0), counts])
    fmt = _U32 if int(flat.max()) < 1 << 32 else _U64
    return bytes((fmt,)) + zlib.compress(flat.astype(_DTYPES[fmt]).tobytes(), 6)


def decode_hist_arrays(value: bytes | str | None) -> tuple[np.ndarray, np.ndarray]:
    """(buckets ns, counts) as int64 arrays, buckets ascending; both empty for NULL."""
    if not value:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    if isinstance(value, str):  # version 2: JSON [b0, c0, b1 - b0, c1, ...]
        flat = np.array(json.loads(value), dtype=np.int64)
        return np.cumsum(flat[0::2]), flat[1::2]
    flat = np.frombuffer(zlib.decompress(value[1:]), dtype=_DTYPES[value[0]]).astype(np.int64)
    n = len(flat) // 2
    return np.cumsum(flat[:n]), flat[n:]


def decode_hist(value: bytes | str | None) -> dict[int, int]:
    buckets, counts = decode_hist_arrays(value)
    return dict(zip(buckets.tolist(), counts.tolist(), strict=True))





def hists_p99_ns(read: bytes | str | None, write: bytes | str | None) -> float | None:
    """The 99th percentile (ns) of read and write latencies together, from stored histograms (as
    ``Metrics.percentile_ms(99)`` gives it in ms)."""
    rb, rc = decode_hist_arrays(read)
    wb, wc = decode_hist_arrays(write)
    if not len(wb):
        buckets, counts = rb, rc
    elif not len(rb):
        buckets, counts = wb, wc
    else:
        buckets, where = np.unique(np.concatenate([rb, wb]), return_inverse=True)
        counts = np.bincount(where, weights=np.concatenate([rc, wc])).astype(np.int64)
    total = int(counts.sum())
    if total <= 0:
        return None
    i = int(np.searchsorted(np.cumsum(counts), 0.99 * total, side="left"))
    return float(buckets[min(i, len(buckets) - 1)])


_ZIPPED = b"z"  # fio's output is text; a BLOB starting with this is zlib-compressed UTF-8


def pack_text(text: str | None) -> bytes | str | None:
    """Long text (fio's raw output) as stored: compressed."""
    return None if text is None else _ZIPPED + zlib.compress(text.encode("utf-8"), 6)


def unpack_text(value: bytes | str | None) -> str | None:
    if isinstance(value, bytes):
        return zlib.decompress(value[1:]).decode("utf-8")
    return value
