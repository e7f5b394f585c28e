"""The four live charts (IOPS, MB/s, average + p99 and maximum response time) drawn with pyqtgraph.

Curves are clipped to the visible x range and downsampled (peak mode keeps spikes), so redraws
stay cheap with hundreds of series after hours of samples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QGridLayout, QWidget

from app.ui.live_data import LiveResults, SeriesKey

pg.setConfigOptions(antialias=False, useNumba=False)


@dataclass(frozen=True)
class ChartSpec:
    field: str
    title: str  # Iometer's statistic name
    unit: str


CHARTS = (
    ChartSpec("iops", "Total I/Os per Second", "IOPS"),
    ChartSpec("mbps", "Total MBs per Second (Decimal)", "MB/s"),
    ChartSpec("lat_mean_ms", "Average I/O Response Time", "ms — dashed: 99th percentile"),
    ChartSpec("lat_max_ms", "Maximum I/O Response Time", "ms"),
)
# A qualitative palette (Tableau 10) that reads on light and dark backgrounds; more series cycle hues.
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac")
LEGEND_MAX = 12


def series_color(i: int) -> QColor:
    if i < len(PALETTE):
        return QColor(PALETTE[i])
    return pg.intColor(i, hues=24, values=2, minValue=170)


def compact_ticks(values: list[float], spacing: float) -> list[str]:
    """Tick labels like 1.5M / 250k / 0.004 with one suffix for the whole axis (no 2e+06)."""
    top = max((abs(v) for v in values), default=0.0)
    div, suffix = 1.0, ""
    for d, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if top >= d:
            div, suffix = d, suf
            break
    step = spacing / div if spacing > 0 else 1.0
    decimals = min(max(0, -math.floor(math.log10(step))), 6) if step > 0 else 0
    return [f"{v / div:.{decimals}f}{suffix}" for v in values]


class CompactAxis(pg.AxisItem):
    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:  # noqa: N802
        return compact_ticks([v * scale for v in values], spacing * scale)


class _Chart:
    def __init__(self, spec: ChartSpec):
        self.spec = spec
        self.widget = pg.PlotWidget(axisItems={"left": CompactAxis("left")})
        self.plot = self.widget.getPlotItem()
        self.plot.setTitle(spec.title, size="10pt")
        self.plot.setLabel("left", spec.unit)
        self.plot.setLabel("bottom", "time since start (s)")
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).enableAutoSIPrefix(False)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.setClipToView(True)
        self.plot.setDownsampling(auto=True, mode="peak")
        self.plot.setMouseEnabled(x=True, y=False)
        self.plot.enableAutoRange(y=True)
        self.plot.setAutoVisible(y=True)
        self.plot.setMenuEnabled(False)
        self.widget.setMinimumSize(160, 140)
        self.curves: list[pg.PlotDataItem] = []
        self.p99: list[pg.PlotDataItem] = []
        self.legend: pg.LegendItem | None = None
        self.marks: list[pg.InfiniteLine] = []


class ChartGrid(QWidget):
    """Four charts in a 2 x 2 grid showing the same set of series."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(4)
        self.charts = [_Chart(spec) for spec in CHARTS]
        for i, c in enumerate(self.charts):
            grid.addWidget(c.widget, i // 2, i % 2)
        for c in self.charts[1:]:
            c.plot.setXLink(self.charts[0].plot)
        self.keys: list[SeriesKey] = []
        self._marks_drawn = 0
        self._revision = -1

    def set_series(self, keys: list[SeriesKey], labels: list[str]) -> None:
        """Which series to draw; one colour per series, the same in every chart."""
        self.keys = list(keys)
        self._revision = -1
        show_legend = len(keys) <= LEGEND_MAX
        for c in self.charts:
            for item in c.curves + c.p99:
                c.plot.removeItem(item)
            if c.legend is not None:
                if c.legend.scene() is not None:
                    c.legend.scene().removeItem(c.legend)
                c.plot.legend = None
                c.legend = None
            if show_legend and len(keys) > 1:
                c.legend = c.plot.addLegend(offset=(-4, 4), labelTextSize="8pt")
            c.curves, c.p99 = [], []
            for i, label in enumerate(labels):
                pen = pg.mkPen(series_color(i), width=1.5 if len(keys) <= LEGEND_MAX else 1)
                curve = c.plot.plot([], [], pen=pen, name=label if show_legend else None, connect="finite")
                c.curves.append(curve)
                if c.spec.field == "lat_mean_ms":
                    dash = pg.mkPen(series_color(i), width=1, style=Qt.PenStyle.DashLine)
                    c.p99.append(c.plot.plot([], [], pen=dash, connect="finite"))

    def clear_marks(self) -> None:
        for c in self.charts:
            for m in c.marks:
                c.plot.removeItem(m)
            c.marks = []
        self._marks_drawn = 0

    def redraw(self, live: LiveResults, kind: str, force: bool = False) -> bool:
        """Push the series' points into the curves; returns False when nothing changed."""
        if not force and live.revision == self._revision:
            return False
        self._revision = live.revision
        if len(live.steps) < self._marks_drawn:
            self.clear_marks()
        for mark in live.steps[self._marks_drawn:]:
            for c in self.charts:
                line = pg.InfiniteLine(mark.x, angle=90, pen=pg.mkPen((128, 128, 128), style=Qt.PenStyle.DotLine),
                                       label=f"#{mark.label.split(':')[0]}",
                                       labelOpts={"position": 0.95, "color": (128, 128, 128)})
                c.plot.addItem(line, ignoreBounds=True)
                c.marks.append(line)
        self._marks_drawn = len(live.steps)
        for c in self.charts:
            for i, key in enumerate(self.keys):
                s = live.series.get(key)
                if s is None or s.n == 0:
                    c.curves[i].setData([], [])
                    if c.p99:
                        c.p99[i].setData([], [])
                    continue
                x = s.xs()
                c.curves[i].setData(x, s.ys(kind, c.spec.field))
                if c.p99:
                    c.p99[i].setData(x, s.ys(kind, "p99_ms"))
        return True

    def apply_palette(self, palette: QPalette) -> None:
        """Follow the window's light or dark palette."""
        bg = palette.color(QPalette.ColorRole.Base)
        fg = palette.color(QPalette.ColorRole.Text)
        for c in self.charts:
            c.widget.setBackground(bg)
            for axis in ("left", "bottom"):
                ax = c.plot.getAxis(axis)
                ax.setPen(fg)
                ax.setTextPen(fg)
            c.plot.setTitle(c.spec.title, color=fg.name(), size="10pt")
            if c.legend is not None:
                c.legend.setLabelTextColor(fg)
