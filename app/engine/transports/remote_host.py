"""Remote managers decoded in another process, so that the window's process receives ready events.

With many remote managers, reading their sockets and decoding fio's reports (about 0.5 ms of Python per
job and report) ran on one thread per manager in the window's process. Right after each wave of reports
those threads held the GIL in turn and the window's event loop waited (p99 up to 95 ms at 32 hosts).
:class:`RemoteHost` starts one child process (:mod:`app.engine.transports.remote_host_child`, at a lower CPU
priority) that runs every remote manager's :class:`~app.engine.transports.fioproto.RemoteFio` unchanged;
:class:`HostedRemote` is the transport the runner sees, with the same interface and properties.
The child is a fresh interpreter that imports only the protocol client: a fork of a process with Qt's
threads could inherit held locks, and multiprocessing's spawn would import the window's main module again.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import platform
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, cast

from app.engine.transports.remote_host_child import (
    LOG_FILE_ENV,
    STATUS_FD_ENV,
    Status,
    read_message,
    write_message,
)
from app.engine.transports.transport import Event, Finished, FioSide, TransportError

log = logging.getLogger(__name__)
START_WAIT_S = (
    40.0  # RemoteFio.start takes at most ~15 s (connect + handshake + load); the child starts first
)
BELOW_NORMAL_PRIORITY_CLASS = 0x00004000
CREATE_NO_WINDOW = 0x08000000


def child_command(
    os_name: str,
    frozen: bool,
    executable: str,
    module: str = "app.engine.transports.remote_host_child",
    flag: str = "--remote-host",
    below_normal: bool = True,
) -> tuple[list[str], dict[str, Any]]:
    """The child's command line and Popen options. A packaged app runs itself with ``flag``
    (on Windows its console twin, which can use pipes, without a window); otherwise Python runs
    ``module``, finding this package wherever the parent found it. ``below_normal``: Windows sets the lower
    priority at creation, elsewhere the child lowers its own (nice)."""
    kwargs: dict[str, Any] = {}
    if not frozen:
        argv = [executable, "-m", module]
        root = str(Path(__file__).resolve().parents[3])
        kwargs["env"] = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
        }
    elif os_name == "Windows":
        argv = [str(Path(executable).with_name("fiometer-cli.exe")), flag]
    else:
        argv = [executable, flag]
    if os_name == "Windows":
        kwargs["creationflags"] = (BELOW_NORMAL_PRIORITY_CLASS if below_normal else 0) | CREATE_NO_WINDOW
    return argv, kwargs


def log_file() -> str | None:
    """The file this process logs to (app.diagnostics' handler), for the child to append to."""
    return next(
        (h.baseFilename for h in logging.getLogger("app").handlers if isinstance(h, logging.FileHandler)),
        None,
    )


class HostedRemote:
    """A :class:`~app.engine.transports.transport.Transport` for one ``fio --server`` whose connection runs in the
    :class:`RemoteHost`'s child; it behaves as :class:`~app.engine.transports.fioproto.RemoteFio` does."""

    def __init__(
        self, host: RemoteHost, key: str, address: tuple[str, int], name: str, shown_as: str | None = None
    ) -> None:
        self._host, self._key, self._address, self.name = host, key, address, name
        self._shown_as = shown_as
        self._answer = threading.Event()
        self._refusal: str | None = None
        self._events: queue.Queue[Event] = queue.Queue()
        self._put: Callable[[tuple[str, Event]], None] | None = None  # push_to's: events go there instead
        self._put_lock = threading.Lock()
        self.loaded_at: float | None = None
        self._status: Status = (0, None, None, None, None, None, False, False)
        self._ended = False  # its Finished (or refusal) has been handed on

    @property
    def bytes_received(self) -> int:
        return self._status[0]

    @property
    def last_heard(self) -> float | None:
        return self._status[1]

    @property
    def job_started_at(self) -> float | None:
        return self._status[2]

    @property
    def dropped_note(self) -> str | None:
        return self._status[3]

    @property
    def fio_side(self) -> FioSide:
        """Where the server is, as the child last saw it (not queued behind events): when its newest
        report arrived at the socket (time.monotonic(), the same clock in both processes), fio's own
        clock in it (s), whether the server's part is over, and whether its reader is behind (bytes
        waiting unread on the socket)."""
        return self._status[4], self._status[5], self._status[6], self._status[7]

    def start(self, job_text: str, *, status_interval: float = 1.0) -> None:
        self._host.send(
            ("start", self._key, *self._address, self.name, job_text, status_interval, self._shown_as)
        )
        if not self._answer.wait(START_WAIT_S):
            raise TransportError(
                f"manager {self.name!r}: no answer from the process that connects to it "
                f"within {START_WAIT_S:g} s; start the run again"
            )
        if self._refusal is not None:
            raise TransportError(self._refusal)

    def go(self) -> None:
        self._host.send(("go", self._key))

    def events(self) -> Iterator[Event]:
        while True:
            ev = self._events.get()
            yield ev
            if isinstance(ev, Finished):
                return

    def push_to(self, put: Callable[[tuple[str, Event]], None]) -> None:
        """Hand each event, with this manager's name, to ``put`` on the host's reader thread (no thread
        of the runner's per manager); what came before goes first, in order."""
        with self._put_lock:
            while True:
                try:
                    put((self.name, self._events.get_nowait()))
                except queue.Empty:
                    break
            self._put = put

    def stop(self) -> None:
        self._host.send(("stop", self._key))

    def abort(self) -> None:
        self._host.send(("abort", self._key))

    # --- from the host's reader thread ---------------------------------------------------------
    def _loaded(self, at: float | None) -> None:
        self.loaded_at = at
        self._answer.set()

    def _refused(self, text: str) -> None:
        self._ended = True
        self._refusal = text
        self._answer.set()

    def _set_status(self, status: Status) -> None:
        """Status comes on two pipes (with events, and on its own): the counters only grow."""
        old = self._status

        def newest(i: int) -> Any:
            return max((t for t in (old[i], status[i]) if t is not None), default=None)

        self._status = (
            max(old[0], status[0]),
            newest(1),
            status[2] or old[2],
            status[3] or old[3],
            newest(4),
            newest(5),
            old[6] or status[6],
            status[7],
        )

    def _event(self, ev: Event, status: Status) -> None:
        self._set_status(status)
        self._ended = self._ended or isinstance(ev, Finished)
        with self._put_lock:
            if self._put is not None:
                self._put((self.name, ev))
            else:
                self._events.put(ev)

    def _lost(self, text: str) -> None:
        if not self._answer.is_set():
            self._refused(text)
        elif not self._ended:
            self._event(Finished(self.name, False, text), self._status)


class RemoteHost:
    """The child process and the thread that reads what it sends; one per run, closed at its end."""

    def __init__(self) -> None:
        argv, kwargs = child_command(platform.system(), bool(getattr(sys, "frozen", False)), sys.executable)
        if path := log_file():
            kwargs["env"] = {**kwargs.get("env", os.environ), LOG_FILE_ENV: path}
        status_r = status_w = None
        if os.name == "posix":  # liveness on a pipe of its own, not queued behind the reports' data
            # its own session: under Linux's autogroup scheduling the child is a group of its own, so its
            # decoding threads do not share the window's group (and CPU share) with the GUI thread; it
            # ignores Ctrl-C anyway, and ends when its pipe from this process closes
            kwargs["start_new_session"] = True
            status_r, status_w = os.pipe()
            kwargs["env"] = {**kwargs.get("env", os.environ), STATUS_FD_ENV: str(status_w)}
            kwargs["pass_fds"] = (status_w,)
        try:
            self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, **kwargs)
        finally:
            if status_w is not None:
                os.close(status_w)
        log.info("remote managers' reader started, pid %d: %s", self._proc.pid, " ".join(argv))
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._commands: BinaryIO = cast(BinaryIO, self._proc.stdin)  # Popen(bytes): binary pipes
        self._replies: BinaryIO = cast(BinaryIO, self._proc.stdout)
        self._status_in = os.fdopen(status_r, "rb") if status_r is not None else None
        self._lock = threading.Lock()
        self._keys = itertools.count(1)
        self._transports: dict[str, HostedRemote] = {}
        self._reader = threading.Thread(target=self._read, daemon=True, name="fiometer-remote-host-reader")
        self._reader.start()
        if self._status_in is not None:
            threading.Thread(
                target=self._read_status, daemon=True, name="fiometer-remote-host-status"
            ).start()

    def transport(self, address: tuple[str, int], name: str, shown_as: str | None = None) -> HostedRemote:
        key = str(next(self._keys))
        self._transports[key] = t = HostedRemote(self, key, address, name, shown_as)
        return t

    def send(self, message: tuple[Any, ...]) -> None:
        with (
            self._lock,
            contextlib.suppress(OSError, ValueError),
        ):  # a child gone: the reader tells each transport
            write_message(self._commands, message)

    def close(self) -> None:
        """End the child (any manager still running is aborted there) and wait for it."""
        self.send(("end",))
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=5)
        self._reader.join(timeout=5)
        with self._lock, contextlib.suppress(OSError):
            self._commands.close()

    def _read_status(self) -> None:
        assert self._status_in is not None
        with contextlib.suppress(EOFError, OSError, ValueError), self._status_in:
            while True:
                _kind, statuses = read_message(self._status_in)
                for key, status in statuses.items():
                    t = self._transports.get(key)
                    if t is not None:
                        t._set_status(status)

    def _read(self) -> None:
        try:
            while True:
                msg = read_message(self._replies)
                kind = msg[0]
                if kind == "status":
                    for key, status in msg[1].items():
                        self._transports[key]._set_status(status)
                elif kind == "events":
                    for key, ev, status in msg[1]:
                        self._transports[key]._event(ev, status)
                elif kind == "loaded":
                    self._transports[msg[1]]._loaded(msg[2])
                elif kind == "refused":
                    self._transports[msg[1]]._refused(msg[2])
        except (EOFError, OSError):
            pass
        self._replies.close()
        try:
            code = self._proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        log.info("remote managers' reader pid %d ended, exit code %s", self._proc.pid, code)
        for t in list(self._transports.values()):
            t._lost(
                f"manager {t.name!r}: the process that read it ended unexpectedly (exit code {code}); "
                "samples so far kept; start the run again"
            )
