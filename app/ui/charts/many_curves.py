"""One graphics item that draws many series as line segments.

pyqtgraph's curve items cost a QPainterPath, bounds bookkeeping and a paint call each; with a
hundred workers that overhead, not the drawing, dominated a redraw. This item keeps every line of a
chart in one numpy array of QLineF (a range per colour, so one drawLines call per colour), built for
all series at once from their decimated bins (``polylines``, ``bands``).

Its picture is kept in a pixmap (Qt's device-coordinate cache) of the range shown: a live update that only
changed the newest part of the series says from which x on (``set_lines``'s ``dirty_x``), so Qt paints
again only that strip, and ``paint`` draws only the lines that reach into it.
"""

from __future__ import annotations

import numpy as np
from pyqtgraph import GraphicsObject
from pyqtgraph.Qt import compat
from PySide6.QtCore import QLineF, QRectF
from PySide6.QtGui import QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

LINE_BYTES = 4 * 8  # a QLineF: four doubles


class Layout:
    """The points of every entity [e, bins] in order, two per bin that holds points (its first x with the bin's
    low value, its last x with its high value): computed once for the charts drawn from the same bins."""

    def __init__(self, has: np.ndarray, xf: np.ndarray, xl: np.ndarray):
        self.entities = has.shape[0]
        self.e, self.b = np.nonzero(has)  # row-major: by entity, then bin
        self.ent = np.repeat(self.e, 2)
        self.x = np.stack([xf[self.e, self.b], xl[self.e, self.b]], axis=1).ravel()
        self.same = self.ent[:-1] == self.ent[1:]  # consecutive points of one entity
        self.moves = self.x[:-1] != self.x[1:]

    def ys(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """The y of each point from the bins' low and high values [e, bins]."""
        return np.stack([lo[self.e, self.b], hi[self.e, self.b]], axis=1).ravel()

    def joins(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Segments between consecutive points of the same entity where both are numbers (a NaN breaks the
        line on both sides): (lines [m, 4], entity [m])."""
        finite = np.isfinite(y)
        ok = self.same & finite[:-1] & finite[1:]
        ok &= self.moves | (y[:-1] != y[1:])  # a bin of one point gives it twice: no line of length 0
        x = self.x
        lines = np.column_stack([x[:-1][ok], y[:-1][ok], x[1:][ok], y[1:][ok]])
        return lines, self.ent[:-1][ok]


def _by_entity(parts: list[tuple[np.ndarray, np.ndarray]], entities: int) -> tuple[np.ndarray, np.ndarray]:
    """Lines of several kinds put together entity by entity (each kind's order kept): (lines [m, 4],
    offsets [entities + 1], entity e's lines being lines[offsets[e]:offsets[e + 1]])."""
    counts = np.array([np.bincount(ent, minlength=entities) for _l, ent in parts]).reshape(
        len(parts), entities
    )
    per = counts.sum(axis=0)
    offsets = np.concatenate([[0], np.cumsum(per)])
    out = np.empty((int(offsets[-1]), 4), dtype=np.float64)
    before = offsets[:-1].copy()  # where the next kind's lines of each entity go
    for k, (lines, ent) in enumerate(parts):
        first = np.cumsum(counts[k]) - counts[k]  # where entity e starts in this kind's lines
        out[before[ent] + np.arange(len(ent)) - first[ent]] = lines
        before += counts[k]
    return out, offsets


def polylines(layout: Layout, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One line per entity through each bin's low and high point: (lines, offsets) as ``_by_entity``."""
    lines, ent = layout.joins(layout.ys(lo, hi))  # already entity by entity
    return lines, np.concatenate([[0], np.cumsum(np.bincount(ent, minlength=layout.entities))])


def bands(
    layout: Layout, low: tuple[np.ndarray, np.ndarray], high: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Per entity, its lowest and its highest line, and a vertical span between them at each point where they
    differ (``low``/``high``: (value at the bin's first point, at its last) [e, bins])."""
    ylo, yhi = layout.ys(*low), layout.ys(*high)
    ok = np.isfinite(ylo) & np.isfinite(yhi) & (ylo != yhi)
    x = layout.x
    spans = np.column_stack([x[ok], ylo[ok], x[ok], yhi[ok]])
    return _by_entity([layout.joins(ylo), layout.joins(yhi), (spans, layout.ent[ok])], layout.entities)


class ManyCurves(GraphicsObject):
    """Lines in one array, drawn a colour at a time (e.g. a manager's workers share a colour)."""

    def __init__(self) -> None:
        super().__init__()
        self._lines = np.empty((0, 4), dtype=np.float64)
        self._xmin = self._xmax = np.empty(0)
        self._ranges: list[tuple[QPen, int, int]] = []
        self._bounds = QRectF()  # of the data
        self._frame: QRectF | None = None  # the item's extent: the range shown (so its picture fits the view)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def set_lines(
        self, lines: np.ndarray, ranges: list[tuple[QPen, int, int]], dirty_x: float | None = None
    ) -> None:
        """``lines`` [m, 4] (x1, y1, x2, y2); ``ranges``: (pen, first, end) rows of ``lines`` per colour, drawn
        in this order. ``dirty_x``: only lines at or right of this x changed (None: anything may have)."""
        self._lines = np.ascontiguousarray(lines, dtype=np.float64)
        self._xmin = np.minimum(self._lines[:, 0], self._lines[:, 2])
        self._xmax = np.maximum(self._lines[:, 0], self._lines[:, 2])
        self._ranges = ranges
        if len(self._lines):
            y = self._lines[:, 1::2]
            x0, x1 = float(self._xmin.min()), float(self._xmax.max())
            y0, y1 = float(y.min()), float(y.max())
            self._bounds = QRectF(x0, y0, x1 - x0, y1 - y0)
        else:
            self._bounds = QRectF()
        frame = self.boundingRect()
        if dirty_x is None or not len(self._lines) or frame.isEmpty():
            self.update()
        else:
            left = dirty_x - 2 * (self.pixelWidth() or 0.0)
            self.update(QRectF(left, frame.top(), max(frame.right() - left, 0.0), frame.height()))

    def viewTransformChanged(self) -> None:  # noqa: N802 (pyqtgraph's name): the range shown changed
        self.prepareGeometryChange()
        self._frame = None
        super().viewTransformChanged()

    def colour_lines(self) -> list[np.ndarray]:
        """The lines [m, 4] of each colour, in drawing order."""
        return [self._lines[a:b] for _pen, a, b in self._ranges]

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt's name)
        if self._frame is None:
            view = self.viewRect()  # of the ViewBox, in data coordinates; what lies outside is not seen
            self._frame = QRectF(view) if view is not None else QRectF()
        return QRectF(self._frame)

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange: object = None) -> tuple[float, float] | None:  # noqa: N802,N803
        if self._bounds.isNull():
            return None
        return (
            (self._bounds.left(), self._bounds.right())
            if ax == 0
            else (self._bounds.top(), self._bounds.bottom())
        )

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        lines, ranges = self._lines, self._ranges
        exposed = option.exposedRect
        if len(lines) and exposed.left() > self._bounds.left():  # a strip: only the lines reaching into it
            keep = (self._xmax >= exposed.left()) & (self._xmin <= exposed.right())
            at = np.concatenate([[0], np.cumsum(keep)])
            lines = lines[keep]
            ranges = [(pen, int(at[a]), int(at[b])) for pen, a, b in ranges]
        base = lines.ctypes.data
        for pen, a, b in ranges:
            if b > a:
                painter.setPen(pen)
                painter.drawLines(compat.wrapinstance(base + a * LINE_BYTES, QLineF), b - a)
