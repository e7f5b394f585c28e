"""The four live charts (IOPS, MB/s, average + p99 and maximum response time) drawn with pyqtgraph.

Curves are clipped to the visible x range and downsampled (peak mode keeps spikes), so redraws
stay cheap with hundreds of series after hours of samples.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette, QPen, QPixmapCache
from PySide6.QtWidgets import QGraphicsItem, QGridLayout, QLabel, QWidget

from app.ui.run.decimate import PeakGrid, clip_indices
from app.ui.run.live_data import CHART_FIELDS, Block, LiveResults, SeriesKey
from app.ui.run.many_curves import Layout, ManyCurves, bands, polylines

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
AXIS_WIDTH = 64  # pixels for the left axis: ticks like "150k" or "0.0008" and the unit label
X_START = 10.0  # seconds shown before the first data; the axis then grows a quarter ahead of the data
SPARSE_POINTS = 120  # up to this many points per series, each point is also drawn as a dot
PIXELS_PER_BIN = 3  # many-series mode: one min/max pair per this many pixel columns
PIXMAP_CACHE_KB = 64 * 1024  # the charts' pictures are kept as pixmaps (four large charts need ~10 MB)
# Beyond this many series a manager's workers are drawn as one band (their range at each moment), not a
# line each: hundreds of overlapping lines are a blur that costs a redraw too long (benchmarks/bench_gui.py).
BAND_SERIES = 256


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


def legend_html(groups: list[tuple[str, list[int]]], many: bool, bands: bool = False) -> str:
    """Coloured squares and names; with many series each colour is a manager's workers."""
    items = [f'<span style="color:{series_color(i).name()}">&#9632;</span>&nbsp;{html.escape(name)}'
             + (f" ({len(members)})" if many and len(members) > 1 else "")
             for i, (name, members) in enumerate(groups)]
    lead = ("One colour per manager, a band from its lowest to its highest worker: " if bands else
            "One colour per manager, one line per worker: " if many else "")
    dashed = "" if many else " &nbsp; — solid: average, dashed: 99th percentile response time"
    return lead + " &nbsp; ".join(items) + dashed


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


class _Chart:
    def __init__(self, spec: ChartSpec):
        self.spec = spec
        self.widget = pg.PlotWidget(axisItems={"left": CompactAxis("left")})
        self.plot = self.widget.getPlotItem()
        self.plot.setTitle(spec.title, size="9pt")
        self.plot.setLabel("left", spec.unit)
        self.plot.setLabel("bottom", "time since start (s)")
        for axis in ("left", "bottom"):
            ax = self.plot.getAxis(axis)
            ax.enableAutoSIPrefix(False)
            # Axes change only when the range does: keep them as pixmaps instead of replaying
            # their text every frame (a large share of a redraw otherwise).
            ax.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.plot.titleLabel.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        # one width for every left axis: pyqtgraph links x ranges by screen position, so plots
        # whose axes differ in width would show shifted time ranges
        self.plot.getAxis("left").setWidth(AXIS_WIDTH)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.setClipToView(True)
        self.plot.setDownsampling(auto=True, mode="peak")
        self.plot.setMouseEnabled(x=True, y=False)
        # Ranges are set by ChartGrid (stable "nice" ranges that change seldom): pyqtgraph's
        # auto-range would re-measure every curve and re-lay the axes on every update.
        self.plot.disableAutoRange()
        self.plot.setRange(xRange=(0, X_START), yRange=(0, 1), padding=0)
        self.plot.setMenuEnabled(False)
        self.y_top = 1.0
        self.widget.setMinimumSize(160, 140)
        self.curves: list[pg.PlotDataItem] = []
        self.p99: list[pg.PlotDataItem] = []
        self.many: ManyCurves | None = None  # many-series mode: one item draws every group
        self.pens: list[QPen] = []
        self.marks: list[pg.InfiniteLine] = []


