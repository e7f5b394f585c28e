"""The mouse wheel over a chart scrolls the page the chart sits in; Ctrl+wheel zooms the chart (pyqtgraph's
own wheel zoom otherwise takes every turn meant for the page, and rescales an axis by accident)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QApplication, QScrollArea, QWidget

ZOOM_MODIFIER = Qt.KeyboardModifier.ControlModifier


def page_of(widget: QWidget) -> QScrollArea | None:
    """The nearest scroll area around ``widget`` (its page), if any."""
    p = widget.parentWidget()
    while p is not None:
        if isinstance(p, QScrollArea):
            return p
        p = p.parentWidget()
    return None


class _PageWheel(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, QWidget):
            return False
        if event.modifiers() & ZOOM_MODIFIER:  # type: ignore[attr-defined]
            return False  # the chart zooms
        page = page_of(watched)
        if page is not None:
            QApplication.sendEvent(page.verticalScrollBar(), event)
        return True  # never a zoom without Ctrl


_FILTER: _PageWheel | None = None


def wheel_scrolls_page(plot_widget: QWidget) -> None:
    """Make the wheel over ``plot_widget`` (a pyqtgraph PlotWidget) scroll its page; Ctrl+wheel zooms."""
    global _FILTER
    if _FILTER is None:
        _FILTER = _PageWheel(QApplication.instance())
    viewport = getattr(plot_widget, "viewport", None)
    (viewport() if callable(viewport) else plot_widget).installEventFilter(_FILTER)
