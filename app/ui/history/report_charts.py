"""The report's bar charts (app.report.charts) in a widget: laid out by the same code and painted by the
same painter as the PDF, so what the window shows is what the client gets."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.report.charts import BarChart, Drawing, layout
from app.report.pdf import paint_drawing

SCALE = 1.35  # pixels per chart unit (a chart unit is a point in the PDF)
PAD = 10


class BarChartView(QWidget):
    """One report chart, as wide as the widget; its height follows from the width."""

    def __init__(self, chart: BarChart, parent: QWidget | None = None):
        super().__init__(parent)
        self.chart = chart
        self._drawing: Drawing | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setToolTip(chart.title)
        self._relayout(640)

    def _relayout(self, width_px: int) -> None:
        units = max(240.0, (width_px - 2 * PAD) / SCALE)
        if self._drawing is not None and abs(self._drawing.width - units) < 1:
            return
        self._drawing = layout(self.chart, units)
        self.setFixedHeight(int(self._drawing.height * SCALE + 2 * PAD))

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        h = int(self._drawing.height * SCALE + 2 * PAD) if self._drawing else 300
        return QSize(640, h)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        self._relayout(event.size().width())
        super().resizeEvent(event)

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802
        if self._drawing is None:
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), QColor("white"))  # a figure on paper
        p.setPen(QColor("#c9cfd6"))
        p.drawRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
        paint_drawing(p, self._drawing, PAD, PAD, SCALE)
        p.end()
