"""Step boundaries drawn as one item per chart (StepLines), not one pyqtgraph InfiniteLine per boundary: an
8-hour run of 48 steps on four charts made 192 items, the largest part of reopening it. Checked on real
widgets, offscreen: the lines are where the steps start, across the whole plot height at any zoom, only the
visible ones painted, and the step names in the band above still right."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage

from app.live.data import ALL_KEY, LAST, LiveResults, Series, StepMark
from app.model.metrics import Metrics
from app.ui.charts.chart_grid import MARK_COLOR, ChartGrid
from app.ui.charts.step_lines import StepLines

GREY = QColor(*MARK_COLOR)


def grey_rows(img: QImage, x_px: int) -> int:
    """Rows of a pixel column (or its neighbour: a line may fall between two) painted in the marks' grey."""
    rows = 0
    for y in range(img.height()):
        if any(
            0 <= x < img.width() and img.pixelColor(x, y).rgb() == GREY.rgb()
            for x in (x_px - 1, x_px, x_px + 1)
        ):
            rows += 1
    return rows


@pytest.fixture
def plot(qtbot) -> pg.PlotWidget:
    w = pg.PlotWidget()
    w.setBackground("w")
    w.resize(400, 300)
    w.getPlotItem().hideAxis("left")
    w.getPlotItem().hideAxis("bottom")
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_lines_span_the_view_and_only_visible_ones_are_drawn(plot: pg.PlotWidget) -> None:
    lines = StepLines(pg.mkPen(MARK_COLOR, style=Qt.PenStyle.DotLine))
    item = plot.getPlotItem()
    item.addItem(lines, ignoreBounds=True)
    item.setRange(xRange=(0, 100), yRange=(0, 1), padding=0)
    lines.set_xs([10.0, 50.0, 90.0, 250.0])
    assert list(lines.visible_xs()) == [10.0, 50.0, 90.0]  # 250 is beyond the view: not painted
    rect = lines.boundingRect()
    assert rect.top() == pytest.approx(0.0) and rect.bottom() == pytest.approx(1.0)
    assert rect.left() < 10.0 < 90.0 < rect.right() < 250.0

    vb = item.getViewBox()
    img = plot.grab().toImage()
    height = int(vb.height())
    for x in (10.0, 50.0, 90.0):
        px = round(vb.mapViewToScene(pg.Point(x, 0.5)).x())
        assert grey_rows(img, px) > height * 0.3, x  # dotted: about every other pixel, top to bottom
    between = round(vb.mapViewToScene(pg.Point(30.0, 0.5)).x())
    assert grey_rows(img, between) == 0

    # zoomed in y (a chart whose numbers grew): the lines still reach the top and bottom
    item.setRange(yRange=(0, 1e6), padding=0)
    rect = lines.boundingRect()
    assert rect.top() == pytest.approx(0.0) and rect.bottom() == pytest.approx(1e6)
    # scrolled to the far step: only it is drawn
    item.setRange(xRange=(200, 300), padding=0)
    assert list(lines.visible_xs()) == [250.0]
    img = plot.grab().toImage()
    px = round(vb.mapViewToScene(pg.Point(250.0, 0.5)).x())
    assert grey_rows(img, px) > height * 0.3
    lines.set_xs([])
    assert lines.boundingRect().isEmpty()


def test_a_long_run_s_48_steps_are_one_item_per_chart(qtbot) -> None:
    g = ChartGrid()
    qtbot.addWidget(g)
    g.resize(1280, 800)
    g.show()
    live = LiveResults(update_seconds=1)
    live.steps = [StepMark(600.0 * i, f"{i + 1}: spec {i % 3}") for i in range(48)]
    s = Series()
    for t in np.arange(1.0, 48 * 600.0, 600.0):  # a point in each step
        m = Metrics(seconds=1.0, read_ios=100, read_iops=100.0)
        s.append(float(t), m, m)
    live.series[ALL_KEY] = s
    live.revision += 1
    g.set_series([ALL_KEY], ["All Managers"])
    g.redraw(live, LAST)
    for c in g.charts:
        items = c.plot.items  # every item added to the plot
        assert not any(isinstance(i, pg.InfiniteLine) for i in items)
        assert sum(isinstance(i, StepLines) for i in items) == 1
        assert list(c.marks.xs) == [600.0 * i for i in range(48)]
        assert [label for _x, label in c.steps.marks][:3] == ["#1", "#2", "#3"]
    # a new run (fewer steps): the boundaries are replaced, not added to
    live.steps = live.steps[:2]
    live.revision += 1
    g.redraw(live, LAST)
    assert all(list(c.marks.xs) == [0.0, 600.0] for c in g.charts)
    g.clear_marks()
    assert all(len(c.marks.xs) == 0 and c.steps.marks == [] for c in g.charts)


def test_a_single_line_set_before_the_view_has_a_size_is_drawn(qtbot) -> None:
    """Its bounding rect is never empty (a rect of no width is not painted), and follows a resize."""
    w = pg.PlotWidget()
    w.setBackground("w")
    qtbot.addWidget(w)
    item = w.getPlotItem()
    item.hideAxis("left")
    item.hideAxis("bottom")
    lines = StepLines(pg.mkPen(MARK_COLOR, style=Qt.PenStyle.DotLine))
    item.addItem(lines, ignoreBounds=True)
    item.setRange(xRange=(0, 10), yRange=(0, 1), padding=0)
    lines.set_xs([5.0])
    assert not lines.boundingRect().isEmpty()
    w.resize(300, 200)
    w.show()
    qtbot.waitExposed(w)
    vb = item.getViewBox()
    px = round(vb.mapViewToScene(pg.Point(5.0, 0.5)).x())
    assert grey_rows(w.grab().toImage(), px) > vb.height() * 0.3
    w.resize(600, 200)
    qtbot.waitUntil(lambda: vb.width() > 450)
    px = round(vb.mapViewToScene(pg.Point(5.0, 0.5)).x())
    assert grey_rows(w.grab().toImage(), px) > vb.height() * 0.3
