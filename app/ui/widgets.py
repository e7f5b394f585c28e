"""Small shared widgets: empty-state messages and a panel that shows either content or one."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QStackedWidget, QWidget


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


class Banner(QFrame):
    """A dismissible notice across the top of the window (first run, fio missing)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("banner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("#banner { background: palette(alternate-base); border: 1px solid palette(mid); }")
        lay = QHBoxLayout(self)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.label, 1)
        self.close_button = QPushButton("Dismiss")
        self.close_button.clicked.connect(self.hide)
        lay.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def show_text(self, text: str, warning: bool = False) -> None:
        self.label.setText(text)
        self.label.setStyleSheet("color: #d32f2f;" if warning else "")
        self.show()


def compact_rows(view: object) -> None:
    """Rows as tall as the text needs (Fusion's default leaves a lot of air in tables)."""
    header = view.verticalHeader()
    header.setMinimumSectionSize(1)
    header.setDefaultSectionSize(view.fontMetrics().height() + 8)
