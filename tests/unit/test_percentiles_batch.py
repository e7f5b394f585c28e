"""Percentiles of many windows at once (the live charts' p99 of every series each second) equal each
window's own percentile, whatever its histograms are: telemetry's bucket arrays, plain dicts, or empty.
Rolling windows up keeps array histograms as arrays, with the same sums as merging dicts."""

from __future__ import annotations

import numpy as np
import pytest

from app.engine.sampling.telemetry import BUCKET_NS
from app.model.bucket_hist import BucketHist
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


def test_rolling_up_array_histograms_sums_them_in_numpy() -> None:
    rng = np.random.default_rng(5)
    parts = [
        Metrics(read_ios=i, read_hist=_arrays(rng, 300 + i, 420), write_hist=_arrays(rng, 350, 500 - i))
        for i in range(32)
    ] + [Metrics(read_ios=1)]  # a window with nothing measured: empty dicts
    total = Metrics.combine(parts)
    assert isinstance(total.read_hist, BucketHist) and isinstance(total.write_hist, BucketHist)
    as_dicts = Metrics.combine(
        [
            Metrics(read_ios=m.read_ios, read_hist=dict(m.read_hist), write_hist=dict(m.write_hist))
            for m in parts
        ]
    )
    assert dict(total.read_hist) == as_dicts.read_hist and dict(total.write_hist) == as_dicts.write_hist
    assert total.read_ios == as_dicts.read_ios == sum(range(32)) + 1
    assert total.percentile_ms(99) == as_dicts.percentile_ms(99)
    assert Metrics.combine([parts[0]]).read_hist is parts[0].read_hist  # read-only: shared, not copied
    mixed = Metrics.combine([parts[0], Metrics(read_hist={5_000: 2})])  # a dict among arrays: a dict
    assert type(mixed.read_hist) is dict and mixed.read_hist[5_000] == 2 + dict(parts[0].read_hist).get(
        5_000, 0
    )
    total.add_counts(Metrics(read_hist={5_000: 3}))  # adding to a roll-up copies its arrays into a dict once
    assert type(total.read_hist) is dict and total.read_hist[5_000] == as_dicts.read_hist.get(5_000, 0) + 3


def test_hundreds_of_windows_done_a_few_dozen_at_a_time_equal_one_by_one() -> None:
    rng = np.random.default_rng(11)
    windows = []
    for i in range(300):  # several chunks of rows, reads-only and reads + writes mixed in each
        lo = int(rng.integers(0, len(BUCKET_NS) - 200))
        read = _arrays(rng, lo, lo + int(rng.integers(1, 200)))
        windows.append(
            Metrics(read_hist=read, write_hist=_arrays(rng, lo, lo + 50))
            if i % 3
            else Metrics(read_hist=read)
        )
    for pct in (50.0, 99.0):
        assert percentiles_ms(windows, pct) == [m.percentile_ms(pct) for m in windows]
