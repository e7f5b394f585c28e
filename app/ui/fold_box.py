"""A box of text that stands as one line (elided) and opens to the whole on a click: the validity notes and
a comparison's findings above charts that need the height on a laptop screen."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QMouseEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget


class ElidedLabel(QLabel):
    """One line of plain text cut short with "…" to the width it is given (never asking for more)."""

    def __init__(self, text: str = "", parent: QWidget | None = None, tip_is_text: bool = False):
        """``tip_is_text``: the tooltip is always the whole text."""
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.tip_is_text = tip_is_text

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        if self.tip_is_text:
            self.setToolTip(text)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(20, self.fontMetrics().height())

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(self.fontMetrics().horizontalAdvance(self.text()), self.fontMetrics().height())

    def is_elided(self) -> bool:
        return self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width()

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        p = QPainter(self)
        p.setPen(self.palette().color(self.foregroundRole()))
        r = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, r.width())
        p.drawText(r, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), shown)


class FoldBox(QFrame):
    """A summary line (``summary``) with an arrow; a click on it shows the whole text (``label``) below."""

    toggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.arrow = QToolButton()
        self.arrow.setAutoRaise(True)
        self.arrow.setArrowType(Qt.ArrowType.RightArrow)
        self.arrow.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        self.arrow.setFixedSize(16, 16)
        self.arrow.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.arrow.clicked.connect(self.toggle)
        self.summary = ElidedLabel()
        self.summary.setCursor(Qt.CursorShape.PointingHandCursor)
        self.label = QLabel()  # the whole text, shown when open
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.hide()
        column = QVBoxLayout()
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.summary)
        column.addWidget(self.label)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 2, 8, 2)
        lay.setSpacing(4)
        lay.addWidget(self.arrow, 0, Qt.AlignmentFlag.AlignTop)
        lay.addLayout(column, 1)
        self.is_open = False
        self._more = True

    def set_content(self, summary: str, text: str, more: bool = True, rich: bool = True) -> None:
        """``summary``: the one line (plain text); ``text``: the whole (rich text unless ``rich`` is False);
        ``more``: whether the whole says more than the line (else no arrow, the line is all there is)."""
        self.summary.setText(summary)
        self.label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
        self.label.setText(text)
        self._more = more
        self.arrow.setVisible(more)
        self.summary.setToolTip("Click to show all" if more else "")
        self._show_state()

    def text(self) -> str:
        return self.label.text()

    def toggle(self) -> None:
        self.set_open(not self.is_open)

    def set_open(self, open_: bool) -> None:
        if open_ == self.is_open:
            return
        self.is_open = open_
        self._show_state()
        self.toggled.emit(open_)

    def _show_state(self) -> None:
        shown = self.is_open and self._more
        self.arrow.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.label.setVisible(shown)
        self.summary.setVisible(not shown)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt's name)
        if self._more and event.button() == Qt.MouseButton.LeftButton and not self.is_open:
            self.toggle()
            event.accept()
            return
        super().mousePressEvent(event)
