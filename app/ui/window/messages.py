"""The Messages dock, and the two ways the window talks to its user: problems and questions."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QDockWidget, QListWidget, QListWidgetItem, QMainWindow, QMessageBox

from app.ui.confirm import confirm

MESSAGES_HEIGHT = 80  # about four lines: on a laptop screen the charts keep their room
PREFIX = {"error": "Error: ", "warning": "Warning: ", "note": "fio cannot reproduce exactly — "}


def message_text(text: str, level: str) -> str:
    """The line shown for a message: its level's prefix, once (texts that already carry it keep theirs)."""
    prefix = PREFIX.get(level, "")
    return text if not prefix or text.lower().startswith(prefix.lower()) else prefix + text


class MessageList(QListWidget):
    """The Messages list, about four lines high when the dock first opens (the user may drag it taller)."""

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(super().sizeHint().width(), MESSAGES_HEIGHT)


class MessagesMixin(QMainWindow):
    messages: QListWidget
    messages_dock: QDockWidget

    def _make_messages(self) -> None:
        self.messages = MessageList()
        self.messages.setWordWrap(True)
        # a run with many managers adds hundreds of lines: lay them out in batches, not all at every line
        self.messages.setLayoutMode(QListWidget.LayoutMode.Batched)
        self.messages.setBatchSize(20)
        bar = self.messages.verticalScrollBar()  # (so the newest line is shown once its batch is laid out)
        bar.rangeChanged.connect(lambda _low, high: bar.setValue(high))
        self.messages_dock = QDockWidget("Messages", self)
        self.messages_dock.setObjectName("messagesDock")
        self.messages_dock.setWidget(self.messages)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.messages_dock)
        self.resizeDocks([self.messages_dock], [MESSAGES_HEIGHT], Qt.Orientation.Vertical)
        self.messages_dock.hide()

    def add_message(self, text: str, level: str = "info") -> None:
        item = QListWidgetItem(message_text(text, level))
        if level == "error":
            item.setForeground(Qt.GlobalColor.red)
        self.messages.addItem(item)
        self.messages.scrollToBottom()

    def show_problem(self, title: str, text: str) -> None:
        """Tell the user something went wrong (a modal box; tests replace this method)."""
        self.add_message(f"{title}: {text}", "error")
        QMessageBox.warning(self, title, text)

    def ask(self, title: str, text: str, action: str = "Yes") -> bool:
        """A question before something destructive: the ``action`` button does it, Cancel is the default
        (a modal box; tests replace this method)."""
        return confirm(self, title, text, action)
