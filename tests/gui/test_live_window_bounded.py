"""A live run's window keeps a bounded number of points however long the run (issue 27): old points are
thinned to min/max buckets, the newest stay whole, and the charts still show every peak and follow the run."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QImage

from app.live.data import ALL_KEY, LAST, MAX_POINTS, RECENT_POINTS, WHOLE, LiveResults
from app.live.decimate import bucket_extremes
from app.ui.charts.chart_grid import ChartGrid
from tests.gui.test_live_data import FakeSample, window
from tests.platform_marks import wine_limit


def test_bucket_extremes_keep_each_bucket_s_minimum_and_maximum() -> None:
    x = np.arange(100, dtype=np.float64)
    v = np.vstack([np.sin(x / 7.0), np.cos(x / 5.0)]).astype(np.float32)
    v[0, 37] = 50.0  # a spike
    v[1, 81] = np.nan  # a second not measured: skipped, the bucket keeps its numbers
    xs, (out,) = bucket_extremes(x, [v], 10)
    assert len(xs) == 20 and np.all(np.diff(xs) >= 0)
    for b in range(10):
        sl = slice(10 * b, 10 * b + 10)
        assert out[0, 2 * b] == v[0, sl].min() and out[0, 2 * b + 1] == v[0, sl].max()
        assert out[1, 2 * b] == np.nanmin(v[1, sl]) and out[1, 2 * b + 1] == np.nanmax(v[1, sl])
        assert (xs[2 * b], xs[2 * b + 1]) == (10 * b, 10 * b + 9)
    again_x, (again,) = bucket_extremes(xs, [out], 4)  # thinning the thinned keeps the extremes
    assert again[0].max() == 50.0 and again[0].min() == v[0].min()
    assert again_x[0] == 0 and again_x[-1] == 99


def _feed(live: LiveResults, seconds: int, workers: int, spike_at: int, dip_at: int) -> None:
    for t in range(1, seconds + 1):
        ios = 1000 + (t % 17)
        if t == dip_at:
            ios = 3  # a stall: the IOPS chart's minimum
        lat_max = 500.0 if t == spike_at else 2.0 + (t % 5) / 10
        iv = window(1.0, ios, 1.0, lat_max)
        batch = [FakeSample("M1", "worker", f"w{w}", float(t), iv, iv) for w in range(1, workers + 1)]
        batch.append(FakeSample(None, "all", "ALL", float(t), iv, iv))
        live.defer(0.0, batch)
        if t % 10 == 0:
            live.flush()
    live.flush()


def test_a_long_feed_keeps_points_bounded_with_its_peaks_and_the_newest_seconds_whole() -> None:
    live = LiveResults(update_seconds=1)
    seconds = 3 * MAX_POINTS  # 51 min of 1-s points
    _feed(live, seconds, workers=2, spike_at=100, dip_at=1000)
    assert live.thinned > 0
    for s in live.series.values():
        assert s.n <= MAX_POINTS
        assert np.all(np.diff(s.xs()) >= 0)
    assert all(b.x.shape[1] <= MAX_POINTS for b in live.blocks.values())  # the room kept, not only the points
    s = live.series[ALL_KEY]
    assert s.xs()[-1] == seconds and s.xs()[0] == 1.0  # the whole run still spans the axis
    assert list(s.xs()[-RECENT_POINTS:]) == list(np.arange(seconds - RECENT_POINTS + 1, seconds + 1.0))
    assert s.ys(LAST, "lat_max_ms").max() == 500.0  # the spike 50 min before the end is still there
    assert s.ys(LAST, "iops").min() == 3.0  # and the stall
    assert s.ys(WHOLE, "lat_max_ms").max() == 500.0


@wine_limit("this chart grid's window (once, on a loaded machine: CreateWindowEx failed, a Qt warning)")
def test_the_charts_of_a_long_feed_show_its_peak_and_follow_the_run(qtbot) -> None:
    grid = ChartGrid()
    qtbot.addWidget(grid)
    grid.resize(1000, 600)
    live = LiveResults(update_seconds=1, max_points=256)
    keys = [
        ("worker", "M1", f"w{w}") for w in range(1, 15)
    ]  # more than a legend's worth: the many-lines item
    grid.set_series(keys, [k[2] for k in keys])
    grid.show()
    qtbot.waitExposed(grid)
    seconds = 1800
    for t0 in range(0, seconds, 300):  # redrawn every 5 minutes as the run goes on
        _feed_range(live, t0, 300, len(keys), spike_at=150)
        grid.redraw(live, LAST)
    assert max(s.n for s in live.series.values()) <= 256 and live.thinned > 0
    lat = next(c for c in grid.charts if c.spec.field == "lat_max_ms")
    drawn = np.concatenate(lat.many.colour_lines())
    assert drawn[:, [1, 3]].max() == 500.0  # the spike of minute 2, thinned many times, still drawn
    assert lat.y_top >= 500.0
    assert drawn[:, [0, 2]].max() == seconds and grid.x_top >= seconds  # the axis follows the run
    img = grid.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    assert not img.isNull()


def _feed_range(live: LiveResults, t0: int, count: int, workers: int, spike_at: int) -> None:
    for t in range(t0 + 1, t0 + count + 1):
        iv = window(1.0, 1000 + t % 13, 1.0, 500.0 if t == spike_at else 2.0)
        live.defer(
            0.0, [FakeSample("M1", "worker", f"w{w}", float(t), iv, iv) for w in range(1, workers + 1)]
        )
    live.flush()


def test_batches_charted_on_the_runner_s_thread_feed_the_same_points() -> None:
    from app.live.data import charted

    plain, pre = LiveResults(update_seconds=1), LiveResults(update_seconds=1)
    for t in range(1, 40):
        iv = window(1.0, 500 + 7 * t, 1.0 + t / 10, 3.0 + t % 4, {1_000_000 * (1 + t % 3): 10, 5_000_000: t})
        batch = [FakeSample("M1", "worker", f"w{w}", float(t), iv, iv) for w in (1, 2)]
        batch.append(FakeSample(None, "all", "ALL", float(t), iv, iv, final=t == 39))
        plain.defer(0.0, list(batch))
        pre.defer(0.0, charted(batch))
        if t % 3 == 0:
            plain.flush()
            pre.flush()
    plain.flush()
    pre.flush()
    assert set(plain.series) == set(pre.series)
    for key, s in plain.series.items():
        p = pre.series[key]
        assert np.array_equal(s.xs(), p.xs())
        for k in (WHOLE, LAST):
            assert np.array_equal(s.values[k][:, : s.n], p.values[k][:, : p.n], equal_nan=True)
    assert np.isfinite(pre.series[ALL_KEY].ys(LAST, "p99_ms")).all()
