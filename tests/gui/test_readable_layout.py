"""Issues 28 and 38: on a laptop screen (1366x768 at first start and maximised; 1920x1080 at 150 %, i.e.
1280x720 logical pixels) with Messages open, the first-run banner and three validity notes, every chart keeps
PLOT_MIN_HEIGHT pixels of plot with its x-axis in view (the first row at the page's top, the others when the
page is scrolled to them, by the wheel), and every value of a 1,000,000-IOPS, 10,000-MB/s, 1,000-ms run is
whole in the statistics table. The figures are measured by tests/gui/layout_probe.py."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from app.ui.charts.chart_grid import PLOT_MIN_HEIGHT, ChartGrid, ChartScroller
from app.ui.main_window import MainWindow
from app.ui.validity_box import ValidityBox
from tests.gui.layout_probe import NOTES, big_run, measure_all
from tests.gui.test_sweep_view import sweep_run

# The window's client area (logical pixels). 1366x768: less a 30 px title bar and a 33 px panel, at first start
# (the 1280x800 default fitted to the screen) and maximised. 1920x1080 at 150 %: 1280x720 logical pixels less
# the same, which is the first start's size and the maximised one alike; measured in a child process with
# QT_SCALE_FACTOR=1.5 (a device pixel ratio of 1.5, as on such a laptop: fonts, pixmaps and pyqtgraph's
# axes are laid out at that ratio, which a window of 1280x657 at ratio 1 would not show).
AT_1366 = {"first-start": (1280, 705), "maximised": (1366, 705)}
AT_150 = (1280, 657)
VIEWS = ("results", "history-over-time", "history-distribution", "history-sweep", "compare-over-time")


def at_the_top(fig: dict, view: str) -> int:
    """How many of a view's charts stand whole without scrolling: all of them, but for the Results Display at
    150 %: its two rows of charts beside the statistics need ~460 px and get ~330 with Messages open, nor are
    they wide enough for one row of four (240 px each beside the statistics), so its second row is whole when
    the page is scrolled to it (the wheel scrolls it)."""
    return 2 if view == "results" and fig["dpr"] > 1 else len(fig[view])


def assert_readable(fig: dict, where: str) -> None:
    """Every view: its charts whole at the page's top (plot >= PLOT_MIN_HEIGHT, x-axis in view; see
    at_the_top), every chart whole once the page is scrolled to it, titles whole; every statistics value whole
    in its column."""
    for view in VIEWS:
        charts = fig[view]
        assert charts, f"{where} {view}: no chart shown"
        for c in charts[: at_the_top(fig, view)]:
            assert c["plot_shown_px"] >= PLOT_MIN_HEIGHT and c["x_axis_in_view"], f"{where} {view}: {c}"
        for c in charts:
            s = c["scrolled"]
            assert s["plot_shown_px"] >= PLOT_MIN_HEIGHT and s["x_axis_in_view"], f"{where} {view}: {c}"
            assert c["x_title_whole"], f"{where} {view}: the x-axis title is cut off: {c}"
            assert c["title_whole"] and c["plot_inside"], f"{where} {view}: cut at the right: {c}"
    table = fig["table"]
    assert len(table["cells"]) == 16, table["cells"]
    assert not table["too_narrow"], f"{where}: cut values (row, text, needed, column): {table['too_narrow']}"
    assert table["first_column_in_view"], f"{where}: {table}"
    shown = {text for _row, text, _need, _w in table["cells"]}
    assert {"1,000,000", "10,000", "1,000"} <= shown, shown  # the big run is what is shown
    assert table["rows_in_view"] >= 8 if fig["size"][1] >= 700 else table["rows_in_view"] >= 6, table


def heights(fig: dict) -> str:
    return "; ".join(f"{v}: " + ", ".join(f"{c['plot_shown_px']:.0f}" for c in fig[v]) for v in VIEWS)


@pytest.mark.parametrize("size", list(AT_1366))
def test_every_view_is_readable_at_1366x768(window: MainWindow, qtbot, size: str, tmp_path: Path) -> None:
    fig = measure_all(
        window, qtbot.wait, lambda c: qtbot.waitUntil(c, timeout=15000), AT_1366[size], tmp_path
    )
    print(f"1366x768 {size}: plot px at the top: {heights(fig)}")
    assert_readable(fig, f"1366x768 {size}")


def test_every_view_is_readable_at_1920x1080_at_150_percent(tmp_path: Path) -> None:
    env = {**os.environ, "QT_SCALE_FACTOR": "1.5", "QT_QPA_PLATFORM": "offscreen"}
    env.pop("QT_SCREEN_SCALE_FACTORS", None)
    out = subprocess.run(
        [sys.executable, "-m", "tests.gui.layout_probe", f"{AT_150[0]}x{AT_150[1]}", str(tmp_path)],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    fig = json.loads(out.stdout.strip().splitlines()[-1])
    assert fig["dpr"] == 1.5  # really at 150 %
    print(f"1920x1080 @150 %: plot px at the top: {heights(fig)}")
    assert_readable(fig, "1920x1080 @150 %")
    assert sorted(p.name for p in tmp_path.glob("*.png")) == sorted(f"1280x657-{v}.png" for v in VIEWS)


def test_the_wheel_over_a_chart_scrolls_the_page_and_ctrl_wheel_zooms(window: MainWindow, qtbot) -> None:
    window.resize(*AT_150)
    window.messages_dock.show()
    window.show_tab(window.results_tab)
    big_run(window.live)
    window.results_tab.scope.setCurrentIndex(0)
    window.results_tab.redraw(force=True)
    scroller = window.results_tab.findChild(ChartScroller)
    bar = scroller.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)  # two rows of charts, taller than the view: it scrolls
    chart = scroller.charts.charts[0]
    x_range = chart.plot.getViewBox().viewRange()[0]

    def wheel(modifiers: Qt.KeyboardModifier) -> None:
        vp = chart.widget.viewport()
        at = QPointF(vp.width() / 2, vp.height() / 2)
        ev = QWheelEvent(
            at,
            vp.mapToGlobal(at),
            QPoint(),
            QPoint(0, -120),
            Qt.MouseButton.NoButton,
            modifiers,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(vp, ev)
        qtbot.wait(20)

    wheel(Qt.KeyboardModifier.NoModifier)
    assert bar.value() > 0  # the page moved down
    assert chart.plot.getViewBox().viewRange()[0] == x_range  # the chart did not zoom
    scrolled = bar.value()
    wheel(Qt.KeyboardModifier.ControlModifier)
    assert chart.plot.getViewBox().viewRange()[0] != x_range  # Ctrl+wheel zooms the time axis
    assert bar.value() == scrolled


def test_validity_notes_stand_as_one_line_that_opens_on_a_click(qtbot) -> None:
    box = ValidityBox()
    qtbot.addWidget(box)
    box.resize(500, 200)
    box.set_lines(NOTES)
    box.show()
    qtbot.waitExposed(box)
    one_line = box.sizeHint().height()
    assert box.summary.isVisible() and not box.label.isVisible()
    assert box.summary.text().startswith("Validity notes (3)") and one_line < 2.2 * box.fontMetrics().height()
    qtbot.mouseClick(box.summary, Qt.MouseButton.LeftButton)
    assert box.label.isVisible() and all(n in html.unescape(box.label.text()) for n in NOTES)
    assert box.sizeHint().height() > 3 * one_line
    qtbot.mouseClick(box.arrow, Qt.MouseButton.LeftButton)  # and closes again
    assert not box.label.isVisible() and box.summary.isVisible()


def test_charts_stand_in_one_row_when_the_view_is_wide_and_low(qtbot) -> None:
    charts = ChartGrid()
    scroller = ChartScroller(charts)
    qtbot.addWidget(scroller)
    scroller.show()
    scroller.resize(1200, 300)
    qtbot.waitUntil(lambda: charts.columns == 4)
    scroller.resize(700, 300)  # too narrow for four: two rows, the view scrolls
    qtbot.waitUntil(lambda: charts.columns == 2)
    qtbot.waitUntil(lambda: scroller.verticalScrollBar().maximum() > 0)
    scroller.resize(700, 700)
    qtbot.waitUntil(lambda: scroller.verticalScrollBar().maximum() == 0)
    assert charts.columns == 2


def test_the_minimum_window_keeps_start_stop_and_the_charts_whole(window: MainWindow, qtbot) -> None:
    from app.ui.window.layout import SMALLEST

    sweep = sweep_run()
    window.resize(*SMALLEST)
    window.messages_dock.show()
    qtbot.waitUntil(lambda: window.size().width() == SMALLEST[0])
    bar = window.toolbar
    for action in (window.action_map["start"], window.action_map["stop"], window.action_map["stop_all"]):
        button = bar.widgetForAction(action)
        assert button is not None and button.isVisible(), action.text()  # not behind the » overflow
        assert bar.rect().contains(button.geometry()), action.text()
    assert bar.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonIconOnly
    window.resize(1366, 705)  # wide again: the words come back
    qtbot.waitUntil(lambda: bar.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    window.resize(*SMALLEST)

    window.show_tab(window.results_tab)
    qtbot.wait(50)
    scroller = window.results_tab.findChild(ChartScroller)
    assert scroller.charts.columns == 1  # two side by side would be cut off at the right
    assert scroller.charts.width() <= scroller.viewport().width()
    table = window.results_tab.table
    # the values stay in view: the statistics' names are cut short instead
    assert table.columnViewportPosition(0) + table.columnWidth(0) <= table.viewport().width()

    ui = window.history
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.show_history()
    view = ui.open_run(sweep)
    qtbot.waitUntil(lambda: view.data is not None, timeout=10000)
    view.views.setCurrentWidget(view.sweep)
    qtbot.wait(50)
    for p in view.sweep.plots.values():  # they keep their height; the view scrolls
        assert p.plot.getViewBox().height() >= PLOT_MIN_HEIGHT
