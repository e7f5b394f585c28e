"""The four live charts drawn with pyqtgraph: by default IOPS, MB/s, average + p99 and maximum response time;
like Iometer's Results Display, each chart can be set to any statistic in ``CHOICES`` (a small menu above it,
remembered in the settings).

Curves are clipped to the visible x range and downsampled (peak mode keeps spikes), so redraws
stay cheap with hundreds of series after hours of samples.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QPalette, QPen, QPixmapCache, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGraphicsItem,
    QGridLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.live.data import CHART_FIELDS, Block, LiveResults, SeriesKey
from app.live.decimate import PeakGrid, clip_indices
from app.ui.charts.many_curves import Layout, ManyCurves, bands, polylines
from app.ui.charts.step_lines import StepLines
from app.ui.charts.wheel import wheel_scrolls_page

pg.setConfigOptions(antialias=False, useNumba=False)


@dataclass(frozen=True)
class ChartSpec:
    field: str  # one of app.live.data.CHART_FIELDS
    title: str  # Iometer's statistic name (or ours, clearly worded)
    unit: str
    dashed: str | None = None  # a second field drawn dashed in the series' colour (the average's p99)

    @property
    def axis_label(self) -> str:
        return f"{self.unit} — dashed: 99th percentile" if self.dashed else self.unit


# What a chart can show (Iometer lets each chart show any statistic; these are the ones kept per point).
CHOICES = (
    ChartSpec("iops", "Total I/Os per Second", "IOPS"),
    ChartSpec("mbps", "Total MBs per Second (Decimal)", "MB/s"),
    ChartSpec("lat_mean_ms", "Average I/O Response Time", "ms", dashed="p99_ms"),
    ChartSpec("lat_max_ms", "Maximum I/O Response Time", "ms"),
    ChartSpec("p99_ms", "99th Percentile Response Time", "ms"),
    ChartSpec("cpu_pct", "fio CPU Utilization (user + system)", "%"),
    ChartSpec("errors", "Total Error Count", "errors"),
)
SPECS = {c.field: c for c in CHOICES}
assert set(SPECS) == set(CHART_FIELDS), "every field kept per point can be charted"
DEFAULT_FIELDS = ("iops", "mbps", "lat_mean_ms", "lat_max_ms")
CHARTS = tuple(SPECS[f] for f in DEFAULT_FIELDS)
NOT_MEASURED = "not measured"
# A qualitative palette (Tableau 10) that reads on light and dark backgrounds; more series cycle hues.
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
LEGEND_MAX = 12
AXIS_WIDTH = 64  # pixels for the left axis: ticks like "150k" or "0.0008" and the unit label
X_START = 10.0  # seconds shown before the first data; the axis then grows a quarter ahead of the data
SPARSE_POINTS = 120  # up to this many points per series, each point is also drawn as a dot
PIXELS_PER_BIN = 3  # many-series mode: one min/max pair per this many pixel columns
PIXMAP_CACHE_KB = 64 * 1024  # the charts' pictures are kept as pixmaps (four large charts need ~10 MB)
# Beyond this many series a manager's workers are drawn as one band (their range at each moment), not a
# line each: hundreds of overlapping lines are a blur that costs a redraw too long (benchmarks/bench_gui.py).
BAND_SERIES = 256
# Readable on a laptop (1366x768, or 1920x1080 at 150 %): a chart never gets less than this plot area; its
# axes, the step band and the statistic's menu come on top (CHART_MIN_HEIGHT in all). Where the room is
# short the four charts stand in one row when wide enough, else their view scrolls (ChartScroller).
PLOT_MIN_HEIGHT = 150
ZOOM_HINT = "The wheel scrolls the page; Ctrl+wheel zooms the time axis, the A button shows it all again"
CHART_MIN_HEIGHT = (
    PLOT_MIN_HEIGHT + 56
)  # + step band (16), bottom axis and its label (~40), margins (measured: 56; 4 px more left the Results
# Display's second row 5 px short of whole at 1366x768 with Messages open)
CHART_MIN_WIDTH = 240  # a chart in a row of four: the left axis (64) and ~170 px of time


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


def nice_ceil(v: float) -> float:
    """The next 1, 2, 2.5 or 5 x 10^k at or above v (axis ends people read easily)."""
    if not v > 0 or not math.isfinite(v):
        return 1.0
    base = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if m * base >= v * (1 - 1e-9):
            return m * base
    return 10 * base


def ahead(x: float) -> float:
    """The time axis' end while data comes: a quarter ahead of ``x``, rounded up to a round number of
    seconds (1, 2 or 5 x 10^k, about an eighth of the axis), so it is at most ~1.5 x the data, never 2 x."""
    want = x * 1.25
    unit = nice_ceil(want / 8)
    return math.ceil(want / unit - 1e-9) * unit


def legend_html(
    groups: list[tuple[str, list[int]]],
    many: bool,
    bands: bool = False,
    colors: list[QColor] | None = None,
    dashed: bool = True,
) -> str:
    """Coloured squares and names; with many series each colour is a manager's workers."""
    colors = colors or [series_color(i) for i in range(len(groups))]
    items = [
        f'<span style="color:{colors[i].name()}">&#9632;</span>&nbsp;{html.escape(name)}'
        + (f" ({len(members)})" if many and len(members) > 1 else "")
        for i, (name, members) in enumerate(groups)
    ]
    lead = (
        "One colour per manager, a band from its lowest to its highest worker: "
        if bands
        else "One colour per manager, one line per worker: "
        if many
        else ""
    )
    key = "" if many or not dashed else " &nbsp; — solid: average, dashed: 99th percentile response time"
    return lead + " &nbsp; ".join(items) + key


