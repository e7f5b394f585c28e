"""Percentiles of many windows at once (the live charts' p99 of every series each second) equal each
window's own percentile, whatever its histograms are: telemetry's bucket arrays, plain dicts, or empty."""

from __future__ import annotations

import numpy as np
import pytest

from app.engine.telemetry import BUCKET_NS, BucketHist
from app.model.metrics import Metrics, percentiles_ms


def _arrays(rng: np.random.Generator, lo: int, hi: int) -> BucketHist:
    counts = np.zeros(len(BUCKET_NS), dtype=np.int64)
    counts[lo:hi] = rng.integers(0, 50, hi - lo)
    return BucketHist(BUCKET_NS, counts)


@pytest.mark.parametrize("pct", [0.0, 50.0, 99.0, 99.9, 100.0])
def test_batch_equals_one_by_one(pct: float) -> None:
    rng = np.random.default_rng(3)
    windows = [
        Metrics(read_hist=_arrays(rng, 300, 420), write_hist=_arrays(rng, 350, 500)),
        Metrics(read_hist=_arrays(rng, 600, 640)),  # no writes: an empty dict
        Metrics(write_hist=_arrays(rng, 100, 101)),
        Metrics(read_hist={1_000_000: 5, 2_000_000: 95}),  # plain dicts take the one-by-one way
        Metrics(),  # nothing measured: None
        Metrics(read_hist=BucketHist(BUCKET_NS, np.zeros(len(BUCKET_NS), dtype=np.int64))),
        Metrics(read_hist=_arrays(rng, 0, len(BUCKET_NS)), write_hist={3_000: 7}),  # mixed: one by one
    ]
    got = percentiles_ms(windows, pct)
    want = [m.percentile_ms(pct) for m in windows]
    assert got == want
    assert got[4] is None and got[5] is None and got[0] is not None
