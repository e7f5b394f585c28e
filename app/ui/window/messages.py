"""The Messages dock: errors, warnings and notes about the plan and the runs, newest last."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QListWidget, QListWidgetItem, QMainWindow

MESSAGES_HEIGHT = 70  # about three lines: on a laptop screen the charts keep their room
PREFIX = {"error": "Error: ", "warning": "Warning: ", "note": "fio cannot reproduce exactly — "}


def message_text(text: str, level: str) -> str:
    """The line shown for a message: its level's prefix, once (texts that already carry it keep theirs)."""
    prefix = PREFIX.get(level, "")
    return text if not prefix or text.lower().startswith(prefix.lower()) else prefix + text


class MessageList(QListWidget):
    """The Messages list, about three lines high when the dock first opens (the user may drag it taller)."""

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(super().sizeHint().width(), MESSAGES_HEIGHT)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """Two lines (a scroll area's own minimum is its scroll bar's, taller than three lines here)."""
        return QSize(
            super().minimumSizeHint().width(), 2 * self.fontMetrics().height() + 2 * self.frameWidth()
        )


class MessagesPanel:
    """The list in a dock at the bottom of ``window``, hidden until there is something to read."""

    def __init__(self, window: QMainWindow):
        self.messages = MessageList()
        self.messages.setWordWrap(True)
        # a run with many managers adds hundreds of lines: lay them out in batches, not all at every line
        self.messages.setLayoutMode(QListWidget.LayoutMode.Batched)
        self.messages.setBatchSize(20)
        bar = self.messages.verticalScrollBar()  # (so the newest line is shown once its batch is laid out)
        bar.rangeChanged.connect(lambda _low, high: bar.setValue(high))
        self.dock = QDockWidget("Messages", window)
        self.dock.setObjectName("messagesDock")
        self.dock.setWidget(self.messages)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
        window.resizeDocks([self.dock], [MESSAGES_HEIGHT], Qt.Orientation.Vertical)
        self.dock.hide()
        self._scroll_due = False

    def add(self, text: str, level: str = "info") -> None:
        item = QListWidgetItem(message_text(text, level))
        if level == "error":
            item.setForeground(Qt.GlobalColor.red)
        self.messages.addItem(item)
        if not self._scroll_due:  # once for lines added together (a Start with 128 managers adds 512 notes)
            self._scroll_due = True
            QTimer.singleShot(0, self.messages, self._scroll)  # (dropped with the list)

    def _scroll(self) -> None:
        self._scroll_due = False
        self.messages.scrollToBottom()