def group_series(keys: list[SeriesKey], labels: list[str]) -> list[tuple[str, list[int]]]:
    """Many series drawn as one curve per manager (its workers share a colour); ALL stays alone."""
    groups: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        level, manager, _k = key
        name = "All Managers" if level == "all" else (manager or labels[i])
        groups.setdefault(name, []).append(i)
    return list(groups.items())


def _top(y: np.ndarray) -> float:
    if y.size == 0:
        return 0.0
    with np.errstate(all="ignore"):
        v = float(np.nanmax(y)) if np.isfinite(y).any() else 0.0
    return v


def isolated(y: np.ndarray) -> np.ndarray:
    """Points with a number but no numbered neighbour (a step's only point): a line cannot show them."""
    ok = np.isfinite(y)
    before = np.concatenate(([False], ok[:-1]))
    after = np.concatenate((ok[1:], [False]))
    return ok & ~before & ~after


def dashed_pen(color: QColor) -> QPen:
    """The p99 line: long dashes drawn along the whole curve as one path, so it reads as one line however
    far apart the points are (with a marker at every point it fell apart into triangles at 4 s updates)."""
    pen = pg.mkPen(color, width=P99_WIDTH)  # as wide as the average's line: clearly visible
    pen.setStyle(Qt.PenStyle.CustomDashLine)
    pen.setDashPattern([4.0, 2.0])  # in pen widths
    return pen


P99_WIDTH = 2.0
MARK_COLOR = (128, 128, 128)
MARK_GAP_PX = 30  # at most this far apart: labels closer than their width to the previous one are left out


class StepAxis(pg.AxisItem):
    """A band above the plot area naming the steps (#1, #2 ...) where they start: the labels never cover
    data. Labels that would crowd each other at the current scale are left out."""

    def __init__(self) -> None:
        super().__init__("top")
        self.marks: list[tuple[float, str]] = []
        # labels may reach past the ends (a step at 0 s); spacing is decided here, not by filling limits
        self.setStyle(
            tickLength=-4,
            tickTextOffset=1,
            autoExpandTextSpace=False,
            hideOverlappingLabels=24,
            textFillLimits=[(0, 1.0)],
        )
        self.setHeight(16)
        self.setPen(pg.mkPen(MARK_COLOR))
        self.setTextPen(pg.mkPen(MARK_COLOR))

    def set_marks(self, marks: list[tuple[float, str]]) -> None:
        self.marks = list(marks)
        self.picture = None
        self.update()

    def label_gap_px(self) -> float:
        """Labels closer than this would run into each other: the widest label's width and a little air."""
        fm = QFontMetrics(self.style.get("tickFont") or self.font())
        widest = max((fm.horizontalAdvance(label) for _x, label in self.marks), default=0)
        return min(float(widest + 6), float(MARK_GAP_PX))

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:  # noqa: N802,N803 (pyqtgraph's names)
        per_px = (maxVal - minVal) / size if size > 0 and maxVal > minVal else 0.0
        gap = self.label_gap_px()
        shown, last = [], -np.inf
        for x, _label in self.marks:
            if minVal <= x <= maxVal and x - last >= gap * per_px:
                shown.append(x)
                last = x
        return [(1.0, shown)]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:  # noqa: N802
        """Each value's mark (tickValues gives the marks' own x: looked up, not searched, for 48 steps)."""
        at = {x: label for x, label in reversed(self.marks)}  # the first mark at an x, as min() found it
        out = []
        for v in values:
            label = at.get(v * scale)
            if label is None:
                near = min(self.marks, key=lambda m: abs(m[0] - v * scale), default=None)
                label = near[1] if near is not None else ""
            out.append(label)
        return out


