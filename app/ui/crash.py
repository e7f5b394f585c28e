"""The window's last resort: an unexpected exception is logged with its traceback and the user sees a
short message naming the log file (the Windows GUI has no console to print a traceback to)."""

from __future__ import annotations

import sys
import threading
from types import TracebackType

from PySide6.QtWidgets import QApplication, QMessageBox

from app.diagnostics import report_unexpected

TITLE = "Fiometer: unexpected error"


def _show(line: str) -> None:
    print(f"fiometer: {line}", file=sys.stderr)
    if (
        isinstance(QApplication.instance(), QApplication)
        and threading.current_thread() is threading.main_thread()
    ):
        QMessageBox.critical(None, TITLE, line[:1].upper() + line[1:])


def install(show_dialog: bool = True) -> None:
    """Route unexpected exceptions (the GUI thread's and other threads') to the log file and a message."""

    def hook(et: type[BaseException], e: BaseException, tb: TracebackType | None) -> None:
        if issubclass(et, KeyboardInterrupt):
            sys.__excepthook__(et, e, tb)
            return
        e.__traceback__ = tb
        line = report_unexpected(e, "the window")
        if show_dialog:
            _show(line)
        else:
            print(f"fiometer: {line}", file=sys.stderr)

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            args.exc_value.__traceback__ = args.exc_traceback
            where = f"thread {args.thread.name}" if args.thread else "a thread"
            print(f"fiometer: {report_unexpected(args.exc_value, where)}", file=sys.stderr)

    sys.excepthook = hook
    threading.excepthook = thread_hook
