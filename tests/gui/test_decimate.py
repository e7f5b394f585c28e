"""Peak decimation of many series at once keeps spikes and gaps, at once or incrementally."""

import numpy as np

from app.live.decimate import PeakGrid, clip_indices


def _rows(xs: list[np.ndarray], ys: list[np.ndarray]):
    """take() over rows of different lengths and x (padded with NaN)."""
    width = max(len(x) for x in xs)
    X = np.full((len(xs), width), np.nan)
    V = np.full((len(xs), width, ys[0].shape[0]), np.nan)
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        X[i, : len(x)] = x
        V[i, : len(x)] = y.T
    return lambda r, c: (X[r, c], V[r, c])


def test_each_bin_keeps_its_extremes_spikes_and_gaps() -> None:
    x = np.arange(1000, dtype=float)
    ys = np.ones((2, 1000))
    ys[0, 500] = 50.0  # a one-second spike
    ys[1, 700] = np.nan  # a gap between steps
    g = PeakGrid(0.0, 1000.0, 50, 1, 2)
    assert g.update(_rows([x], [ys]), np.array([1000])) == 0
    assert g.has[0].all() and g.hi[0, 0].max() == 50.0 and g.hi[0, 0, 25] == 50.0 and g.lo[0, 0, 25] == 1.0
    assert np.isnan(g.hi[0, 1]).sum() == 1 and np.isnan(g.hi[0, 1, 35])  # the gap's bin only
    assert g.xf[0, 3] == 60.0 and g.xl[0, 3] == 79.0  # a bin's first and last point


def test_rows_with_their_own_x_and_length() -> None:
    xs = [np.arange(1, 101, dtype=float), np.arange(50.5, 80.5, dtype=float)]  # a worker that joined later
    ys = [np.arange(100, dtype=float)[None, :], np.full((1, 30), 7.0)]
    g = PeakGrid(0.0, 100.0, 10, 2, 1)
    g.update(_rows(xs, ys), np.array([100, 30]))
    assert not g.has[1, :5].any() and g.has[1, 5:8].all() and not g.has[1, 8:].any()
    assert g.lo[1, 0, 5] == 7.0 and g.xf[1, 5] == 50.5 and g.xl[1, 7] == 79.5
    assert g.lo[0, 0, 0] == 0.0 and g.hi[0, 0, 0] == 8.0  # x 1..9 in bin 0


def test_incremental_update_equals_everything_at_once() -> None:
    rng = np.random.default_rng(3)
    xs = [np.arange(1, 1001, dtype=float), np.arange(1, 1001, dtype=float) + 0.3]
    ys = [rng.standard_normal((3, 1000)).astype(np.float32) for _ in xs]
    ys[1][1, 400] = np.nan
    take = _rows(xs, ys)
    inc = PeakGrid(0.0, 1200.0, 100, 2, 3)
    changed = []
    for n in (5, 6, 50, 333, 334, 700, 1000):
        changed.append(inc.update(take, np.array([n, max(n - 3, 0)])))
    assert (
        inc.update(take, np.array([1000, 1000])) == 83
    )  # the last bin is read again (its last point may change)
    once = PeakGrid(0.0, 1200.0, 100, 2, 3)
    once.update(take, np.array([1000, 1000]))
    for name in ("lo", "hi", "xf", "xl", "has"):
        assert np.array_equal(getattr(inc, name), getattr(once, name), equal_nan=True), name
    assert changed[:2] == [0, 0] and changed[3] == 3  # from the unfinished bins on (x 36.. of the second row)
    assert np.nanmax(once.hi[0, 0]) == ys[0][0].max() and np.isnan(once.hi[1, 1][once.has[1]]).sum() == 1


def test_clip_indices() -> None:
    x = np.arange(100, dtype=float)
    assert clip_indices(x, None) == (0, 100)
    assert clip_indices(x, (10.5, 20.5)) == (10, 22)  # one point beyond each edge
    assert clip_indices(x, (-5, 500)) == (0, 100)
