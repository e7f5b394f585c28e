"""Issue 28 point 1: on a laptop screen (1366x768 maximised; 1920x1080 at 150 %, i.e. 1280x720 logical
pixels) every chart keeps a usable plot area with Messages open and the first-run banner shown: at least
PLOT_MIN_HEIGHT pixels of plot, its axis labels whole (a view too low for the charts scrolls instead)."""

from __future__ import annotations

import os
from pathlib import Path

import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from app.ui.history.compare_data import CompareRequest
from app.ui.main_window import MainWindow
from app.ui.run.charts import PLOT_MIN_HEIGHT, ChartGrid, ChartScroller
from tests.gui.history_support import before_after_store
from tests.gui.test_sweep_view import sweep_run

# the window's client area: 1366x768 less a 30 px title bar and a 33 px panel; 1920x1080 at 150 % is
# 1280x720 logical pixels, less the same (in logical pixels)
SIZES = {"1366x768": (1366, 705), "1920x1080@150%": (1280, 657)}


def plot_areas(view: QWidget) -> list[dict]:
    """Every chart shown in ``view``: its plot area's height and whether its axis labels fit."""
    out = []
    for pw in view.findChildren(pg.PlotWidget):
        if not pw.isVisible():
            continue
        item = pw.getPlotItem()
        left, bottom = item.getAxis("left"), item.getAxis("bottom")
        label_w = left.label.boundingRect().width() if left.label.isVisible() else 0
        bottom_end = bottom.mapRectToScene(bottom.boundingRect()).bottom()
        bottom_w = bottom.label.boundingRect().width() if bottom.label.isVisible() else 0
        out.append(
            {
                "name": left.label.toPlainText().strip(),
                "plot": item.getViewBox().height(),
                "left_label_fits": label_w <= left.height() + 1,
                "bottom_label_fits": bottom_w <= bottom.width() + 1,
                "bottom_axis_inside": bottom_end <= pw.height() + 1,
            }
        )
    return out


def check(view: QWidget, where: str, expect: int) -> None:
    areas = plot_areas(view)
    assert len(areas) >= expect, f"{where}: {len(areas)} charts shown"
    for a in areas:
        assert a["plot"] >= PLOT_MIN_HEIGHT, f"{where}: {a}"
        assert a["left_label_fits"] and a["bottom_label_fits"] and a["bottom_axis_inside"], f"{where}: {a}"


@pytest.mark.parametrize("screen", list(SIZES))
def test_every_chart_is_readable_on_a_laptop_screen(
    window: MainWindow, qtbot, screen: str, tmp_path: Path
) -> None:
    ids = before_after_store(Path(os.environ["FIOMETER_DB"]))
    sweep = sweep_run()
    window.resize(*SIZES[screen])
    window.banner.show_text("Welcome to Fiometer (the first start's banner)")
    window.messages_dock.show()
    window.add_message("a warning that opened Messages", "warning")
    qtbot.wait(50)

    def shown(view: QWidget, where: str, expect: int) -> None:
        qtbot.wait(100)
        window.grab().save(str(tmp_path / f"{where}.png"))
        check(view, where, expect)

    window.show_tab(window.results_tab)
    shown(window.results_tab, "results", 4)

    ui = window.history
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.show_history()
    run = ui.open_run(ids[0])
    qtbot.waitUntil(lambda: run.data is not None, timeout=10000)
    shown(run, "over-time", 4)
    with qtbot.waitSignal(run.latency.loaded, timeout=10000):
        run.views.setCurrentWidget(run.latency)
    shown(run.latency, "distribution", 1)  # the heat map needs histograms per interval

    swept = ui.open_run(sweep)
    qtbot.waitUntil(lambda: swept.data is not None, timeout=10000)
    swept.views.setCurrentWidget(swept.sweep)
    shown(swept.sweep, "sweep", 4)

    compare = ui.compare(CompareRequest([ids[0]], [[ids[1]]]))
    qtbot.waitUntil(lambda: compare.data is not None, timeout=10000)
    compare.inner_tabs.setCurrentIndex(compare.inner_tabs.count() - 1)  # over time
    shown(compare, "compare-over-time", 4)


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
    assert table.verticalHeader().width() <= table.width() // 2 + 1  # the values stay in view

    ui = window.history
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.show_history()
    view = ui.open_run(sweep)
    qtbot.waitUntil(lambda: view.data is not None, timeout=10000)
    view.views.setCurrentWidget(view.sweep)
    qtbot.wait(50)
    for p in view.sweep.plots.values():  # they keep their height; the view scrolls
        assert p.plot.getViewBox().height() >= PLOT_MIN_HEIGHT
