"""A stored sweep run's curves (the History run view's Sweep tab), drawn with pyqtgraph from the same curve
data as the report (``analysis.sweep_curves``): IOPS, MB/s and response time against the load, and the
response time against the throughput with the knee marked. One family of sweeps at a time."""

from __future__ import annotations

import math
import re

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPalette
from PySide6.QtWidgets import QApplication, QComboBox, QGridLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.analysis.sweep import KNEE_RULE, find_sweeps
from app.analysis.sweep_curves import SweepFamily, families
from app.store.records import Run
from app.ui.charts.chart_grid import PLOT_MIN_HEIGHT, CompactAxis, series_color
from app.ui.charts.wheel import wheel_scrolls_page
from app.ui.fold_box import FoldBox
from app.ui.widgets import scrolling

KNEE_COLOR = "#d0342c"
PLOT_FRAME = 72  # a sweep chart's title, load axis and its label around the plot area (measured: 68)
WORK = {"iops": "IOPS", "mbps": "MB/s"}
SWEEP_MIN_WIDTH = 220  # a sweep chart's least width: its load axis' ticks and its title readable


def shorter(text: str) -> list[str]:
    """``text``, then without its parentheses ('queue depth (outstanding I/Os per target), logarithmic' ->
    'queue depth, logarithmic'): what a narrow chart shows in turn."""
    short = re.sub(r" \([^)]*\)", "", text)
    return [text] if short == text else [text, short]


def fitted(texts: list[str], font: QFont, room: int) -> str:
    """The first of ``texts`` that fits ``room`` pixels, else the last cut short with "…"."""
    fm = QFontMetrics(font)
    for t in texts:
        if fm.horizontalAdvance(t) <= room:
            return t
    return fm.elidedText(texts[-1], Qt.TextElideMode.ElideRight, max(room, 40))


class _Plot:
    def __init__(self, title: str):
        self.title = title
        self.titles = [title]  # the title, then shorter forms for a narrow chart
        self.x_titles: list[str] = []  # the load axis' title, then shorter forms
        self.color = "#000000"
        self.widget = pg.PlotWidget(axisItems={"left": CompactAxis("left")})
        self.plot = self.widget.getPlotItem()
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.setMenuEnabled(False)
        self.plot.getAxis("left").setWidth(56)
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).enableAutoSIPrefix(False)
        self.plot.addLegend(offset=(64, 4), labelTextSize="8pt")  # top left: sweeps mostly rise
        # a plot area of PLOT_MIN_HEIGHT at least under its title, with the load axis and its label whole
        self.widget.setMinimumSize(SWEEP_MIN_WIDTH, PLOT_MIN_HEIGHT + PLOT_FRAME)
        wheel_scrolls_page(self.widget)

    def set_texts(self, titles: list[str], x_titles: list[str], color: str) -> None:
        self.titles, self.x_titles, self.color = titles, x_titles, color
        self.fit_texts()

    def fit_texts(self) -> None:
        """The title and the load axis' title whole at the chart's width (a longer title would widen the plot
        past the chart, and the axis' title be cut off at both sides)."""
        room = self.widget.width() - self.plot.getAxis("left").width() - 16
        title_font = QFont(self.widget.font())
        title_font.setPointSizeF(9)
        self.plot.setTitle(fitted(self.titles, title_font, room), size="9pt", color=self.color)
        if self.x_titles:
            axis = self.plot.getAxis("bottom")
            shown = fitted(self.x_titles, axis.label.font(), room)
            if axis.labelText != shown:
                self.plot.setLabel("bottom", shown)
                axis.resizeEvent()  # centred again (pyqtgraph places its title only on a resize)
        tip = "\n".join(dict.fromkeys([self.titles[0], *self.x_titles[:1]]))
        self.widget.setToolTip(tip)


