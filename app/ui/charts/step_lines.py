"""Every step boundary of a chart as ONE graphics item: a vertical line at each step's start, across the
plot's height, only those inside the view painted.

pyqtgraph's InfiniteLine is one QGraphicsItem per line, each with its own bounding rect, view connections
and pen: an 8-hour run of 48 steps on four charts made 192 of them, and adding and painting them was the
largest part of reopening it. This item keeps the boundaries as one array and draws the visible ones in one
``drawLines`` call, with the same dotted cosmetic pen (one pixel wide whatever the zoom)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QRectF
from PySide6.QtGui import QPainter, QPen

PAD_PX = 2.0  # beyond the line's pixel, so the scene repaints it whole


class StepLines(pg.GraphicsObject):
    """Vertical lines at ``xs`` (data coordinates), spanning whatever y range the view shows. Add it with
    ``plot.addItem(item, ignoreBounds=True)``: it never widens the view."""

    def __init__(self, pen: QPen) -> None:
        super().__init__()
        self.pen = QPen(pen)
        self.pen.setCosmetic(True)
        self.xs = np.empty(0)
        self._rect: QRectF | None = None

    def set_xs(self, xs: Sequence[float] | np.ndarray) -> None:
        """The lines' x positions (replaces the previous ones)."""
        xs = np.asarray(xs, dtype=np.float64)
        if xs.shape == self.xs.shape and np.array_equal(xs, self.xs):
            return
        self.prepareGeometryChange()
        self.xs = xs
        self._rect = None
        self.update()

    def visible_xs(self) -> np.ndarray:
        """The lines inside the view's x range (what paint draws)."""
        vb = self.getViewBox()
        if vb is None or not len(self.xs):
            return self.xs[:0]
        (x0, x1), _y = vb.viewRange()
        return self.xs[(self.xs >= x0) & (self.xs <= x1)]

    def viewRangeChanged(self) -> None:  # noqa: N802 (pyqtgraph's hook)
        self.prepareGeometryChange()
        self._rect = None
        self.update()

    def viewTransformChanged(self) -> None:  # noqa: N802 (pyqtgraph's hook: the view resized, the pad's pixels)
        self.viewRangeChanged()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt's name)
        if self._rect is None:
            self._rect = self._bounds()
        return self._rect

    def _bounds(self) -> QRectF:
        vb = self.getViewBox()
        shown = self.visible_xs()
        if vb is None or not len(shown):
            return QRectF()
        (x0, x1), (y0, y1) = vb.viewRange()
        px = (
            self.pixelWidth() or 0.0
        )  # 0 before the view has a size: a sliver of the range, never an empty rect
        pad = PAD_PX * px if px > 0 else max(abs(x1 - x0), 1.0) * 1e-3
        left, right = float(shown.min()) - pad, float(shown.max()) + pad
        return QRectF(left, float(y0), right - left, float(y1 - y0))

    def paint(self, p: QPainter, *_args: object) -> None:
        vb = self.getViewBox()
        shown = self.visible_xs()
        if vb is None or not len(shown):
            return
        _x, (y0, y1) = vb.viewRange()
        p.setPen(self.pen)
        p.drawLines([QLineF(float(x), float(y0), float(x), float(y1)) for x in shown])
