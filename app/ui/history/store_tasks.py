"""Store work off the GUI thread: the results database may be busy (a run recording, another Fiometer
writing: a write waits up to 15 s for the lock), and a report may take seconds to write.

Tasks run one at a time, in the order given, on a background thread that exists while there is work.
Each task opens its own connection (SQLite connections belong to the thread that opened them; opening
takes about a millisecond). The result, or the error in plain words, arrives on the GUI thread.

The thread is a QThread, not a Python thread: a report's PDF is painted there (QPdfWriter, QPainter and
QTextDocument may be used outside the GUI thread once the QGuiApplication exists), and Qt objects made
in a thread without an event dispatcher warn when they are destroyed.

Lifetimes: running threads are kept in ``_RUNNING`` until they have finished (a QThread deleted while it
runs aborts the process), the worker holds a reference to its StoreTasks, and a callback whose
``owner`` widget was deleted meanwhile is skipped.
"""

from __future__ import annotations

import threading
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal

from app.store import Store, StoreError, open_store
from app.ui.gui_collector import collect_on_gui_thread

_RUNNING: set[QThread] = set()


class TaskProblem(Exception):
    """Raised by a task for a problem whose text is for the user (shown as it is)."""


def wait_for_all(timeout_ms: int = 30000) -> bool:
    """Block until every store task thread has ended (at exit: a report being written is finished)."""
    return all(t.wait(timeout_ms) for t in list(_RUNNING))


_exit_hooked: list[QCoreApplication] = []


def _wait_at_exit() -> None:
    app = QCoreApplication.instance()
    if app is not None and app not in _exit_hooked:
        app.aboutToQuit.connect(wait_for_all)
        _exit_hooked.append(app)


class _Worker(QThread):
    def __init__(self, tasks: StoreTasks):
        super().__init__()
        self.tasks = tasks

    def run(self) -> None:
        self.tasks._work()


@dataclass
class _Task:
    doing: str
    work: Callable[[Store], Any]
    done: Callable[[Any], None] | None
    failed: Callable[[str], None] | None
    owner: QObject | None
    result: Any = None
    error: str | None = None


class StoreTasks(QObject):
    """Runs ``work(store)`` on a background thread; ``done(result)`` or ``failed(message)`` on the GUI thread."""

    _finished = Signal(object)  # _Task
    idle = Signal()  # nothing queued or running any more (tests wait for it)

    def __init__(self, db_path: str | Path | None = None):
        super().__init__()
        collect_on_gui_thread(QCoreApplication.instance())  # never in a task's thread (gui_collector)
        self.db_path = db_path
        self._lock = threading.Lock()
        self._queue: deque[_Task] = deque()
        self._working = False
        self._undelivered = 0
        self._finished.connect(self._deliver)

    @property
    def busy(self) -> bool:
        return self._undelivered > 0

    def submit(
        self,
        doing: str,
        work: Callable[[Store], Any],
        done: Callable[[Any], None] | None = None,
        failed: Callable[[str], None] | None = None,
        owner: QObject | None = None,
    ) -> None:
        """``doing`` names the work in messages ("deleting run 3")."""
        task = _Task(doing, work, done, failed, owner)
        self._undelivered += 1
        with self._lock:
            self._queue.append(task)
            if self._working:
                return
            self._working = True
        worker = _Worker(self)
        _RUNNING.add(worker)
        worker.finished.connect(self._reap)
        _wait_at_exit()
        worker.start()

    def _reap(self) -> None:
        for t in [t for t in _RUNNING if t.isFinished()]:
            _RUNNING.discard(t)

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._working = False
                    return
                task = self._queue.popleft()
            self._run(task)
            self._finished.emit(task)

    def _run(self, task: _Task) -> None:
        try:
            with open_store(self.db_path) as store:
                task.result = task.work(store)
        except (StoreError, TaskProblem) as e:
            task.error = str(e)
        except OSError as e:
            task.error = f"{e.filename or ''}{': ' if e.filename else ''}{e.strerror or e}"
        except Exception as e:  # a bug: say so in the window, never crash it
            traceback.print_exc()
            task.error = f"Unexpected error while {task.doing}: {type(e).__name__}: {e}"

    def _deliver(self, task: _Task) -> None:
        self._undelivered -= 1
        try:
            if task.owner is not None and not shiboken6.isValid(task.owner):
                return
            if task.error is None:
                if task.done is not None:
                    task.done(task.result)
            elif task.failed is not None:
                task.failed(task.error)
        finally:
            if not self._undelivered:
                self.idle.emit()
