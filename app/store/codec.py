"""Metrics <-> database values.

Scalars are one column each (``schema.METRIC_COLUMNS``). A latency histogram (bucket ns -> count) is a
BLOB: a format byte, then zlib-compressed little-endian unsigned integers ``[b0, b1 - b0, ..., c0, c1, ...]``
(buckets ascending and delta-encoded, then counts), 32-bit when every number fits, else 64-bit. fio's
bucket values are long numbers close together, so this is ~6x smaller than the JSON list databases of
version 2 hold (``[b0, c0, b1 - b0, c1, ...]`` as TEXT), which are still read. An empty histogram is NULL.
"""

from __future__ import annotations

import json
import sys
import zlib
from array import array
from collections.abc import Mapping, Sequence
from itertools import accumulate
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from app.model.metrics import Metrics, hist_percentile, merge_hist

if TYPE_CHECKING:
    import numpy as np

from .schema import METRIC_COLUMNS

METRIC_NAMES: tuple[str, ...] = tuple(name for name, _ in METRIC_COLUMNS)


_metric_values = attrgetter(*METRIC_NAMES)


def metric_values(m: Metrics) -> tuple[Any, ...]:
    values = _metric_values(m)
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
_TYPECODES = {_U32: "I", _U64: "Q"}  # array typecodes; both are 4 and 8 bytes on every platform we run on
_BIG = sys.byteorder == "big"


def _flat_to_blob(flat: list[int]) -> bytes:
    fmt = _U32 if max(flat) < 1 << 32 else _U64
    arr = array(_TYPECODES[fmt], flat)
    if _BIG:  # pragma: no cover - big-endian hosts only (the blobs are little-endian)
        arr.byteswap()
    return bytes((fmt,)) + zlib.compress(arr.tobytes(), 6)


def _blob_to_flat(value: bytes) -> list[int]:
    arr = array(_TYPECODES[value[0]])
    arr.frombytes(zlib.decompress(value[1:]))
    if _BIG:  # pragma: no cover - big-endian hosts only (the blobs are little-endian)
        arr.byteswap()
    return arr.tolist()


def encode_hist(hist: Mapping[int, int]) -> bytes | None:
    arrays = getattr(hist, "bucket_arrays", None)  # telemetry's count arrays: no dict is made
    if arrays is not None:
        values, all_counts = arrays()
        used = all_counts.nonzero()[0]
        buckets, counts = values[used].tolist(), all_counts[used].tolist()
    else:
        buckets = sorted(int(b) for b in hist)
        counts = [int(hist[b]) for b in buckets]
    if not buckets:
        return None
    if counts and (min(counts) < 0 or buckets[0] < 0):
        raise ValueError("a latency histogram holds negative buckets or counts")
    return _flat_to_blob([b - a for a, b in zip([0, *buckets], buckets, strict=False)] + counts)


def _flat_hist(value: bytes | str) -> tuple[list[int], list[int]]:
    if isinstance(value, str):  # version 2: JSON [b0, c0, b1 - b0, c1, ...]
        flat = json.loads(value)
        return list(accumulate(flat[0::2])), flat[1::2]
    flat = _blob_to_flat(value)
    n = len(flat) // 2
    return list(accumulate(flat[:n])), flat[n:]


def decode_hist(value: bytes | str | None) -> dict[int, int]:
    if not value:
        return {}
    buckets, counts = _flat_hist(value)
    return dict(zip(buckets, counts, strict=True))


def decode_hist_arrays(value: bytes | str | None) -> tuple[np.ndarray, np.ndarray]:
    """(buckets ns, counts) as int64 arrays, buckets ascending; both empty for NULL."""
    import numpy as np

    if not value:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    if isinstance(value, str):
        buckets, counts = _flat_hist(value)
        return np.array(buckets, dtype=np.int64), np.array(counts, dtype=np.int64)
    # the current format, straight into numpy (a heat map over an hour decodes thousands of these)
    flat = np.frombuffer(zlib.decompress(value[1:]), dtype="<u4" if value[0] == _U32 else "<u8").astype(
        np.int64
    )
    n = len(flat) // 2
    return np.cumsum(flat[:n]), flat[n:]


def recode_hist(value: bytes | str | None) -> bytes | None:
    """A stored histogram (either format) in the current format."""
    return encode_hist(decode_hist(value)) if value else None


def hists_p99_ns(read: bytes | str | None, write: bytes | str | None) -> float | None:
    """The 99th percentile (ns) of read and write latencies together, from stored histograms (as
    ``Metrics.percentile_ms(99)`` gives it in ms)."""
    both = decode_hist(read)
    merge_hist(both, decode_hist(write))
    return hist_percentile(both, 99)


_ZIPPED = b"z"  # fio's output is text; a BLOB starting with this is zlib-compressed UTF-8


def pack_text(text: str | None) -> bytes | str | None:
    """Long text (fio's raw output) as stored: compressed."""
    return None if text is None else _ZIPPED + zlib.compress(text.encode("utf-8"), 6)


def unpack_text(value: bytes | str | None) -> str | None:
    if isinstance(value, bytes):
        return zlib.decompress(value[1:]).decode("utf-8")
    return value