class SweepView(QWidget):
    """Empty until ``set_run`` gets a run with sweeps."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.families: list[SweepFamily] = []
        self.summary = FoldBox()  # one line (the first finding) that opens to all: the curves keep the height
        self.summary.label.setToolTip(KNEE_RULE)
        self.choice = QComboBox()
        self.choice.setToolTip(
            "Which sweep the curves show (one line per outer value where two dimensions are swept)"
        )
        self.choice_label = QLabel("Sweep:")
        pick = QHBoxLayout()  # the findings beside the choice: the curves below keep the height
        pick.addWidget(self.choice_label, 0, Qt.AlignmentFlag.AlignTop)
        pick.addWidget(self.choice, 2, Qt.AlignmentFlag.AlignTop)
        pick.addWidget(self.summary, 3)
        self.plots = {
            k: _Plot(t)
            for k, t in (
                ("iops", "IOPS"),
                ("mbps", "MB/s"),
                ("lat", "Response time (solid: average, dashed: p99)"),
                ("knee", "Average response time against throughput"),
            )
        }
        plots = QWidget()
        self.grid = QGridLayout(plots)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.columns = 0
        self.set_columns(2)
        # where the view is low (a laptop, the minimum window) the curves scroll, never collapse; where it is
        # also wide, they stand in one row of four, whole without scrolling
        self.scroller = scrolling(plots)
        self.scroller.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroller.installEventFilter(self)
        for p in self.plots.values():
            p.widget.installEventFilter(self)  # its titles fitted to its width
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 4, 0, 0)
        lay.addLayout(pick)
        lay.addWidget(self.scroller, 1)
        self.choice.currentIndexChanged.connect(lambda _i: self._draw())
        self.apply_palette(QApplication.palette())

    def set_columns(self, columns: int) -> None:
        """The four charts in rows of ``columns`` (2: two rows; 4: one row)."""
        if columns == self.columns:
            return
        self.columns = columns
        for p in self.plots.values():
            self.grid.removeWidget(p.widget)
        for i, p in enumerate(self.plots.values()):
            self.grid.addWidget(p.widget, i // columns, i % columns)
        for c in range(4):
            self.grid.setColumnStretch(c, 1 if c < columns else 0)
        for r in range(2):
            self.grid.setRowStretch(r, 1 if r < 4 // columns else 0)

    def fit_columns(self, width: int, height: int) -> None:
        """One row of four when the view is too low for two rows of whole charts and wide enough for four."""
        gap = max(self.grid.spacing(), 0)
        two_rows = 2 * (PLOT_MIN_HEIGHT + PLOT_FRAME) + gap
        four = 4 * (SWEEP_MIN_WIDTH + gap)
        self.set_columns(4 if height < two_rows and width >= four else 2)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Resize:
            if watched is self.scroller:
                self.fit_columns(self.scroller.width(), self.scroller.height())
            else:
                for p in self.plots.values():
                    if watched is p.widget:
                        p.fit_texts()
        return super().eventFilter(watched, event)

    def set_run(self, run: Run) -> bool:
        """Show the run's sweeps; False (and nothing shown) when it has none."""
        sweeps = find_sweeps(run)
        self.families = families(sweeps)
        self.choice.blockSignals(True)
        self.choice.clear()
        for f in self.families:
            self.choice.addItem(f.title)
        self.choice.blockSignals(False)
        many = len(self.families) > 1
        self.choice.setVisible(many)
        self.choice_label.setVisible(many)
        self._draw()
        return bool(self.families)

    @property
    def family(self) -> SweepFamily | None:
        i = self.choice.currentIndex()
        return self.families[i] if 0 <= i < len(self.families) else None

    def _draw(self) -> None:
        for p in self.plots.values():
            p.plot.clear()
        fam = self.family
        if fam is None:
            self.summary.set_content("", "", more=False)
            return

        def x(load: float) -> float:
            return math.log2(load) if fam.log2 else load

        ticks = [[(x(v), label) for v, label in fam.ticks()]]
        knees = fam.knees()
        for key in ("iops", "mbps", "lat"):
            p = self.plots[key]
            p.plot.getAxis("bottom").setTicks(ticks)
            p.plot.setLabel("left", "ms" if key == "lat" else WORK[key])
            p.set_texts(shorter(p.title), shorter(fam.x_title), self._fg.name())
        for i, ln in enumerate(fam.lines):
            color = series_color(i)
            for key, field, dash in (
                ("iops", "iops", False),
                ("mbps", "mbps", False),
                ("lat", "lat_mean_ms", False),
                ("lat", "lat_p99_ms", True),
            ):
                pts = ln.series(field)
                pen = pg.mkPen(color, width=2, style=Qt.PenStyle.DashLine if dash else Qt.PenStyle.SolidLine)
                name = (
                    (ln.label or None)
                    if key != "lat"
                    else ((ln.label + " " if ln.label else "") + ("p99" if dash else "average"))
                )
                self.plots[key].plot.plot(
                    [x(a) for a, _ in pts],
                    [b for _, b in pts],
                    pen=pen,
                    symbol="o",
                    symbolSize=5,
                    symbolBrush=color,
                    symbolPen=color,
                    name=name,
                )
            pts = ln.latency_vs_throughput()
            self.plots["knee"].plot.plot(
                [a for a, _ in pts],
                [b for _, b in pts],
                pen=pg.mkPen(color, width=2),
                symbol="o",
                symbolSize=5,
                symbolBrush=color,
                symbolPen=color,
                name=ln.label or None,
            )
            for (a, b), p in zip(pts, ln.sweep.points, strict=False):
                self._text(self.plots["knee"], fam.tick_label(p.load), a, b, color.name(), (0, 0))
        work = fam.throughput
        top = max((t for ln in fam.lines for t, _ in ln.latency_vs_throughput()), default=0.0)
        last = x(fam.loads[-1])
        for ln, k in knees:  # an open square and a caption on the throughput curve and on the knee curve
            for key, xv, right in (
                (work, x(k.load), x(fam.loads[0]) + last),
                ("knee", getattr(k, work), top),
            ):
                yv = getattr(k, work) if key == work else k.lat_mean_ms
                self.plots[key].plot.plot(
                    [xv],
                    [yv],
                    pen=None,
                    symbol="s",
                    symbolSize=14,
                    symbolBrush=None,
                    symbolPen=pg.mkPen(KNEE_COLOR, width=2),
                )
                # the caption on the side with room: left of a knee in the right half
                anchor = (1.1, 1.2) if 2 * xv > right else (-0.1, 1.2)
                self._text(self.plots[key], fam.knee_caption(ln, k), xv, yv, KNEE_COLOR, anchor)
        for _ln, k in knees:  # the knee's throughput per ms from the origin: every other point lies above it
            if getattr(k, work) > 0:
                self.plots["knee"].plot.plot(
                    [0.0, top],
                    [0.0, top * k.lat_mean_ms / getattr(k, work)],
                    pen=pg.mkPen("#9aa0a6", width=1, style=Qt.PenStyle.DashLine),
                )
        kp = self.plots["knee"].plot
        kp.setLabel("left", "ms (average)")
        kp.getAxis("bottom").setTicks(None)
        self.plots["knee"].set_texts(
            [
                f"Average response time against {WORK[work]}, knee marked",
                f"Response time against {WORK[work]}",
            ],
            shorter(f"{WORK[work]} (point labels: {fam.noun}; dashed: the knee's ratio)"),
            self._fg.name(),
        )
        found = [s for ln in fam.lines for s in ln.sweep.summary()]
        n = len(found)
        self.summary.set_content(
            (found[0] if found else "") + (f"  (+{n - 1} more: click)" if n > 1 else ""),
            "\n".join(found),
            more=n > 1,
            rich=False,
        )
        for key, p in self.plots.items():  # y from zero: a curve's rise reads true
            top = max(
                (b for item in p.plot.listDataItems() if (d := item.getData())[1] is not None for b in d[1]),
                default=0.0,
            )
            p.plot.enableAutoRange(axis="x")
            p.plot.setYRange(0, top * (1.15 if key in (work, "knee") else 1.05) or 1.0, padding=0)
        right = max(  # the knee chart's load labels stand right of their points: room for them
            (a for item in kp.listDataItems() if (d := item.getData())[0] is not None for a in d[0]),
            default=0.0,
        )
        if right > 0:
            kp.setXRange(0, right * 1.12, padding=0)

    def _text(
        self, p: _Plot, text: str, xv: float, yv: float, color: str, anchor: tuple[float, float]
    ) -> None:
        item = pg.TextItem(text, color=color, anchor=anchor)
        item.setPos(xv, yv)
        p.plot.addItem(item)

    def apply_palette(self, palette: QPalette) -> None:
        """Follow the window's light or dark palette."""
        self._fg = palette.color(QPalette.ColorRole.Text)
        bg = palette.color(QPalette.ColorRole.Base)
        for p in self.plots.values():
            p.widget.setBackground(bg)
            for axis in ("left", "bottom"):
                ax = p.plot.getAxis(axis)
                ax.setPen(self._fg)
                ax.setTextPen(self._fg)
            if p.plot.legend is not None:  # the legend's names in the text's colour (pyqtgraph's is faint)
                p.plot.legend.setLabelTextColor(self._fg)
        self._draw()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.PaletteChange:
            self.apply_palette(QApplication.palette())
        super().changeEvent(event)
