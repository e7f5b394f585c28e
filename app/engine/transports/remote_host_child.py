"""The child side of :mod:`app.engine.transports.remote_host`: a process that runs remote managers' connections.

Each manager's :class:`~app.engine.transports.fioproto.RemoteFio` runs here unchanged, on a thread of its own: it
connects, loads the job, and on ``go`` streams its events. What the parent receives is ready events, so
reading sockets and decoding fio's reports never hold the window's GIL. Messages travel both ways over
the child's stdin and stdout as pickles, each behind its length (4 bytes, little-endian).

Messages to the parent: ``("loaded", key, loaded_at)``, ``("refused", key, text)``,
``("events", [(key, event, status), ...])`` and, every ``STATUS_S``, ``("status", {key: status})`` (on a pipe
of its own where the parent gave one, ``$FIOMETER_STATUS_FD``: liveness does not wait behind reports), where
a status is ``(bytes_received, last_heard, job_started_at, dropped_note, report_at, fio_clock_s, ended,
unread)``: the newest report's arrival at the socket and fio's own clock in it, whether the server's part is
over, and whether bytes wait unread on its socket while its reader is behind.

Fan-in: a manager's thread never writes to the pipe itself. It hands each event to the process's outbox
(a lock-free queue put) and goes back to its socket; one writer thread sends whatever has gathered as one
message (BATCH_EVENTS at most). So a slow pipe (the parent busy) delays data, never the reading of sockets or the status, and
64 reader threads do not queue on one lock (they did: ~40 % of the child's samples waited there). Commands from the parent:
``("start", key, host, port, name, job_text, status_interval, shown_as)``, ``("go"|"stop"|"abort", key)`` and
``("end",)``. The end of the pipe (the parent gone) aborts every manager: each server is told to end
its job, as when Abort is pressed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import signal
import struct
import sys
import threading
from typing import Any, BinaryIO

from app.engine.transports.fioproto import RemoteFio
from app.engine.transports.transport import Finished, TransportError

LOG_FILE_ENV = "FIOMETER_CHILD_LOG"  # the parent's log file, which the child appends to
STATUS_S = 0.25  # how often the byte counters reach the parent (the step watch's progress rule reads them)
STATUS_FD_ENV = (
    "FIOMETER_STATUS_FD"  # POSIX: the pipe status goes on, apart from the events' (not queued behind them)
)
# bytes_received, last_heard, job_started_at, dropped_note, report_at, fio_clock_s, ended, unread (see the module's text)
Status = tuple[int, float | None, float | None, str | None, float | None, float | None, bool, bool]
# events per message at most: the parent unpickles a message in one call holding the GIL (64 reports
# took 16-32 ms), so a backlog goes in slices the window's event loop can run between
BATCH_EVENTS = 16
NICE = 10  # below the window's process (Windows: the child starts at BELOW_NORMAL priority instead)
_LENGTH = struct.Struct("<I")


def write_message(stream: BinaryIO, message: tuple[Any, ...]) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def read_message(stream: BinaryIO) -> tuple[Any, ...]:
    """The next message; EOFError when the other side has closed the pipe (or died)."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        raise EOFError
    (size,) = _LENGTH.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    message: tuple[Any, ...] = pickle.loads(data)
    return message


class _Manager:
    """One RemoteFio and the thread that runs it: start, wait for go/stop/abort, stream events."""

    def __init__(self, key: str, remote: RemoteFio, send: Any, job_text: str, interval: float) -> None:
        self.key, self.remote, self._send = key, remote, send
        self._released = threading.Event()
        self._go = False
        self.done = False
        self.thread = threading.Thread(
            target=self._run, args=(job_text, interval), daemon=True, name=f"fiometer-host-{remote.name}"
        )
        self.thread.start()

    def status(self) -> Status:
        r = self.remote
        return (
            r.bytes_received,
            r.last_heard,
            r.job_started_at,
            r.dropped_note,
            r.report_at,
            r.fio_clock_s,
            r.ended,
            r.unread,
        )

    def command(self, kind: str) -> None:
        if kind == "go":
            self._go = True
        elif kind == "stop":
            self.remote.stop()
        else:
            self.remote.abort()
        self._released.set()

    def _run(self, job_text: str, interval: float) -> None:
        try:
            self.remote.start(job_text, status_interval=interval)
        except TransportError as e:
            self.done = True
            self._send(("refused", self.key, str(e)))
            return
        except Exception as e:  # a bug here must reach the user, not hang the step
            self.done = True
            self._send(("refused", self.key, f"internal error starting manager {self.remote.name!r}: {e}"))
            return
        self._send(("loaded", self.key, self.remote.loaded_at))
        self._released.wait()
        if self._go:
            self.remote.go()
        try:
            for ev in self.remote.events():
                end = isinstance(ev, Finished)
                self.done = self.done or end
                self._send(("event", self.key, ev, self.status()))  # (the outbox: never blocks)
                if end:
                    return
        except Exception as e:
            self.done = True
            self._send(
                (
                    "event",
                    self.key,
                    Finished(
                        self.remote.name, False, f"internal error reading manager {self.remote.name!r}: {e}"
                    ),
                    self.status(),
                )
            )