class ChartGrid(QWidget):
    """Four charts in a 2 x 2 grid showing the same set of series."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(4)
        self.legend = QLabel()
        self.legend.setObjectName("chartLegend")
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.hide()
        grid.addWidget(self.legend, 0, 0, 1, 2)
        self.charts = [_Chart(spec) for spec in CHARTS]
        for i, c in enumerate(self.charts):
            grid.addWidget(c.widget, 1 + i // 2, i % 2)
        for c in self.charts[1:]:
            c.plot.setXLink(self.charts[0].plot)
        self.follow = True  # ranges follow the data until the user zooms or pans
        self.x_top = X_START
        self._generation = -1
        for c in self.charts:
            c.plot.getViewBox().sigRangeChangedManually.connect(self._user_zoomed)
            c.plot.autoBtn.clicked.disconnect()
            c.plot.autoBtn.clicked.connect(self.follow_data)
        self.keys: list[SeriesKey] = []
        self.groups: list[tuple[str, list[int]]] = []
        self.many = False
        self.bands = False  # many series: each group drawn as its range (see BAND_SERIES)
        self._grid: _ScopeGrid | None = None  # many-series mode: the decimated bins of every series
        QPixmapCache.setCacheLimit(max(QPixmapCache.cacheLimit(), PIXMAP_CACHE_KB))
        self._marks_drawn = 0
        self._revision = -1

    def set_series(self, keys: list[SeriesKey], labels: list[str]) -> None:
        """Which series to draw, the same colours in every chart (named in ``legend``, a strip above
        the charts, so no legend covers the data).

        Up to LEGEND_MAX series: one curve each, with dashed p99 lines. More: one item per chart
        draws every series, one colour per manager (its workers share it), decimated to the chart's
        pixel width (see benchmarks/bench_gui.py).
        """
        self.keys = list(keys)
        self._revision = -1
        self._grid = None
        many = len(keys) > LEGEND_MAX
        self.groups = group_series(keys, labels) if many else [(label, [i]) for i, label in enumerate(labels)]
        for c in self.charts:
            for item in c.curves + c.p99:
                c.plot.removeItem(item)
            c.curves, c.p99, c.pens = [], [], []
            if c.many is not None:
                c.plot.removeItem(c.many)
                c.many = None
            if many:
                c.many = ManyCurves()
                c.plot.addItem(c.many)
            for i, _group in enumerate(self.groups):
                pen = pg.mkPen(series_color(i), width=1 if many else 1.5)
                c.pens.append(pen)
                if many:
                    continue
                c.curves.append(c.plot.plot([], [], pen=pen, connect="finite"))
                if c.spec.field == "lat_mean_ms":
                    dash = pg.mkPen(series_color(i), width=1, style=Qt.PenStyle.DashLine)
                    c.p99.append(c.plot.plot([], [], pen=dash, connect="finite"))
            if c.spec.field == "lat_mean_ms":
                c.plot.setLabel("left", "ms" if many else c.spec.unit)
        self.many = many
        self.bands = len(keys) > BAND_SERIES
        self.legend.setText(legend_html(self.groups, many, self.bands))
        self.legend.setVisible(len(self.groups) > 1 or many)

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
        self.charts[0].plot.setXRange(0, self.x_top, padding=0)
        for c in self.charts:
            c.y_top = 1.0
            c.plot.setYRange(0, 1, padding=0)
        self._grid = None

    def _fit(self, x_max: float, y_max: list[float]) -> None:
        """Grow ranges in steps (x by a quarter ahead, y to a nice top), shrink y only when the data
        falls below 40 %: the axes are re-laid seldom, not on every update."""
        if not self.follow:
            return
        if x_max > self.x_top:
            self.x_top = nice_ceil(x_max * 1.25)
            self.charts[0].plot.setXRange(0, self.x_top, padding=0)
            self._space_mark_labels()
        for c, top in zip(self.charts, y_max, strict=True):
            if top > c.y_top or top < 0.4 * c.y_top:
                c.y_top = nice_ceil(top * 1.1) if top > 0 else 1.0
                c.plot.setYRange(0, c.y_top, padding=0)

    def _space_mark_labels(self) -> None:
        """Step labels (#1, #2, ...) only where they do not overlap at the current scale."""
        for c in self.charts:
            last = -np.inf
            for m in c.marks:
                show = m.value() - last >= self.x_top / 14
                m.label.setVisible(show)
                if show:
                    last = m.value()

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
        if live.generation != self._generation:  # a new run: start from a short time axis again
            self._generation = live.generation
            if self.follow:
                self._reset_ranges()
        if len(live.steps) < self._marks_drawn:
            self.clear_marks()
        for mark in live.steps[self._marks_drawn:]:
            for c in self.charts:
                line = pg.InfiniteLine(mark.x, angle=90, pen=pg.mkPen((128, 128, 128), style=Qt.PenStyle.DotLine),
                                       label=f"#{mark.label.split(':')[0]}",
                                       labelOpts={"position": 0.97, "color": (128, 128, 128),
                                                  "anchors": [(0, 0), (0, 0)]})
                c.plot.addItem(line, ignoreBounds=True)
                c.marks.append(line)
        if len(live.steps) != self._marks_drawn:
            self._space_mark_labels()
        self._marks_drawn = len(live.steps)
        if self.many:
            x_max, y_max = self._redraw_groups(live, kind)
        else:
            x_max, y_max = self._redraw_each(live, kind)
        self._fit(x_max, y_max)
        return True

    def _redraw_each(self, live: LiveResults, kind: str) -> tuple[float, list[float]]:
        x_max, y_max = 0.0, [0.0] * len(self.charts)
        for ci, c in enumerate(self.charts):
            for i, key in enumerate(self.keys):
                s = live.series.get(key)
                if s is None or s.n == 0:
                    c.curves[i].setData([], [])
                    if c.p99:
                        c.p99[i].setData([], [])
                    continue
                x = s.xs()
                y = s.ys(kind, c.spec.field)
                # dots while points are few: a step with one point (slow updates) is visible too
                sparse = s.n <= SPARSE_POINTS
                c.curves[i].setData(x, y, symbol="o" if sparse else None, symbolSize=5,
                                    symbolPen=None, symbolBrush=series_color(i))
                x_max = max(x_max, float(x[-1]))
                y_max[ci] = max(y_max[ci], _top(y))
                if c.p99:
                    p99 = s.ys(kind, "p99_ms")
                    c.p99[i].setData(x, p99, symbol="t" if sparse else None, symbolSize=6,
                                     symbolPen=series_color(i), symbolBrush=None)
                    y_max[ci] = max(y_max[ci], _top(p99))
        return x_max, y_max

    def _visible_x(self) -> tuple[float, float] | None:
        """None while the x axis follows the data; the zoomed range otherwise (to clip to it)."""
        vb = self.charts[0].plot.getViewBox()
        return None if vb.autoRangeEnabled()[0] else tuple(vb.viewRange()[0])

    def _redraw_groups(self, live: LiveResults, kind: str) -> tuple[float, list[float]]:
        """Every series of every group decimated at once (PeakGrid), then one array of lines per chart.
        While the ranges follow the data, bins are fixed on [0, x_top) and only new points are read; the
        charts then paint again only the strip from the first bin that changed."""
        order = [i for _label, members in self.groups for i in members]  # rows by group
        rows = _ScopeRows(live, [self.keys[i] for i in order], kind)
        nc = len(self.charts)
        if not rows.n.any():
            for c in self.charts:
                c.many.set_lines(np.empty((0, 4)), [])
            return 0.0, [0.0] * nc
        fields = np.array([CHART_FIELDS.index(c.spec.field) for c in self.charts])
        bins = max(40, int(self.charts[0].plot.getViewBox().width() / PIXELS_PER_BIN))
        x_max = rows.x_max()
        x_range = None if self.follow else self._visible_x()

        def take(r: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return rows.take(r, c, fields)

        sizes = [len(members) for _label, members in self.groups]
        if x_range is None:
            top = max(self.x_top, nice_ceil(x_max * 1.25)) if x_max > self.x_top else self.x_top
            key = (kind, top, bins, tuple(sizes), live.generation, rows.source)
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
        if b0 is None and st.drawn:
            return x_max, st.tops
        b0 = 0 if b0 is None else b0
        dirty_x = st.refresh(b0)
        if not incremental:
            dirty_x = None
        for c, ci in zip(self.charts, range(nc), strict=True):
            lines, offsets = st.lines(ci)
            ranges = [(c.pens[g], int(offsets[a]), int(offsets[b])) for g, (a, b) in enumerate(st.entity_ranges)]
            c.many.set_lines(lines, ranges, dirty_x)
        st.drawn = True
        return x_max, st.tops

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
            c.plot.setTitle(c.spec.title, color=fg.name(), size="9pt")



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
            return bands(self.layout, (self.low[0][:, ci], self.low[1][:, ci]),
                         (self.high[0][:, ci], self.high[1][:, ci]))
        return polylines(self.layout, gr.lo[:, ci], gr.hi[:, ci])