def _statistic_menu(spec: ChartSpec) -> QComboBox:
    menu = QComboBox()
    for c in CHOICES:
        menu.addItem(c.title, c.field)
    menu.setCurrentIndex(menu.findData(spec.field))
    menu.setToolTip(
        "The statistic this chart shows (as in Iometer's Results Display, each chart can show any "
        "of them); remembered for the next time"
    )
    menu.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    menu.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
    f = menu.font()
    f.setPointSizeF(f.pointSizeF() * 0.9)
    menu.setFont(f)
    return menu


class _Chart:
    def __init__(self, spec: ChartSpec):
        self.spec = spec
        self.widget = pg.PlotWidget(axisItems={"left": CompactAxis("left"), "top": StepAxis()})
        self.plot = self.widget.getPlotItem()
        # the statistic's name is the menu above the plot (it chooses what the chart shows)
        self.menu = _statistic_menu(spec)
        self.box = QWidget()
        lay = QVBoxLayout(self.box)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.menu, 0, Qt.AlignmentFlag.AlignHCenter)
        lay.addWidget(self.widget, 1)
        self.plot.setLabel("left", spec.unit)
        self.plot.setLabel("bottom", "time since start (s)")
        self.plot.showAxis("top")
        self.steps: StepAxis = self.plot.getAxis("top")
        for axis in ("left", "bottom", "top"):
            ax = self.plot.getAxis(axis)
            ax.enableAutoSIPrefix(False)
            # Axes change only when the range does: keep them as pixmaps instead of replaying
            # their text every frame (a large share of a redraw otherwise).
            ax.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        # one width for every left axis: pyqtgraph links x ranges by screen position, so plots
        # whose axes differ in width would show shifted time ranges
        self.plot.getAxis("left").setWidth(AXIS_WIDTH)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.steps.setGrid(False)  # the dotted step lines mark the steps in the plot
        self.plot.setClipToView(True)
        self.plot.setDownsampling(auto=True, mode="peak")
        self.plot.setMouseEnabled(x=True, y=False)
        # Ranges are set by ChartGrid (stable "nice" ranges that change seldom): pyqtgraph's
        # auto-range would re-measure every curve and re-lay the axes on every update.
        self.plot.disableAutoRange()
        self.plot.setRange(xRange=(0, X_START), yRange=(0, 1), padding=0)
        self.plot.setMenuEnabled(False)
        self.y_top = 1.0
        self.widget.setMinimumSize(CHART_MIN_WIDTH, CHART_MIN_HEIGHT)
        wheel_scrolls_page(self.widget)
        self.widget.setToolTip(ZOOM_HINT)
        self.curves: list[pg.PlotDataItem] = []
        self.p99: list[pg.PlotDataItem] = []
        self.p99_dots: list[pg.PlotDataItem] = []  # a marker where a p99 point stands alone
        self.many: ManyCurves | None = None  # many-series mode: one item draws every group
        self.pens: list[QPen] = []
        # every step boundary as one item (dotted lines; their names are in the band above: self.steps)
        self.marks = StepLines(pg.mkPen(MARK_COLOR, style=Qt.PenStyle.DotLine))
        self.plot.addItem(self.marks, ignoreBounds=True)
        # "not measured", in the middle of the plot, when the statistic has no numbers for what is shown
        self.note = pg.TextItem("", color=MARK_COLOR, anchor=(0.5, 0.5))
        vb = self.plot.getViewBox()
        self.note.setParentItem(vb)
        self.note.hide()
        vb.sigResized.connect(lambda v: self.note.setPos(v.width() / 2, v.height() / 2))

    def set_note(self, text: str | None) -> None:
        if text:
            self.note.setText(text)
            vb = self.plot.getViewBox()
            self.note.setPos(vb.width() / 2, vb.height() / 2)
        self.note.setVisible(bool(text))


