"""Small shared widgets: empty-state messages and a panel that shows either content or one."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QSizePolicy, QStackedWidget, QWidget


class EmptyState(QLabel):
    """A centred, wrapped explanation of why a panel is empty and what to do about it."""

    def __init__(self, text: str = "", parent: QWidget | None = None):
        super().__init__(text, parent)
        self.setObjectName("emptyState")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setMargin(24)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        font = self.font()
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.setFont(font)
        self.setEnabled(False)  # drawn in the palette's disabled (muted) text colour


class ContentOrEmpty(QStackedWidget):
    """Shows ``content`` or an EmptyState with a message."""

    def __init__(self, content: QWidget, parent: QWidget | None = None):
        super().__init__(parent)
        self.content = content
        self.empty = EmptyState()
        self.addWidget(content)
        self.addWidget(self.empty)

    def show_content(self) -> None:
        self.setCurrentWidget(self.content)

    def show_empty(self, message: str) -> None:
        self.empty.setText(message)
        self.setCurrentWidget(self.empty)

    @property
    def is_empty(self) -> bool:
        return self.currentWidget() is self.empty


def button(text: str, tip: str, slot: Callable[[], object], parent: QWidget | None = None) -> QPushButton:
    b = QPushButton(text, parent)
    b.setToolTip(tip)
    b.clicked.connect(lambda _checked=False: slot())
    return b


def error_label() -> QLabel:
    """A red inline message next to a field; hidden while there is nothing to say."""
    lab = QLabel()
    lab.setObjectName("fieldError")
    lab.setStyleSheet("color: #d32f2f;")
    lab.setWordWrap(True)
    lab.setVisible(False)
    return lab
