"""Metrics <-> database values.

Scalars are one column each (``schema.METRIC_COLUMNS``). A latency histogram (bucket ns -> count) is
compact JSON: a flat list ``[b0, c0, b1 - b0, c1, ...]`` over buckets in ascending order, buckets
delta-encoded because fio's bucket values are long numbers close together. An empty histogram is NULL.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

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


def encode_hist(hist: dict[int, int]) -> str | None:
    if not hist:
        return None
    flat: list[int] = []
    prev = 0
    for bucket in sorted(hist):
        b = int(bucket)
        flat += (b - prev, int(hist[bucket]))
        prev = b
    return json.dumps(flat, separators=(",", ":"))


def decode_hist(text: str | None) -> dict[int, int]:
    if not text:
        return {}
    flat = json.loads(text)
    out: dict[int, int] = {}
    bucket = 0
    for i in range(0, len(flat), 2):
        bucket += flat[i]
        out[bucket] = flat[i + 1]
    return out
