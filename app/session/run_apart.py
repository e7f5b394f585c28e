"""A run in a process of its own, for the window: the runner, the store and Iometer's files run there
(:mod:`app.session.run_apart_child`), and their listener calls come back here.

Why: at 64 remote managers the runner's and the store's threads used three times the GUI thread's CPU in the
window's process (4.6 s against 1.3 s in a 20-s run), holding the GIL and, under Linux's autogroup scheduling,
sharing the window's CPU group: the GUI thread then waited for a CPU. The child runs in a session of its own
(its own group) and the window only unpickles ready batches (``RunRequest.prepare_samples`` computes their chart
rows there). On Windows the child is a normal process without a window.
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO, cast

from app.engine.run.runner import RunListener
from app.engine.transports.remote_host import child_command, log_file
from app.engine.transports.remote_host_child import LOG_FILE_ENV, read_message, write_message
from app.engine.transports.transport import Message
from app.session.run_session import RunEnd, RunRequest

log = logging.getLogger(__name__)
EXITED_GRACE_S = 3.0  # after the child has exited, for its last messages to be read
LISTENER_CALLS = frozenset(
    {"run_started", "step_started", "samples", "message", "manager_finished", "step_finished", "run_finished"}
)


class RunApart:
    """Starts the child with ``request``; its listener calls go to ``display`` (on this object's reader thread),
    and ``on_end(RunEnd)`` is called once, last, when the child has ended (however it ended)."""

    def __init__(self, request: RunRequest, display: RunListener, on_end: Callable[[RunEnd], None]) -> None:
        self.display, self._on_end = display, on_end
        argv, kwargs = child_command(
            platform.system(),
            bool(getattr(sys, "frozen", False)),
            sys.executable,
            module="app.session.run_apart_child",
            flag="--run-apart",
            below_normal=False,
        )
        if path := log_file():
            kwargs["env"] = {**kwargs.get("env", os.environ), LOG_FILE_ENV: path}
        if os.name == "posix":  # its own session: under autogroup scheduling, its own CPU group
            kwargs["start_new_session"] = True
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, **kwargs)
        log.info("run started in process %d: %s", self._proc.pid, " ".join(argv))
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._commands = cast(BinaryIO, self._proc.stdin)
        self._replies = cast(BinaryIO, self._proc.stdout)
        self._lock = threading.Lock()
        # the request (the plan, the managers' endpoints) outgrows the pipe's buffer with many managers, and the
        # child reads it only once Python has started there (0.34 s held the window at 128 managers): written
        # from a thread, holding the lock, so that a Stop pressed meanwhile follows it
        sent = threading.Event()

        def send_request() -> None:
            with self._lock:
                sent.set()
                self._write(("run", request))

        threading.Thread(target=send_request, daemon=True, name="fiometer-run-apart-request").start()
        sent.wait()
        self._end: RunEnd | None = None
        self._ended = threading.Event()  # its end was handed on
        self._hand_on = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True, name="fiometer-run-apart")
        self._reader.start()
        threading.Thread(target=self._watch, daemon=True, name="fiometer-run-apart-watch").start()

    @property
    def pid(self) -> int:
        return self._proc.pid

    def send(self, message: tuple[Any, ...]) -> None:
        with self._lock:
            self._write(message)

    def _write(self, message: tuple[Any, ...]) -> None:
        """(The send lock held.)"""
        with contextlib.suppress(OSError, ValueError):  # ended: its end is being read
            write_message(self._commands, message)

    def stop_step(self) -> None:
        self.send(("stop_step",))

    def stop(self) -> None:
        self.send(("stop",))

    def abort(self) -> None:
        self.send(("abort",))

    def wait(self, timeout: float) -> bool:
        """Block until the child has ended and its end was handed on; True if it did."""
        return self._ended.wait(timeout)

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self._proc.kill()

    def _read(self) -> None:
        try:
            while True:
                message = read_message(self._replies)
                if message[0] == "call" and message[1] in LISTENER_CALLS:
                    getattr(self.display, message[1])(*message[2])
                elif message[0] == "end":
                    self._end = message[1]
        except (EOFError, OSError, ValueError):
            pass
        except Exception as e:  # a message that does not unpickle: the child and this side disagree
            log.exception("the run's process sent what cannot be read")
            self.display.message(
                None, Message("", f"the run's process sent what cannot be read: {e}", "error")
            )
            self.kill()
        with contextlib.suppress(OSError):
            self._replies.close()
        self._finish()

    def _watch(self) -> None:
        """The child has exited: its end is handed on once what it sent is read, or after a grace if the pipe
        stays open (Windows Python under Wine: fio.exe started by the child inherited it and runs on)."""
        self._proc.wait()
        self._reader.join(EXITED_GRACE_S)
        if self._reader.is_alive():
            log.warning("the run's process %d has exited but its pipe stays open", self._proc.pid)
            self._finish()

    def _finish(self) -> None:
        with self._hand_on:
            if self._ended.is_set():
                return
            code = self._proc.wait()
            with contextlib.suppress(OSError):
                self._commands.close()
            end = self._end
            if end is None:
                self.display.message(
                    None,
                    Message(
                        "",
                        f"the run's own process ended unexpectedly (exit code {code}); what was stored so far "
                        "is kept",
                        "error",
                    ),
                )
                self.display.run_finished("failed")
                end = RunEnd("failed")
            self._on_end(end)
            self._ended.set()