class ChartGrid(QWidget):
    """Four charts in a 2 x 2 grid showing the same set of series, each its own statistic."""

    statistic_changed = Signal(int, str)  # chart index, field

    def __init__(self, parent: QWidget | None = None, remember: str | None = None):
        """``remember``: the settings key (e.g. "results") under which the charts' statistics are kept."""
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(4)
        grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(4)
        self.legend = QLabel()
        self.legend.setObjectName("chartLegend")
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.hide()
        outer.addWidget(self.legend)
        outer.addLayout(grid, 1)
        self.grid = grid
        self.remember = remember
        self.charts = [_Chart(spec) for spec in self._remembered()]
        self.columns = 0
        self.set_columns(2)
        for i, c in enumerate(self.charts):
            c.menu.currentIndexChanged.connect(
                lambda _i, i=i, c=c: self.set_statistic(i, c.menu.currentData())
            )
        for c in self.charts[1:]:
            c.plot.setXLink(self.charts[0].plot)
        self.follow = True  # ranges follow the data until the user zooms or pans
        self.x_top = X_START
        self._x_max = 0.0  # the last x drawn
        self._generation = -1
        for c in self.charts:
            c.plot.getViewBox().sigResized.connect(lambda _vb, c=c: self._fit_x_label(c))
            c.plot.getViewBox().sigRangeChangedManually.connect(self._user_zoomed)
            c.plot.autoBtn.clicked.disconnect()
            c.plot.autoBtn.clicked.connect(self.follow_data)
        self.keys: list[SeriesKey] = []
        self.groups: list[tuple[str, list[int]]] = []
        self.colors: list[QColor] = []  # one per group
        self.many = False
        self.bands = False  # many series: each group drawn as its range (see BAND_SERIES)
        # "ms (dashed: p99)", not the long axis label that a chart of PLOT_MIN_HEIGHT cannot show whole
        self.compact_units = True
        self.unmeasured: dict[
            str, str
        ] = {}  # field -> why the data shown has none (e.g. an imported run's CPU)
        self._grid: _ScopeGrid | None = None  # many-series mode: the decimated bins of every series
        QPixmapCache.setCacheLimit(max(QPixmapCache.cacheLimit(), PIXMAP_CACHE_KB))
        self._marks_drawn = 0
        self._revision = -1
        self._last: tuple[LiveResults, str] | None = None  # what was drawn last (redrawn on a new statistic)

    def set_columns(self, columns: int) -> None:
        """The charts in a 2 x 2 grid (2), in one row (4) or one under the other (1)."""
        if columns == self.columns:
            return
        self.columns = columns
        for c in self.charts:
            self.grid.removeWidget(c.box)
        for i, c in enumerate(self.charts):
            self.grid.addWidget(c.box, i // columns, i % columns)
        for col in range(4):
            self.grid.setColumnStretch(col, 1 if col < columns else 0)
        for row in range(4):
            self.grid.setRowStretch(row, 1 if row < -(-len(self.charts) // columns) else 0)

    def set_x_label(self, text: str) -> None:
        """The time axis' title; shortened where a chart is too narrow for it (whole in the tooltip)."""
        self._x_label = text
        self._fit_x_labels()

    def _fit_x_labels(self) -> None:
        for c in self.charts:
            self._fit_x_label(c)

    def _fit_x_label(self, c: _Chart) -> None:
        text = getattr(self, "_x_label", None)
        if text is None:
            return
        axis = c.plot.getAxis("bottom")
        room = int(c.plot.getViewBox().width()) - 12  # the label item's own margins
        fm = QFontMetrics(axis.label.font())
        shown = text
        if room <= 0:  # not laid out yet: the whole title, fitted once the chart has its size
            room = fm.horizontalAdvance(text)
        if fm.horizontalAdvance(shown) > room and " (" in shown:
            shown = shown[
                : shown.index(" (")
            ]  # "seconds into each step (the compared steps one after another)"
        if fm.horizontalAdvance(shown) > room:
            shown = fm.elidedText(shown, Qt.TextElideMode.ElideRight, max(room, 40))
        if axis.labelText != shown:
            c.plot.setLabel("bottom", shown)
            axis.resizeEvent()  # centred again: pyqtgraph places its title only on a resize (the longer
            # title's place cut the shorter one off at the left: "econds into each compared s…")
        c.widget.setToolTip((f"{text}\n" if shown != text else "") + ZOOM_HINT)

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt's name)
        """The least height at this width (the wrapped legend and the charts' minimum): a scroll area then
        gives the charts its whole view, not their preferred size (pyqtgraph's 480 px) whatever the view."""
        legend = (
            self.legend.heightForWidth(width) + self.layout().spacing()
            if self.legend.isVisibleTo(self)
            else 0
        )
        return legend + self.grid.minimumSize().height()

    def fit_columns(self, width: int, height: int) -> None:
        """One row of four when two rows would not get their minimum height but four fit side by side."""
        menu_h = self.charts[0].menu.sizeHint().height()
        legend = self.legend.sizeHint().height() + 4 if self.legend.isVisibleTo(self) else 0
        two_rows = 2 * (CHART_MIN_HEIGHT + menu_h) + self.grid.spacing() + legend
        per_chart = CHART_MIN_WIDTH + self.grid.spacing()
        if height < two_rows and width >= 4 * per_chart:
            self.set_columns(4)
        else:  # one column where two would be cut off at the right (the minimum window): the view scrolls
            self.set_columns(2 if width >= 2 * per_chart else 1)

    # --- which statistic each chart shows ---------------------------------------------------------
    def _remembered(self) -> list[ChartSpec]:
        fields = list(DEFAULT_FIELDS)
        if self.remember:
            from app.ui.settings import app_settings

            saved = app_settings().value(f"charts/{self.remember}", [])
            saved = [saved] if isinstance(saved, str) else list(saved or [])
            fields = [saved[i] if i < len(saved) and saved[i] in SPECS else d for i, d in enumerate(fields)]
        return [SPECS[f] for f in fields]

    def fields(self) -> tuple[str, ...]:
        """Every field the charts draw (a chart's dashed companion included)."""
        out = [c.spec.field for c in self.charts] + [c.spec.dashed for c in self.charts if c.spec.dashed]
        return tuple(dict.fromkeys(out))

    def set_statistic(self, index: int, field: str) -> None:
        """Chart ``index`` shows ``field`` (one of CHOICES) from now on, remembered in the settings."""
        c = self.charts[index]
        spec = SPECS[field]
        if c.menu.currentData() != field:
            c.menu.blockSignals(True)
            c.menu.setCurrentIndex(c.menu.findData(field))
            c.menu.blockSignals(False)
        if spec == c.spec:
            return
        c.spec = spec
        self._make_curves(c)
        c.y_top = 1.0
        c.plot.setYRange(0, 1, padding=0)
        self._grid = None
        self._revision = -1
        self._set_legend()
        if self.remember:
            from app.ui.settings import app_settings

            app_settings().setValue(f"charts/{self.remember}", [ch.spec.field for ch in self.charts])
        self.refresh()
        self.statistic_changed.emit(index, field)

    def refresh(self) -> None:
        """Draw again what was drawn last (after a chart's statistic changed)."""
        if self._last is not None:
            self.redraw(*self._last, force=True)

    def _axis_label(self, spec: ChartSpec) -> str:
        if not spec.dashed or self.many:
            return spec.unit
        return f"{spec.unit} (dashed: p99)" if self.compact_units else spec.axis_label

    def _make_curves(self, c: _Chart) -> None:
        for item in c.curves + c.p99 + c.p99_dots:
            c.plot.removeItem(item)
        c.curves, c.p99, c.p99_dots, c.pens = [], [], [], []
        if c.many is not None:
            c.plot.removeItem(c.many)
            c.many = None
        if self.many:
            c.many = ManyCurves()
            c.plot.addItem(c.many)
        for i, _group in enumerate(self.groups):
            color = self.colors[i]
            pen = pg.mkPen(color, width=1 if self.many else 1.5)
            c.pens.append(pen)
            if self.many:
                continue
            c.curves.append(c.plot.plot([], [], pen=pen, connect="finite"))
            if c.spec.dashed:
                c.p99.append(c.plot.plot([], [], pen=dashed_pen(color), connect="finite"))
                c.p99_dots.append(
                    c.plot.plot([], [], pen=None, symbol="t", symbolSize=6, symbolPen=color, symbolBrush=None)
                )
        c.plot.setLabel("left", self._axis_label(c.spec))

    def set_series(
        self, keys: list[SeriesKey], labels: list[str], colors: list[QColor | str] | None = None
    ) -> None:
        """Which series to draw, the same colours in every chart (named in ``legend``, a strip above
        the charts, so no legend covers the data). ``colors``: one per series (e.g. a run's colour in a
        comparison); the palette's otherwise.

        Up to LEGEND_MAX series: one curve each, with dashed p99 lines. More: one item per chart
        draws every series, one colour per manager (its workers share it), decimated to the chart's
        pixel width (see benchmarks/bench_gui.py).
        """
        self.keys = list(keys)
        self._revision = -1
        self._grid = None
        many = len(keys) > LEGEND_MAX
        self.groups = group_series(keys, labels) if many else [(label, [i]) for i, label in enumerate(labels)]
        self.colors = [
            QColor(colors[members[0]]) if colors else series_color(i)
            for i, (_name, members) in enumerate(self.groups)
        ]
        self.many = many
        self.bands = len(keys) > BAND_SERIES
        for c in self.charts:
            self._make_curves(c)
        self._set_legend()

    def _set_legend(self) -> None:
        dashed = any(c.spec.dashed for c in self.charts)
        self.legend.setText(legend_html(self.groups, self.many, self.bands, self.colors, dashed))
        self.legend.setVisible(len(self.groups) > 1 or self.many)

    def _user_zoomed(self, *_args: object) -> None:
        self.follow = False

    def follow_data(self) -> None:
        """Back to ranges that follow the data (the plot's 'A' button)."""
        self.follow = True
        self._reset_ranges()
        for c in self.charts:
            c.plot.autoBtn.hide()
        self._revision = -1

    def _reset_ranges(self) -> None:
        self.x_top = X_START
        self._x_max = 0.0
        self.charts[0].plot.setXRange(0, self.x_top, padding=0)
        for c in self.charts:
            c.y_top = 1.0
            c.plot.setYRange(0, 1, padding=0)
        self._grid = None

    def _fit(self, x_max: float, y_max: list[float]) -> None:
        """Grow ranges in steps (x by about a quarter ahead, y to a nice top), shrink y only when the data
        falls below 40 %: the axes are re-laid seldom, not on every update."""
        if not self.follow:
            return
        self._x_max = x_max
        if x_max > self.x_top:
            self.x_top = ahead(x_max)
            self.charts[0].plot.setXRange(0, self.x_top, padding=0)
        for c, top in zip(self.charts, y_max, strict=True):
            if top > c.y_top or top < 0.4 * c.y_top:
                c.y_top = nice_ceil(top * 1.1) if top > 0 else 1.0
                c.plot.setYRange(0, c.y_top, padding=0)

    def fit_x_to_data(self) -> None:
        """The run has ended: the time axis spans the data drawn, no room ahead (unless the user zoomed)."""
        if self.follow and self._x_max > 0:
            self.x_top = self._x_max
            self.charts[0].plot.setXRange(0, self._x_max, padding=0.01)

    def clear_marks(self) -> None:
        for c in self.charts:
            c.marks.set_xs([])
            c.steps.set_marks([])
        self._marks_drawn = 0

    def redraw(self, live: LiveResults, kind: str, force: bool = False) -> bool:
        """Push the series' points into the curves; returns False when nothing changed."""
        self._last = (live, kind)
        if not force and live.revision == self._revision:
            return False
        self._revision = live.revision
        if live.generation != self._generation:  # a new run: start from a short time axis again
            self._generation = live.generation
            if self.follow:
                self._reset_ranges()
        if len(live.steps) < self._marks_drawn:
            self.clear_marks()
        if len(live.steps) != self._marks_drawn:
            xs = [m.x for m in live.steps]
            for c in self.charts:
                c.marks.set_xs(xs)
            names = [(m.x, f"#{m.label.split(':')[0]}") for m in live.steps]
            for c in self.charts:  # named in the band above the plot, where no label covers data
                c.steps.set_marks(names)
        self._marks_drawn = len(live.steps)
        if self.many:
            x_max, y_max, measured = self._redraw_groups(live, kind)
        else:
            x_max, y_max, measured = self._redraw_each(live, kind)
        self._fit(x_max, y_max)
        for c, has in zip(self.charts, measured, strict=True):
            c.set_note(self.unmeasured.get(c.spec.field) or (NOT_MEASURED if has is False else None))
        return True

    def _redraw_each(self, live: LiveResults, kind: str) -> tuple[float, list[float], list[bool | None]]:
        """Returns the last x, each chart's top and whether it had numbers (None: no points at all)."""
        x_max, y_max = 0.0, [0.0] * len(self.charts)
        measured: list[bool | None] = [None] * len(self.charts)
        for ci, c in enumerate(self.charts):
            off = c.spec.field in self.unmeasured
            for i, key in enumerate(self.keys):
                s = live.series.get(key)
                if s is None or s.n == 0 or off:
                    c.curves[i].setData([], [])
                    if c.p99:
                        c.p99[i].setData([], [])
                        c.p99_dots[i].setData([], [])
                    continue
                x = s.xs()
                y = s.ys(kind, c.spec.field)
                x_max = max(x_max, float(x[-1]))
                has = bool(np.isfinite(y).any())  # none: not measured (and pyqtgraph warns at every paint)
                measured[ci] = bool(measured[ci]) or has
                # dots while points are few: a step with one point (slow updates) is visible too
                sparse = s.n <= SPARSE_POINTS
                c.curves[i].setData(
                    x if has else [],
                    y if has else [],
                    symbol="o" if sparse else None,
                    symbolSize=5,
                    symbolPen=None,
                    symbolBrush=self.colors[i],
                )
                y_max[ci] = max(y_max[ci], _top(y))
                if c.p99:
                    p99 = s.ys(kind, c.spec.dashed)
                    if c.spec.dashed in self.unmeasured or not np.isfinite(p99).any():
                        p99, x = p99[:0], x[:0]
                    # one continuous dashed line; a marker only where a point has no neighbour to join
                    c.p99[i].setData(x, p99)
                    lone = isolated(p99)
                    c.p99_dots[i].setData(x[lone], p99[lone])
                    y_max[ci] = max(y_max[ci], _top(p99))
        return x_max, y_max, measured

    def _visible_x(self) -> tuple[float, float] | None:
        """None while the x axis follows the data; the zoomed range otherwise (to clip to it)."""
        vb = self.charts[0].plot.getViewBox()
        return None if vb.autoRangeEnabled()[0] else tuple(vb.viewRange()[0])

    def _redraw_groups(self, live: LiveResults, kind: str) -> tuple[float, list[float], list[bool | None]]:
        """Every series of every group decimated at once (PeakGrid), then one array of lines per chart.
        While the ranges follow the data, bins are fixed on [0, x_top) and only new points are read; the
        charts then paint again only the strip from the first bin that changed. Returns as ``_redraw_each``."""
        order = [i for _label, members in self.groups for i in members]  # rows by group
        rows = _ScopeRows(live, [self.keys[i] for i in order], kind)
        nc = len(self.charts)
        if not rows.n.any():
            for c in self.charts:
                c.many.set_lines(np.empty((0, 4)), [])
            return 0.0, [0.0] * nc, [None] * nc
        fields = np.array([CHART_FIELDS.index(c.spec.field) for c in self.charts])
        bins = max(40, int(self.charts[0].plot.getViewBox().width() / PIXELS_PER_BIN))
        x_max = rows.x_max()
        x_range = None if self.follow else self._visible_x()

        def take(r: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return rows.take(r, c, fields)

        sizes = [len(members) for _label, members in self.groups]
        if x_range is None:
            top = max(self.x_top, ahead(x_max)) if x_max > self.x_top else self.x_top
            key = (kind, top, bins, tuple(sizes), tuple(fields), live.generation, live.thinned, rows.source)
            st = self._grid
            if st is None or st.key != key:
                st = self._grid = _ScopeGrid(key, PeakGrid(0.0, top, bins, len(order), nc), sizes, self.bands)
            b0 = st.grid.update(take, rows.n)
            incremental = st.drawn
        else:
            first, n, x0, x1 = rows.clip(x_range)
            st = _ScopeGrid(None, PeakGrid(x0, max(x1 - x0, 1e-9), bins, len(order), nc), sizes, self.bands)
            self._grid = None
            b0 = st.grid.update(take, n, first)
            incremental = False
        off = [c.spec.field in self.unmeasured for c in self.charts]
        if b0 is None and st.drawn:
            return x_max, st.tops, [None if o else m for o, m in zip(off, st.measured, strict=True)]
        b0 = 0 if b0 is None else b0
        dirty_x: float | None = st.refresh(b0)
        if not incremental:
            dirty_x = None
        for c, ci in zip(self.charts, range(nc), strict=True):
            if off[ci]:  # a statistic the data shown has none of
                c.many.set_lines(np.empty((0, 4)), [])
                continue
            lines, offsets = st.lines(ci)
            ranges = [
                (c.pens[g], int(offsets[a]), int(offsets[b])) for g, (a, b) in enumerate(st.entity_ranges)
            ]
            c.many.set_lines(lines, ranges, dirty_x)
        st.drawn = True
        return (
            x_max,
            [0.0 if o else t for o, t in zip(off, st.tops, strict=True)],
            [None if o else m for o, m in zip(off, st.measured, strict=True)],
        )

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


class ChartScroller(QScrollArea):
    """The charts' view: the charts fill it, in one row of four when it is wide and low; where even that
    leaves a chart less than its minimum, the view scrolls vertically (the charts are never squashed)."""

    def __init__(self, charts: ChartGrid, parent: QWidget | None = None):
        super().__init__(parent)
        self.charts = charts
        self.setWidget(charts)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizeAdjustPolicy(QScrollArea.SizeAdjustPolicy.AdjustIgnored)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setMinimumWidth(CHART_MIN_WIDTH + 20)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        size = event.size()
        self.charts.fit_columns(size.width(), size.height())
        super().resizeEvent(event)


class _ScopeRows:
    """The points of a scope's series (rows in the order given) for one kind: rows of the level's live Block
    when they all have one (no copy), else copied into one (a stored run's series)."""

    def __init__(self, live: LiveResults, keys: list[SeriesKey], kind: str):
        series = [live.series.get(k) for k in keys]
        self.n = np.array([s.n if s is not None else 0 for s in series], dtype=np.int64)
        blocks = {id(s.block): s.block for s in series if s is not None}
        block = next(iter(blocks.values())) if len(blocks) == 1 else None
        if block is None or any(s is None for s in series):
            block = Block.copy_of(series)
            self.row = np.arange(len(series))
        else:
            self.row = np.array([s.row for s in series], dtype=np.int64)
        self.source = id(block)  # decimated bins belong to one source of rows
        self.x, self.values = block.x, block.values[kind]

    def x_max(self) -> float:
        has = self.n > 0
        return float(np.max(self.x[self.row[has], self.n[has] - 1])) if has.any() else 0.0

    def take(self, r: np.ndarray, c: np.ndarray, fields: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        br = self.row[r]
        return self.x[br, c], self.values[br[:, None], fields[None, :], c[:, None]]

    def clip(self, x_range: tuple[float, float]) -> tuple[np.ndarray, np.ndarray, float, float]:
        """Per row the points covering ``x_range`` (one beyond each side: lines leave the view), and the
        x range those points span."""
        first = np.zeros(len(self.n), dtype=np.int64)
        end = self.n.copy()
        for i, (br, n) in enumerate(zip(self.row, self.n, strict=True)):
            first[i], end[i] = clip_indices(self.x[br, :n], x_range)
        has = end > first
        if not has.any():
            return first, first, x_range[0], x_range[1]
        x0 = float(np.min(self.x[self.row[has], first[has]]))
        x1 = float(np.max(self.x[self.row[has], end[has] - 1]))
        return first, end, x0, x1


class _ScopeGrid:
    """The decimated bins of a scope's rows and, per chart, the entities drawn from them: each row (a line
    per series) or, in bands, each group (its lowest and highest series)."""

    def __init__(self, key: tuple | None, grid: PeakGrid, sizes: list[int], banded: bool):
        self.key, self.grid = key, grid
        self.banded = banded
        self.starts = np.concatenate([[0], np.cumsum(sizes)])[:-1]
        self.drawn = False
        g, nc, nb = len(sizes), grid.lo.shape[1], grid.bins
        if banded:  # per group: (min, max) over its rows of each bin's low and high values
            self.has = np.zeros((g, nb), dtype=bool)
            self.xf = np.full((g, nb), np.nan)
            self.xl = np.full((g, nb), np.nan)
            self.low = (np.full((g, nc, nb), np.nan, np.float32), np.full((g, nc, nb), np.nan, np.float32))
            self.high = (np.full((g, nc, nb), np.nan, np.float32), np.full((g, nc, nb), np.nan, np.float32))
            self.entity_ranges = [(i, i + 1) for i in range(g)]
        else:
            ends = np.append(self.starts[1:], sum(sizes))
            self.entity_ranges = [(int(a), int(b)) for a, b in zip(self.starts, ends, strict=True)]
        self.tops = [0.0] * nc
        self.measured = [False] * nc  # whether a chart's field has numbers at all
        self.layout: Layout | None = None

    def refresh(self, b0: int) -> float:
        """Bins from ``b0`` on changed: group them again (bands) and raise the charts' tops; returns the x from
        which lines may differ (the point before bin b0 of any entity, joined to the bin's first point)."""
        gr, sl = self.grid, slice(b0, None)
        self.layout = None
        if self.banded:
            st = self.starts
            lo, hi = gr.lo[:, :, sl], gr.hi[:, :, sl]
            with np.errstate(all="ignore"):
                self.low[0][:, :, sl] = np.fmin.reduceat(lo, st, axis=0)
                self.low[1][:, :, sl] = np.fmin.reduceat(hi, st, axis=0)
                self.high[0][:, :, sl] = np.fmax.reduceat(lo, st, axis=0)
                self.high[1][:, :, sl] = np.fmax.reduceat(hi, st, axis=0)
                self.xf[:, sl] = np.fmin.reduceat(gr.xf[:, sl], st, axis=0)
                self.xl[:, sl] = np.fmax.reduceat(gr.xl[:, sl], st, axis=0)
            self.has[:, sl] = np.logical_or.reduceat(gr.has[:, sl], st, axis=0)
            has, xl, his = self.has, self.xl, self.high[1]
        else:
            has, xl, his = gr.has, gr.xl, gr.hi
        with np.errstate(all="ignore"):
            for ci in range(len(self.tops)):
                top = his[:, ci, sl]
                if np.isfinite(top).any():
                    self.measured[ci] = True
                    self.tops[ci] = max(self.tops[ci], float(np.nanmax(top)))
        dirty = b0 * gr.bw + gr.x0
        if b0 > 0:
            before = has[:, :b0]
            ok = before.any(axis=1)
            if ok.any():
                last = b0 - 1 - np.argmax(before[ok, ::-1], axis=1)
                dirty = min(dirty, float(np.nanmin(xl[ok][np.arange(int(ok.sum())), last])))
        return dirty

    def lines(self, ci: int) -> tuple[np.ndarray, np.ndarray]:
        gr = self.grid
        if self.layout is None:  # where the points lie is the same in every chart
            self.layout = Layout(self.has, self.xf, self.xl) if self.banded else Layout(gr.has, gr.xf, gr.xl)
        if self.banded:
            return bands(
                self.layout,
                (self.low[0][:, ci], self.low[1][:, ci]),
                (self.high[0][:, ci], self.high[1][:, ci]),
            )
        return polylines(self.layout, gr.lo[:, ci], gr.hi[:, ci])
