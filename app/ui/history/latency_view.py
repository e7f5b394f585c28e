"""A stored run's response-time distribution for the scope and step shown: the share of I/Os per latency bin
over the step (p50, p99 and p99.9 marked) beside a heat map over time (each interval's I/Os by latency).

Read from the histograms the store keeps (the steps' final ones, and the intervals' of managers and All
Managers), on a store task thread, and only when the view is on screen: opening a run never pays for it.
The numbers come from ``analysis.latency_distribution``; this module only draws them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPalette, QShowEvent
from PySide6.QtWidgets import QApplication, QLabel, QSplitter, QStackedWidget, QVBoxLayout, QWidget

from app.analysis.latency_distribution import (
    MARKERS,
    HeatMap,
    StepHistogram,
    interval_heat_map,
    result_counts,
    step_histogram,
)
from app.live.data import SeriesKey
from app.model.units import format_latency
from app.store import Store
from app.ui.charts.chart_grid import PALETTE, PLOT_MIN_HEIGHT
from app.ui.charts.step_lines import StepLines
from app.ui.charts.wheel import wheel_scrolls_page
from app.ui.history.store_tasks import StoreTasks
from app.ui.history.stored_series import StoredRun
from app.ui.widgets import scrolling

BAR_COLOR = PALETTE[0]
MARKER_COLORS = {50.0: "#59a14f", 99.0: "#f28e2b", 99.9: "#e15759"}
COLORBAR_LABEL = "% of the interval's I/Os"  # the colour bar's name (its scale: the ticks, and the tooltip)
SHARE_FLOOR = 0.01  # % of an interval's I/Os: the heat map's colour scale is logarithmic from here to 100 %
P99_COLOR = "#ff5252"


def pct_label(p: float) -> str:
    return f"p{p:g}"


class LatencyAxis(pg.AxisItem):
    """An axis over log10(ns): ticks at 1, 2 and 5 per decade, labelled in ns, µs, ms or s."""

    def tickValues(self, minVal: float, maxVal: float, size: float):  # noqa: N802 (pyqtgraph's name)
        if not (math.isfinite(minVal) and math.isfinite(maxVal)) or maxVal <= minVal:
            return []
        decades = range(math.floor(minVal), math.ceil(maxVal) + 1)
        major = [float(d) for d in decades if minVal <= d <= maxVal]
        minor = [d + math.log10(m) for d in decades for m in (2, 5) if minVal <= d + math.log10(m) <= maxVal]
        return [(1.0, major), (0.3, minor)]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:  # noqa: N802
        return [format_latency(round(10**v, 6)) for v in values]


@dataclass
class Request:
    """What is shown: the levels (summed), their label, the step (None: every step on the run's time axis)."""

    keys: tuple[SeriesKey, ...]
    label: str
    step_id: int | None


@dataclass
class Loaded:
    request: Request
    histogram: StepHistogram | None
    heat: HeatMap | None
    kept: bool  # some interval histograms exist for these levels


def compute(store: Store, data: StoredRun, req: Request) -> Loaded:
    """On a store task thread: the step's histogram and the heat map of the request."""
    steps = [s for s in data.run.steps if req.step_id is None or s.id == req.step_id]
    hist = step_histogram(result_counts(store, [s.id for s in steps], req.keys))
    sources: dict[int, float] = {}  # a series shared by two keys (ALL and its manager) is read once
    for s in steps:
        offset = 0.0 if req.step_id is not None else data.offsets.get(s.id, 0.0)
        for k in req.keys:
            if (sid := data.series.get(s.id, {}).get(k)) is not None:
                sources.setdefault(sid, offset)
    heat, kept = interval_heat_map(store, list(sources.items()))
    return Loaded(req, hist, heat, kept > 0)


def heat_missing_text(req: Request, kept: bool, where: str) -> str:
    """Why there is no heat map: a worker's level (only All Managers and the managers keep interval
    histograms), a run that kept none for a level that would have them, or no I/O in any interval."""
    if kept:
        return f"No I/O completed in any interval of {req.label} in {where}."
    if all(k[0] in ("all", "manager") for k in req.keys):
        return (
            f"This run kept no response times interval by interval for {req.label} (imported, or "
            "stored without fio's interval histograms); the distribution over the step is on the left."
        )
    return (
        f"Response times interval by interval are kept for All Managers and each manager, not for "
        f"{req.label}: choose one of those in Show."
    )


class LatencyView(QWidget):
    loaded = Signal()  # a request's charts are drawn (tests wait for it)

    def __init__(self, tasks: StoreTasks, parent: QWidget | None = None):
        super().__init__(parent)
        self.tasks = tasks
        self.data: StoredRun | None = None
        self.request: Request | None = None
        self.shown: Loaded | None = None  # what the charts show now
        self._asked: Request | None = None  # submitted, not yet back

        self.notice = QLabel()
        self.notice.setWordWrap(True)
        self.notice.setEnabled(False)
        self.hist_widget = pg.PlotWidget(axisItems={"bottom": LatencyAxis("bottom")})
        self.hist_plot = self.hist_widget.getPlotItem()
        self.hist_plot.setMenuEnabled(False)
        self.hist_plot.setLabel("left", "% of I/Os")
        self.hist_plot.setLabel("bottom", "response time (logarithmic)")
        self.hist_plot.showGrid(x=True, y=True, alpha=0.15)
        self.hist_plot.setMouseEnabled(y=False)
        self.heat_widget = pg.PlotWidget(axisItems={"left": LatencyAxis("left")})
        self.heat_plot = self.heat_widget.getPlotItem()
        self.heat_plot.setMenuEnabled(False)
        self.heat_plot.setLabel("left", "response time")
        self.heat_plot.setMouseEnabled(y=False)
        self.image = pg.ImageItem(axisOrder="col-major")
        self.heat_plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(
            values=(math.log10(SHARE_FLOOR), 2.0),
            colorMap=pg.colormap.get("viridis"),
            interactive=False,
            width=12,
        )
        self.colorbar.getAxis("left").setToolTip(
            "Each cell's colour: the share of the interval's I/Os whose response time falls in its band "
            "(logarithmic scale, from 0.01 % to 100 %)"
        )
        self.colorbar.axis.setTicks([[(float(e), f"{10.0**e:g} %") for e in range(-2, 3)]])
        self.colorbar.setImageItem(self.image, insert_in=self.heat_plot)
        self.p99_curve = pg.PlotDataItem(
            pen=pg.mkPen(P99_COLOR, width=1.5, style=Qt.PenStyle.DashLine),
            connect="finite",
            name="p99 per interval",
        )
        self.heat_plot.addItem(self.p99_curve)
        self.hist_legend = self.hist_plot.addLegend(offset=(-6, 4), labelTextSize="8pt")
        self._marks: list[pg.GraphicsObject] = []  # drawn on the histogram
        self._keys: list[pg.PlotDataItem] = []  # the histogram legend's samples
        self.step_lines = StepLines(pg.mkPen(style=Qt.PenStyle.DotLine))  # one item, every step
        self.heat_plot.addItem(self.step_lines, ignoreBounds=True)

        # each chart, or in its place what keeps it from being drawn
        self.hist_stack, self.hist_missing = _with_placeholder(self.hist_widget)
        self.heat_stack, self.heat_missing = _with_placeholder(self.heat_widget)
        for w in (self.hist_widget, self.heat_widget):  # a plot area of PLOT_MIN_HEIGHT with its axes whole
            w.setMinimumHeight(PLOT_MIN_HEIGHT + 60)
            wheel_scrolls_page(w)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.hist_stack)
        self.splitter.addWidget(self.heat_stack)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.notice)
        scroller = scrolling(self.splitter)  # where the view is low the charts scroll, never squashed
        scroller.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        lay.addWidget(scroller, 1)
        self.apply_palette(QApplication.palette())

    # --- what to show ----------------------------------------------------------------------------------
    def show_for(self, data: StoredRun, keys: list[SeriesKey], label: str, step_id: int | None) -> None:
        """Show these levels (summed) in this step; read only when the view is on screen."""
        self.data = data
        self.request = Request(tuple(keys), label, step_id)
        if self.isVisible():
            self._load()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        self._load()

    def _load(self) -> None:
        req, data = self.request, self.data
        if req is None or data is None or req == self._asked or (self.shown and self.shown.request == req):
            return
        self._asked = req
        self.notice.setText("Reading the response time histograms\u2026")
        self.tasks.submit(
            "reading response time histograms",
            lambda store: compute(store, data, req),
            self._done,
            self._failed,
            owner=self,
        )

    def _failed(self, message: str) -> None:
        self._asked = None
        self.notice.setText(f"The response time histograms cannot be read: {message}")
        self.loaded.emit()

    def _done(self, result: Loaded) -> None:
        if result.request != self._asked:
            return  # the scope or step changed meanwhile: that request is on its way
        self._asked = None
        self.shown = result
        self._draw(result)
        self.loaded.emit()

    # --- drawing -----------------------------------------------------------------------------------------
    def _draw(self, r: Loaded) -> None:
        req = r.request
        one = req.step_id is not None
        where = "this step" if one else "every step"
        self.notice.setText(
            f"{req.label}, {where}: reads and writes together, from fio's latency histograms."
        )
        self.hist_missing.setText(
            f"No response time histogram was kept for {req.label} in {where} (a run "
            "imported from Iometer, or a step that ended before any I/O completed)."
        )
        self.hist_stack.setCurrentIndex(0 if r.histogram is not None else 1)
        self.heat_missing.setText(heat_missing_text(req, r.kept, where))
        self.heat_stack.setCurrentIndex(0 if r.heat is not None else 1)
        self._draw_histogram(r.histogram, where)
        self._draw_heat(r.heat, one)

    def _draw_histogram(self, h: StepHistogram | None, where: str) -> None:
        plot = self.hist_plot
        for item in self._marks:
            plot.removeItem(item)
        self._marks, self._keys = [], []
        self.hist_legend.clear()
        if h is None:
            plot.setTitle(f"Response times over {where}", color=self._fg.name(), size="9pt")
            return
        x = np.log10(h.edges_ns)
        bars = pg.BarGraphItem(
            x0=x[:-1],
            x1=x[1:],
            height=h.share_pct,
            brush=QColor(BAR_COLOR),
            pen=pg.mkPen(self._base, width=0.5),
        )
        plot.addItem(bars)
        self._marks.append(bars)
        top = float(h.share_pct.max()) * 1.15 or 1.0
        for p in MARKERS:
            ns = h.percentiles_ns.get(p)
            if ns is None:
                continue
            line = pg.InfiniteLine(
                math.log10(ns),
                angle=90,
                pen=pg.mkPen(MARKER_COLORS[p], width=1.5, style=Qt.PenStyle.DashLine),
            )
            plot.addItem(line)
            self._marks.append(line)
            # the legend says what each line is and its value (labels on the lines would collide)
            sample = pg.PlotDataItem(pen=pg.mkPen(MARKER_COLORS[p], width=1.5, style=Qt.PenStyle.DashLine))
            self.hist_legend.addItem(sample, f"{pct_label(p)} {format_latency(ns)}")
            self._keys.append(sample)
        plot.setTitle(f"Response times over {where}: {h.total:,} I/Os", color=self._fg.name(), size="9pt")
        plot.setXRange(float(x[0]), float(x[-1]), padding=0.02)
        plot.setYRange(0, top, padding=0)

    def _draw_heat(self, m: HeatMap | None, one_step: bool) -> None:
        plot = self.heat_plot
        self.step_lines.set_xs([])
        plot.setLabel(
            "bottom", "time since the step started (s)" if one_step else "time since the run started (s)"
        )
        if m is None:
            self.image.clear()
            self.p99_curve.setData([], [])
            plot.setTitle("Response times over time", color=self._fg.name(), size="9pt")
            return
        with np.errstate(divide="ignore", invalid="ignore"):
            img = np.log10(np.where(m.share_pct > 0, np.maximum(m.share_pct, SHARE_FLOOR), np.nan))
        y = np.log10(m.edges_ns)
        self.image.setImage(img, autoLevels=False, levels=(math.log10(SHARE_FLOOR), 2.0))
        self.image.setRect(
            QRectF(float(m.t_edges[0]), float(y[0]), float(m.t_edges[-1] - m.t_edges[0]), float(y[-1] - y[0]))
        )
        centres = (m.t_edges[:-1] + m.t_edges[1:]) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            self.p99_curve.setData(centres, np.log10(m.p99_ns))
        if not one_step and self.data is not None:
            starts = (self.data.offsets.get(s.id) for s in self.data.run.steps[1:])
            self.step_lines.pen.setColor(self._fg)  # the palette's text colour, as the axes
            self.step_lines.update()
            self.step_lines.set_xs(
                [at for at in starts if at is not None and m.t_edges[0] < at < m.t_edges[-1]]
            )
        width = float(m.t_edges[1] - m.t_edges[0])
        plot.setTitle(
            f"Response times over time: a column per {width:.2g} s, dashed: its p99",
            color=self._fg.name(),
            size="9pt",
        )
        plot.setXRange(float(m.t_edges[0]), float(m.t_edges[-1]), padding=0)
        plot.setYRange(float(y[0]), float(y[-1]), padding=0)

    # --- look ------------------------------------------------------------------------------------------------
    def apply_palette(self, palette: QPalette) -> None:
        """Follow the window's light or dark palette."""
        self._base = palette.color(QPalette.ColorRole.Base)
        self._fg = palette.color(QPalette.ColorRole.Text)
        for w in (self.hist_widget, self.heat_widget):
            w.setBackground(self._base)
            for name in ("left", "bottom"):
                ax = w.getPlotItem().getAxis(name)
                ax.setPen(self._fg)
                ax.setTextPen(self._fg)
        self.colorbar.axis.setPen(self._fg)
        self.colorbar.axis.setTextPen(self._fg)
        # the bar's name, in the text's colour (pyqtgraph's grey was faint), short enough for the bar's height
        # on a laptop at 150 % (the whole sentence was cut off there)
        self.colorbar.getAxis("left").setLabel(COLORBAR_LABEL, color=self._fg.name())
        self.hist_legend.setLabelTextColor(self._fg)
        back = QColor(self._base)
        back.setAlpha(220)
        self.hist_legend.setBrush(back)
        if self.shown is not None:
            self._draw(self.shown)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.PaletteChange:
            self.apply_palette(QApplication.palette())
        super().changeEvent(event)


def _with_placeholder(chart: QWidget) -> tuple[QStackedWidget, QLabel]:
    stack = QStackedWidget()
    stack.addWidget(chart)
    label = QLabel()
    label.setWordWrap(True)
    label.setEnabled(False)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setMargin(24)
    stack.addWidget(label)
    return stack, label
