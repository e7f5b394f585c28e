"""Peak decimation keeps spikes and gaps, at once or incrementally."""

import numpy as np

from app.ui.run.decimate import clip_indices, peak_decimate


def test_peak_decimation_keeps_spikes_and_gaps() -> None:
    x = np.arange(1000, dtype=float)
    ys = np.ones((2, 1000), dtype=np.float32)
    ys[0, 500] = 50.0  # a one-second spike
    ys[1, 700] = np.nan  # a gap between steps
    dx, dy = peak_decimate(x, ys, bins=50)
    assert len(dx) <= 100 and dy.shape == (2, len(dx))
    assert dy[0].max() == 50.0
    assert np.isnan(dy[1]).sum() == 2 and np.nanmax(dy[1]) == 1.0
    assert np.all(np.diff(dx) >= 0)


def test_short_series_are_not_decimated() -> None:
    x = np.arange(10, dtype=float)
    ys = np.arange(20, dtype=np.float32).reshape(2, 10)
    dx, dy = peak_decimate(x, ys, bins=50)
    assert dx is x and dy is ys


def test_clip_indices() -> None:
    x = np.arange(100, dtype=float)
    assert clip_indices(x, None) == (0, 100)
    assert clip_indices(x, (10.5, 20.5)) == (10, 22)  # one point beyond each edge
    assert clip_indices(x, (-5, 500)) == (0, 100)


def test_incremental_binning_equals_decimating_everything_at_once() -> None:
    from app.ui.run.decimate import BinnedPeaks

    rng = np.random.default_rng(3)
    x = np.arange(1, 1001, dtype=float)
    ys = rng.standard_normal((3, 1000))
    ys[1, 400] = np.nan
    inc = BinnedPeaks(0.0, 1200.0, 100, 3)
    for n in (5, 6, 50, 333, 334, 700, 1000):
        got_x, got_y = inc.update(x, ys, n)
    once_x, once_y = BinnedPeaks(0.0, 1200.0, 100, 3).update(x, ys, 1000)
    assert np.array_equal(got_x, once_x)
    assert np.array_equal(got_y, once_y, equal_nan=True)
    assert len(got_x) <= 200 and np.nanmax(got_y[0]) == ys[0].max()
    assert np.isnan(got_y[1]).sum() == 2