class _Child:
    """The child's state, threaded through its three threads: the managers by key, the outbox that the one
    writer drains onto the events' pipe, and where the status goes."""

    def __init__(self, out: BinaryIO, status_out: BinaryIO | None) -> None:
        self.out, self.status_out = out, status_out
        self.managers: dict[str, _Manager] = {}
        self.quit = threading.Event()
        self.outbox: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._status_lock = threading.Lock()

    def send(self, message: tuple[Any, ...]) -> None:
        self.outbox.put(message)

    def write_all(self) -> None:
        """The only writer of the events' pipe: what gathered while it wrote goes as one message."""
        while (first := self.outbox.get()) is not None:
            batch, end = self._gathered(first)
            try:
                self._write_batch(batch)
            except (OSError, ValueError):
                self.quit.set()  # the parent is gone
            if end:
                return

    def _gathered(self, first: tuple[Any, ...]) -> tuple[list[tuple[Any, ...]], bool]:
        """``first`` and what else waits in the outbox (BATCH_EVENTS at most); whether the end (None) was among it."""
        batch, end = [first], False
        while not end and len(batch) < BATCH_EVENTS:
            try:
                nxt = self.outbox.get_nowait()
            except queue.Empty:
                break
            end = nxt is None
            if nxt is not None:
                batch.append(nxt)
        return batch, end

    def _write_batch(self, batch: list[tuple[Any, ...]]) -> None:
        """Each message but the events as itself, then all the events as one message."""
        events = [m[1:] for m in batch if m[0] == "event"]
        for m in batch:
            if m[0] != "event":
                write_message(self.out, m)
        if events:
            write_message(self.out, ("events", events))

    def send_status(self, message: tuple[Any, ...]) -> None:
        if self.status_out is None:
            self.send(message)
            return
        with (
            self._status_lock,
            contextlib.suppress(OSError, ValueError),
        ):  # (the events' pipe tells if the parent is gone)
            write_message(self.status_out, message)

    def report(self) -> None:
        while not self.quit.wait(STATUS_S):
            live = {k: m.status() for k, m in list(self.managers.items()) if not m.done}
            if live:
                self.send_status(("status", live))

    def obey(self, msg: tuple[Any, ...]) -> bool:
        """Carry out one command from the parent; False once it says end."""
        managers, kind = self.managers, str(msg[0])
        if kind == "start":
            _, key, host, port, name, job_text, interval, shown_as = msg
            managers[key] = _Manager(
                key, RemoteFio(host, port, name=name, shown_as=shown_as), self.send, job_text, interval
            )
        elif kind in ("go", "stop", "abort") and msg[1] in managers:
            managers[msg[1]].command(kind)
        return kind != "end"

    def close(self, writer: threading.Thread) -> None:
        """Abort what still runs, wait for the managers, then let the writer send what is left."""
        self.quit.set()
        for m in self.managers.values():
            if not m.done:
                m.command("abort")  # each server is told to end its job (QUIT), as Abort does
        for m in self.managers.values():
            m.thread.join(timeout=5)
        self.outbox.put(None)  # the writer sends what is left, then ends
        writer.join(timeout=5)


def serve(commands: BinaryIO, out: BinaryIO, status_out: BinaryIO | None = None) -> None:
    """The child's main: obey the parent's commands until it says end or goes away. ``status_out``: where
    the periodic status goes (default: with the events)."""
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(NICE)
    child = _Child(out, status_out)
    writer = threading.Thread(target=child.write_all, daemon=True, name="fiometer-host-writer")
    writer.start()
    threading.Thread(target=child.report, daemon=True, name="fiometer-host-status").start()
    try:
        while True:
            try:
                msg = read_message(commands)
            except (EOFError, OSError):
                break
            if not child.obey(msg):
                break
    finally:
        child.close(writer)


def main() -> int:
    """Messages go out on the original stdout; anything else printed goes to stderr. Ctrl-C in a terminal
    reaches the whole process group: the parent decides what it means (Stop, then Abort), not this child."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    log_to(os.environ.get(LOG_FILE_ENV))
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    fd = os.environ.pop(STATUS_FD_ENV, "")
    status_out = os.fdopen(int(fd), "wb") if fd.isdigit() else None
    serve(sys.stdin.buffer, out, status_out)
    return 0


def log_to(path: str | None) -> None:
    """Append this process's ``app.*`` log lines to the parent's log file (as app.diagnostics writes it)."""
    if not path:
        return
    try:
        handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    except OSError:
        return
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    logging.raiseExceptions = False
    logger = logging.getLogger("app")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


if __name__ == "__main__":
    sys.exit(main())
