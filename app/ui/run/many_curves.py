"""One graphics item that draws many series as line segments.

pyqtgraph's curve items cost a QPainterPath, bounds bookkeeping and a paint call each; with a
hundred workers that overhead, not the drawing, dominated a redraw. This item fills one QLineF
array per group straight from numpy (pyqtgraph's PrimitiveArray) and draws each group with a
single drawLines call.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt.internals import PrimitiveArray
from PySide6.QtCore import QLineF, QRectF
from PySide6.QtGui import QPainter, QPen
from PySide6.QtWidgets import QStyleOptionGraphicsItem, QWidget


def segments(x: np.ndarray, ys: np.ndarray) -> Any:
    """All segments of k series sharing x, as a QLineF array; a NaN (a gap between steps) breaks
    the line on both sides."""
    out = PrimitiveArray(QLineF, 4)
    if len(x) < 2:
        out.resize(0)
        return out
    y0, y1 = ys[:, :-1], ys[:, 1:]
    keep = np.isfinite(y0) & np.isfinite(y1)
    n = int(np.count_nonzero(keep))
    out.resize(n)
    if n:
        mem = out.ndarray()
        mem[:, 0] = np.broadcast_to(x[:-1], y0.shape)[keep]
        mem[:, 1] = y0[keep]
        mem[:, 2] = np.broadcast_to(x[1:], y1.shape)[keep]
        mem[:, 3] = y1[keep]
    return out


def spans(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> Any:
    """A vertical segment from lo to hi at each x (where both are numbers), as a QLineF array."""
    out = PrimitiveArray(QLineF, 4)
    keep = np.isfinite(lo) & np.isfinite(hi)
    n = int(np.count_nonzero(keep))
    out.resize(n)
    if n:
        mem = out.ndarray()
        mem[:, 0] = mem[:, 2] = x[keep]
        mem[:, 1] = lo[keep]
        mem[:, 3] = hi[keep]
    return out


class ManyCurves(pg.GraphicsObject):
    """Groups of series, one pen per group (e.g. a manager's workers share a colour)."""

    def __init__(self) -> None:
        super().__init__()
        self._groups: list[tuple[QPen, Any]] = []
        self._bounds = QRectF()

    def set_groups(self, groups: list[tuple[QPen, np.ndarray, np.ndarray]], bands: bool = False) -> None:
        """``groups``: (pen, x [m], ys [k, m]) per group; NaNs break the lines. ``bands``: a group of two
        rows (lowest, highest) is also filled, a vertical line at each point between them."""
        self.prepareGeometryChange()
        self._groups = []
        x0 = y0 = np.inf
        x1 = y1 = -np.inf
        for pen, x, ys in groups:
            self._groups.append((pen, segments(x, ys)))
            if bands and ys.shape[0] == 2:
                self._groups.append((pen, spans(x, ys[0], ys[1])))
            if len(x) and np.isfinite(ys).any():
                x0, x1 = min(x0, float(x[0])), max(x1, float(x[-1]))
                y0, y1 = min(y0, float(np.nanmin(ys))), max(y1, float(np.nanmax(ys)))
        self._bounds = QRectF(x0, y0, x1 - x0, y1 - y0) if np.isfinite([x0, y0, x1, y1]).all() else QRectF()
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt's name)
        return QRectF(self._bounds)

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange: object = None) -> tuple[float, float] | None:  # noqa: N802,N803
        if self._bounds.isNull():
            return None
        return (self._bounds.left(), self._bounds.right()) if ax == 0 else (self._bounds.top(),
                                                                            self._bounds.bottom())

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        for pen, lines in self._groups:
            if len(lines):
                painter.setPen(pen)
                painter.drawLines(*lines.drawargs())
