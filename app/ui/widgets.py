"""Small shared widgets: empty-state messages and a panel that shows either content or one."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStackedWidget,
    QWidget,
)


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
    """A dismissible one-line notice across the top of the window (first run, fio missing); the whole
    text is behind Details… (and in the tooltip), so the notice never makes the window taller."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("banner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("#banner { background: palette(alternate-base); border: 1px solid palette(mid); }")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 2, 6, 2)
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        lay.addWidget(self.label, 1)
        self.details = ""
        self.details_button = QPushButton("Details…")
        self.details_button.clicked.connect(self.show_details)
        lay.addWidget(self.details_button)
        self.close_button = QPushButton("Dismiss")
        self.close_button.clicked.connect(self.hide)
        lay.addWidget(self.close_button)
        self.hide()

    def show_text(self, line: str, details: str = "", warning: bool = False) -> None:
        self.label.setText(line)
        self.details = details
        self.label.setToolTip(details or line)
        self.details_button.setVisible(bool(details))
        self.label.setStyleSheet("color: #d32f2f;" if warning else "")
        self.show()

    def show_details(self) -> None:
        QMessageBox.information(self, "Fiometer and fio", self.details)


def scrolling(page: QWidget) -> QScrollArea:
    """``page`` in a frameless scroll area: on a small screen it scrolls instead of making the window taller."""
    area = QScrollArea()
    area.setObjectName(f"{page.objectName() or type(page).__name__}Scroll")
    area.setWidget(page)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setSizeAdjustPolicy(QScrollArea.SizeAdjustPolicy.AdjustIgnored)
    area.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab goes to the fields inside, not to the frame
    return area


def tab_leaves_tables(root: QWidget) -> None:
    """Tab moves on from every table and list under ``root`` (arrow keys move inside them), so the
    keyboard reaches the buttons below a table instead of cycling through its cells."""
    for view in root.findChildren(QAbstractItemView):
        view.setTabKeyNavigation(False)


def compact_rows(view: object) -> None:
    """Rows as tall as the text needs (Fusion's default leaves a lot of air in tables)."""
    header = view.verticalHeader()
    header.setMinimumSectionSize(1)
    header.setDefaultSectionSize(view.fontMetrics().height() + 8)
