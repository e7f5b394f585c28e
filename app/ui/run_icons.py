"""Start and Stop drawn in colour (a green triangle, a red square), so they read on a light and a dark
toolbar alike: the style's own media icons are black, and the dark theme's toolbar is near-black (issue 38.7)."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap, QPolygonF

START_GREEN = QColor(34, 150, 60)  # a contrast of 3:1 at least on either toolbar (WCAG, graphics)
STOP_RED = QColor(220, 60, 75)
SIZES = (16, 20, 24, 32, 48, 64)


def _drawn(paint) -> QIcon:  # noqa: ANN001 (a function of the painter and the side in pixels)
    icon = QIcon()
    for side in SIZES:
        pm = QPixmap(side, side)
        pm.fill(Qt.GlobalColor.transparent)
        p = QPainter(pm)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        paint(p, float(side))
        p.end()
        icon.addPixmap(pm)
    return icon


def _outline(color: QColor, side: float) -> QPen:
    pen = QPen(color)  # the same colour: a darker edge would lose the contrast on the dark toolbar
    pen.setWidthF(max(1.0, side / 16))
    return pen


def start_icon() -> QIcon:
    """A green triangle pointing right."""

    def paint(p: QPainter, s: float) -> None:
        p.setPen(_outline(START_GREEN, s))
        p.setBrush(START_GREEN)
        p.drawPolygon(
            QPolygonF([QPointF(s * 0.22, s * 0.14), QPointF(s * 0.86, s * 0.5), QPointF(s * 0.22, s * 0.86)])
        )

    return _drawn(paint)


def stop_icon() -> QIcon:
    """A red square."""

    def paint(p: QPainter, s: float) -> None:
        p.setPen(_outline(STOP_RED, s))
        p.setBrush(STOP_RED)
        p.drawRoundedRect(QRectF(s * 0.2, s * 0.2, s * 0.6, s * 0.6), s * 0.06, s * 0.06)

    return _drawn(paint)


DRAWN = {"start": start_icon, "stop": stop_icon}
