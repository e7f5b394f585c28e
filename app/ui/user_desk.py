"""What panels below the window need from it to talk to the user: the window (MainWindow) is one."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QStatusBar


class UserDesk(Protocol):
    """Problems, questions, messages and the status line; the settings where choices are remembered.
    Looked up at the time of use (tests replace ``ask`` and ``show_problem`` on the window)."""

    settings: QSettings | None
    persist: bool  # remember choices in ``settings``

    def ask(self, title: str, text: str, action: str = "Yes") -> bool: ...

    def show_problem(self, title: str, text: str) -> None: ...

    def add_message(self, text: str, level: str = "info") -> None: ...

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 (QMainWindow's name)
