"""Qt's own messages (its warnings about fonts, platform plugins, painting...) into Fiometer's log file, under
the ``app.ui.qt`` logger, at the level Qt gave them; each still goes where it went before (the handler that was
installed, or stderr as Qt's default does), so nothing the user or a test saw is lost."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler

log = logging.getLogger("app.ui.qt")

LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}

Handler = Callable[[QtMsgType, QMessageLogContext, str], Any]
_installed: Handler | None = None


def to_log(kind: QtMsgType, context: QMessageLogContext | None, text: str) -> None:
    """One Qt message into the log: its level, its category where Qt named one, its text."""
    category = getattr(context, "category", None) if context is not None else None
    where = f"[{category}] " if category and category != "default" else ""
    log.log(LEVELS.get(kind, logging.WARNING), "%s%s", where, text)


def install() -> None:
    """Route Qt's messages to the log (once per process), then on to the previous handler."""
    global _installed
    if _installed is not None:
        return
    previous: Handler | None = None

    def handler(kind: QtMsgType, context: QMessageLogContext, text: str) -> None:
        to_log(kind, context, text)
        if previous is not None:
            previous(kind, context, text)
        else:  # Qt's default: the text on stderr
            print(text, file=sys.stderr)

    _installed = handler
    previous = qInstallMessageHandler(handler)
