"""Issue 28 point 5: the live charts' time axis follows the run (never twice the run once it has ended); lines
are continuous at any update frequency (an .icf's 4 s updates with 5 s steps); p99 is clearly visible; every
step label is drawn; Remaining counts fio's start-up of each step."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QPainterPath

from app.live.data import ALL_KEY, LAST, LiveResults
from app.ui.charts.chart_grid import DEFAULT_FIELDS, ChartGrid, ChartScroller, ahead
from app.ui.history.stored_series import ReplaySample
from app.ui.run.run_driver import STARTUP_GUESS_S, RunProgress
from tests.gui.test_chart_statistics import sample_metrics


def subpaths(path: QPainterPath) -> int:
    return sum(
        path.elementAt(i).type == QPainterPath.ElementType.MoveToElement for i in range(path.elementCount())
    )


def fed(update_s: int, steps: int, step_s: int, startup_s: float = 1.0) -> LiveResults:
    live = LiveResults(update_seconds=update_s)
    for st in range(steps):
        offset = st * (step_s + startup_s)
        live.start_step(offset, f"{st + 1}: Spec {st + 1}")
        for t in range(1, step_s + 1):
            m = sample_metrics(t, st)
            live.add(offset, [ReplaySample("all", None, "ALL", float(t), m, m, final=t == step_s)])
    return live


@pytest.fixture
def charts(qtbot):
    g = ChartGrid()
    view = ChartScroller(g)
    qtbot.addWidget(view)
    view.resize(1100, 300)  # a laptop's Results Display: four charts in a row
    view.show()
    qtbot.waitExposed(view)
    g.set_series([ALL_KEY], ["All Managers"])
    yield g  # (the view stays referenced while the test runs)
    view.close()


@pytest.mark.parametrize("x", [11, 38, 41, 99, 101, 777, 3600])
def test_the_time_axis_stays_within_half_again_the_run(x: float) -> None:
    assert 1.25 * x <= ahead(x) <= 1.5 * x


def test_after_the_run_the_time_axis_spans_the_run(charts: ChartGrid) -> None:
    live = fed(1, steps=3, step_s=12)
    charts.redraw(live, LAST)
    x_max = float(live.series[ALL_KEY].xs()[-1])
    assert x_max == 38.0
    during = charts.charts[0].plot.viewRange()[0]
    assert x_max < during[1] <= 1.5 * x_max
    charts.fit_x_to_data()
    after = charts.charts[0].plot.viewRange()[0]
    assert after[0] <= 0 and x_max <= after[1] <= 1.02 * x_max
    charts.redraw(live, LAST, force=True)  # the last tick after the end does not widen it again
    assert charts.charts[0].plot.viewRange()[0][1] <= 1.02 * x_max


@pytest.mark.parametrize("update_s", [1, 4, 10, 0])
def test_lines_are_continuous_at_any_update_frequency(charts: ChartGrid, update_s: int) -> None:
    live = fed(update_s, steps=4, step_s=5)  # the .icf's 4 s updates with 5 s steps, and others
    charts.redraw(live, LAST)
    for c in charts.charts:
        assert subpaths(c.curves[0].curve.getPath()) == 1, c.spec.field
    lat = charts.charts[DEFAULT_FIELDS.index("lat_mean_ms")]
    assert subpaths(lat.p99[0].curve.getPath()) == 1
    assert lat.p99_dots[0].getData()[0] is None or len(lat.p99_dots[0].getData()[0]) == 0


def test_p99_is_as_wide_as_the_average(charts: ChartGrid) -> None:
    charts.redraw(fed(1, 2, 5), LAST)
    lat = charts.charts[DEFAULT_FIELDS.index("lat_mean_ms")]
    assert lat.p99[0].opts["pen"].widthF() >= lat.curves[0].opts["pen"].widthF() >= 1.5


def test_every_step_label_is_drawn(charts: ChartGrid, qtbot) -> None:
    live = fed(4, steps=6, step_s=5)
    charts.redraw(live, LAST)
    charts.fit_x_to_data()
    qtbot.wait(50)
    for c in charts.charts:
        lo, hi = c.plot.viewRange()[0]
        width = c.steps.width()
        assert 150 < width < 300  # a chart in a row of four
        shown = c.steps.tickValues(lo, hi, width)[0][1]
        assert c.steps.tickStrings(shown, 1.0, 1.0) == [f"#{i}" for i in range(1, 7)]


def test_remaining_counts_each_steps_start_up() -> None:
    p = RunProgress(3, 0, 100.0, 0.0, [5.0, 5.0, 5.0])
    assert p.remaining(now=100.0) == 3 * (5.0 + STARTUP_GUESS_S)
    p.begin_step(1, now=100.5)
    p.begin_step(2, now=108.5)  # step 1 took 8 s: 3 s beyond its 5 s of ramp + run
    assert p.overhead() == 3.0
    assert p.remaining(now=108.5) == pytest.approx((5 + 3) + (5 + 3))
    assert p.remaining(now=115.0) == pytest.approx(1.5 + 8)  # step 2 still starting or ending: not 0
