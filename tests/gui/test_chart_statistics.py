"""The charts as Iometer's Results Display, better: each chart's statistic chosen from a menu (and
remembered), the p99 line one connected line at every update frequency, step names in a band above the
plot (never on the data), "not measured" where the numbers do not exist, and the system's light/dark
scheme followed by the live and the stored charts."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPainterPath

from app.engine.run.runner import RunOptions
from app.live.data import ALL_KEY, LAST, WHOLE, LiveResults
from app.model import planfile
from app.model.metrics import Metrics
from app.store import open_store
from app.store.recorder import Recorder
from app.store.records import ManagerInfo, SampleRow
from app.ui import theme
from app.ui.charts.chart_grid import DEFAULT_FIELDS, NOT_MEASURED, ChartGrid
from app.ui.history.run_view import RunView
from app.ui.history.stored_series import ReplaySample
from app.ui.main_window import MainWindow
from app.ui.settings import app_settings
from tests.gui.conftest import local_plan
from tests.helpers import grid

STEP_S = 12


def sample_metrics(t: int, step: int, hist: bool = True) -> Metrics:
    """One second of a level: numbers that differ per field, so a chart showing the wrong one is seen."""
    ios = 1000 + 10 * t + 100 * step
    m = Metrics(
        seconds=1.0,
        read_ios=ios,
        read_bytes=ios * 4096,
        read_iops=float(ios),
        read_bps=ios * 4096.0,
        read_lat_sum_ns=ios * (200_000.0 + 1000 * t),
        read_lat_n=ios,
        read_lat_max_ns=900_000.0 + t,
        usr_cpu=10.0 + t,
        sys_cpu=5.0,
        errors=t % 3,
    )
    if hist:
        m.read_hist = {150_000: ios - 20, 800_000 + 1000 * t: 20}
    return m


def fed(update_s: int, steps: int = 2, hist: bool = True) -> LiveResults:
    """What the runner hands the charts: one ALL sample a second, ``steps`` steps of STEP_S seconds."""
    live = LiveResults(update_seconds=update_s)
    for st in range(steps):
        offset = st * (STEP_S + 1.0)
        live.start_step(offset, f"{st + 1}: Spec {st + 1}")
        for t in range(1, STEP_S + 1):
            m = sample_metrics(t, st, hist)
            live.add(offset, [ReplaySample("all", None, "ALL", float(t), m, m, final=t == STEP_S)])
    return live


def subpaths(path: QPainterPath) -> int:
    return sum(
        path.elementAt(i).type == QPainterPath.ElementType.MoveToElement for i in range(path.elementCount())
    )


def shown(item) -> tuple[np.ndarray, np.ndarray]:
    x, y = item.getData()
    return (np.array([]), np.array([])) if x is None else (x, y)


@pytest.fixture
def charts(qtbot) -> ChartGrid:
    g = ChartGrid(remember="results")
    qtbot.addWidget(g)
    g.resize(900, 600)
    g.show()
    qtbot.waitExposed(g)
    return g


@pytest.mark.parametrize("update_s", [1, 2, 4, 10])
def test_p99_is_one_connected_line_through_the_steps_at_every_update_frequency(
    charts: ChartGrid, update_s: int
) -> None:
    live = fed(update_s)
    charts.set_series([ALL_KEY], ["All Managers"])
    charts.redraw(live, LAST)
    lat = charts.charts[DEFAULT_FIELDS.index("lat_mean_ms")]
    assert lat.spec.dashed == "p99_ms"
    s = live.series[ALL_KEY]
    per_step = math.ceil(STEP_S / update_s) if update_s > 1 else STEP_S
    assert s.n == 2 * per_step  # the points of two steps, joined
    p99 = lat.p99[0]
    assert p99.opts["symbol"] is None  # no marker at each point: they broke the line up into triangles
    assert p99.opts["pen"].style() == Qt.PenStyle.CustomDashLine
    path = p99.curve.getPath()
    assert subpaths(path) == 1  # one connected line through every step
    assert shown(lat.p99_dots[0])[0].size == 0  # nothing stands alone


def test_steps_of_one_point_each_are_joined_by_one_line(charts: ChartGrid) -> None:
    live = fed(0)  # "∞": one point per step, at its end
    charts.set_series([ALL_KEY], ["All Managers"])
    charts.redraw(live, LAST)
    lat = charts.charts[DEFAULT_FIELDS.index("lat_mean_ms")]
    assert shown(lat.p99_dots[0])[0].size == 0  # no lone dots: the points are joined
    x, y = shown(lat.p99[0])
    assert list(x) == [STEP_S, 2 * STEP_S + 1.0] and np.isfinite(y).all()
    assert subpaths(lat.p99[0].curve.getPath()) == 1


def test_step_names_sit_in_a_band_above_the_plot(charts: ChartGrid) -> None:
    live = fed(1, steps=3)
    charts.set_series([ALL_KEY], ["All Managers"])
    charts.redraw(live, LAST)
    for c in charts.charts:
        assert [label for _x, label in c.steps.marks] == ["#1", "#2", "#3"]
        assert list(c.marks.xs) == [0.0, 13.0, 26.0]  # one item draws every boundary, no text over the data
        view = c.plot.getViewBox().geometry()
        band = c.steps.geometry()
        assert band.bottom() <= view.top() + 0.5 and band.height() > 0
        values = c.steps.tickValues(0.0, 50.0, 400.0)[0][1]
        assert values == [0.0, 13.0, 26.0]
        assert c.steps.tickStrings(values, 1.0, 1.0) == ["#1", "#2", "#3"]
    # crowded at a small scale: only labels that do not run into each other
    assert charts.charts[0].steps.tickValues(0.0, 5000.0, 400.0)[0][1] == [0.0]


def test_each_chart_shows_the_statistic_chosen_and_it_is_remembered(charts: ChartGrid, qtbot) -> None:
    assert tuple(c.spec.field for c in charts.charts) == DEFAULT_FIELDS  # today's four charts by default
    live = fed(1)
    charts.set_series([ALL_KEY], ["All Managers"])
    charts.redraw(live, LAST)
    s = live.series[ALL_KEY]
    first = charts.charts[0]
    np.testing.assert_array_equal(shown(first.curves[0])[1], s.ys(LAST, "iops"))

    with qtbot.waitSignal(charts.statistic_changed) as changed:
        first.menu.setCurrentIndex(first.menu.findData("cpu_pct"))
    assert changed.args == [0, "cpu_pct"]
    y = shown(first.curves[0])[1]
    np.testing.assert_array_equal(y, s.ys(LAST, "cpu_pct"))
    assert np.nanmax(y) == pytest.approx(10.0 + STEP_S + 5.0)  # fio's user + system CPU
    assert first.plot.getAxis("left").labelText == "%"
    assert first.plot.viewRange()[1][1] >= np.nanmax(y)  # the axis follows the new statistic

    lat = charts.charts[2]
    lat.menu.setCurrentIndex(lat.menu.findData("p99_ms"))
    assert lat.p99 == [] and lat.plot.getAxis("left").labelText == "ms"  # p99 alone, solid
    np.testing.assert_array_equal(shown(lat.curves[0])[1], s.ys(LAST, "p99_ms"))
    assert "dashed" not in charts.legend.text()
    charts.set_statistic(3, "errors")
    errors = shown(charts.charts[3].curves[0])[1]
    assert np.nansum(errors) == sum(t % 3 for t in range(1, STEP_S + 1)) * 2  # each interval's errors

    assert app_settings().value("charts/results") == ["cpu_pct", "mbps", "p99_ms", "errors"]
    again = ChartGrid(remember="results")
    qtbot.addWidget(again)
    assert [c.spec.field for c in again.charts] == ["cpu_pct", "mbps", "p99_ms", "errors"]
    assert [c.menu.currentData() for c in again.charts] == ["cpu_pct", "mbps", "p99_ms", "errors"]
    app_settings().setValue(
        "charts/results", ["nonsense", "iops"]
    )  # a damaged setting: defaults where unknown
    third = ChartGrid(remember="results")
    qtbot.addWidget(third)
    assert [c.spec.field for c in third.charts] == ["iops", "iops", "lat_mean_ms", "lat_max_ms"]


def test_a_statistic_without_numbers_says_not_measured(charts: ChartGrid) -> None:
    live = fed(1, hist=False)  # no latency histograms: no percentile
    charts.set_series([ALL_KEY], ["All Managers"])
    charts.set_statistic(1, "p99_ms")
    charts.redraw(live, LAST, force=True)
    assert charts.charts[1].note.isVisible() and charts.charts[1].note.textItem.toPlainText() == NOT_MEASURED
    assert not charts.charts[0].note.isVisible()
    charts.unmeasured = {"cpu_pct": "not measured: imported"}
    charts.set_statistic(0, "cpu_pct")
    assert charts.charts[0].note.textItem.toPlainText() == "not measured: imported"
    assert shown(charts.charts[0].curves[0])[0].size == 0  # no flat line of zeros pretending to be a number


def db_path() -> Path:
    return Path(os.environ["FIOMETER_DB"])


def stored_run() -> int:
    """A run of two steps with samples of ALL carrying CPU and errors (the real Recorder, no fio)."""
    plan = grid(1, 1, 1, specs=("A", "B"), qd=4)
    with open_store(db_path()) as store:
        rec = Recorder(store)
        run_id = rec.begin_run(planfile.to_dict(plan), plan_name="P", name="cpu and errors")
        rec.add_managers(run_id, [ManagerInfo("M1", "local", "Linux", "3.33")])
        for si in range(2):
            step = rec.begin_step(run_id, si, spec_name="AB"[si], queue_depth=4, run_s=STEP_S)
            for t in range(1, STEP_S + 1):  # one interval at a time, as a run records them
                rec.add_samples(
                    step,
                    [SampleRow(None, "all", "ALL", float(t), sample_metrics(t, si), sample_metrics(t, si))],
                )
            rec.end_step(step, "complete")
        rec.end_run(run_id, "complete")
    return run_id


def open_stored(window: MainWindow, qtbot, run_id: int) -> RunView:
    ui = window.history
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.show_history()
    ui.open_run(run_id)
    view = ui.workspace.currentWidget()
    assert isinstance(view, RunView)
    qtbot.waitUntil(lambda: view.data is not None, timeout=10000)
    return view


def test_stored_run_charts_offer_the_same_statistics(window: MainWindow, qtbot) -> None:
    run_id = stored_run()
    view = open_stored(window, qtbot, run_id)
    iops = view.charts.charts[0]
    iops.menu.setCurrentIndex(iops.menu.findData("cpu_pct"))
    x, y = shown(iops.curves[0])
    finite = np.isfinite(y)
    assert finite.sum() == 2 * STEP_S
    expected = [10.0 + t + 5.0 for t in range(1, STEP_S + 1)] * 2
    np.testing.assert_allclose(y[finite], expected, rtol=1e-6)
    view.charts.set_statistic(1, "errors")
    y = shown(view.charts.charts[1].curves[0])[1]
    assert list(y[np.isfinite(y)]) == [t % 3 for t in range(1, STEP_S + 1)] * 2
    assert app_settings().value("charts/history")[:2] == ["cpu_pct", "errors"]
    # since the step's start: the stored whole-step window keeps no histograms
    view.charts.set_statistic(2, "p99_ms")
    view.since_start.setChecked(True)
    note = view.charts.charts[2].note
    assert note.isVisible() and note.textItem.toPlainText().startswith(NOT_MEASURED)
    view.each_interval.setChecked(True)
    assert not note.isVisible()


def test_system_scheme_change_rethemes_live_and_stored_charts(window: MainWindow, qtbot, monkeypatch) -> None:
    run_id = stored_run()
    view = open_stored(window, qtbot, run_id)
    window.set_theme(theme.SYSTEM)

    def background(grid: ChartGrid) -> int:
        return grid.charts[0].widget.backgroundBrush().color().lightness()

    assert background(window.results_tab.charts) > 200 and background(view.charts) > 200
    monkeypatch.setattr(theme, "system_is_dark", lambda: True)
    # what the desktop's switch does (QStyleHints cannot change the scheme on the offscreen platform)
    QGuiApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    qtbot.waitUntil(lambda: background(window.results_tab.charts) < 80 and background(view.charts) < 80)
    # ... and the rest of the window, as drawn (widgets styled by the application's style sheet kept the old
    # colours when the palette changed at run time)
    tree = window.topology.viewport()
    qtbot.waitUntil(
        lambda: tree.grab().toImage().pixelColor(tree.width() - 4, tree.height() - 4).lightness() < 80
    )
    axis = view.charts.charts[0].plot.getAxis("left")
    assert axis.textPen().color().lightness() > 180  # light text on the dark chart
    monkeypatch.setattr(theme, "system_is_dark", lambda: False)
    QGuiApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Light)
    qtbot.waitUntil(lambda: background(window.results_tab.charts) > 200 and background(view.charts) > 200)
    # a chosen theme is kept whatever the desktop does
    window.set_theme(theme.LIGHT)
    monkeypatch.setattr(theme, "system_is_dark", lambda: True)
    QGuiApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert background(window.results_tab.charts) > 200


@pytest.mark.fio
def test_real_run_at_4_s_updates_draws_connected_lines(window: MainWindow, tmp_path: Path, qtbot) -> None:
    plan = local_plan(tmp_path, workers=1)
    plan.setup.update_frequency = 4
    plan.setup.update_type = LAST
    window.doc.replace(plan)
    window.run_control.run_options = RunOptions(engine="null", run_time=14)
    assert window.run_control.start_run()
    with qtbot.waitSignal(window.controller.finished, timeout=60000):
        pass
    window.results_tab.redraw(force=True)
    (key,) = window.results_tab.current_scope().keys  # the level shown (it follows the Topology's selection)
    s = window.live.series[key]
    assert s.n >= 4
    lat = window.results_tab.charts.charts[2]
    assert subpaths(lat.curves[0].curve.getPath()) == 1 and subpaths(lat.p99[0].curve.getPath()) == 1
    assert lat.p99[0].opts["symbol"] is None and shown(lat.p99_dots[0])[0].size == 0
    window.results_tab.charts.set_statistic(3, "cpu_pct")
    y = shown(window.results_tab.charts.charts[3].curves[0])[1]
    np.testing.assert_array_equal(y, s.ys(LAST, "cpu_pct"))
    assert np.nanmax(y) > 0  # fio measured its CPU
    window.results_tab.since_whole.setChecked(True)
    np.testing.assert_array_equal(
        shown(window.results_tab.charts.charts[3].curves[0])[1], s.ys(WHOLE, "cpu_pct")
    )
