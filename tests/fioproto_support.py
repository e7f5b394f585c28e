"""Shared helpers for the fio protocol tests: locate recordings, compare with fio's JSON, fake servers."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.engine.transports.fioproto.commands import Op
from app.engine.transports.fioproto.frames import FrameReader, Packet, encode
from tests.fioproto_recording import SERVER_TO_CLIENT, TimedPacket, read_packets
from tests.helpers import shared_dir

CAPTURES = ("fio-3.33-randread-psync", "fio-3.33-job2", "fio-3.33-cmdprio", "fio-3.41-job3", "fio-3.42-job3")


def find_captures() -> Path:
    """tests/fixtures/fio-captures: recorded fio client/server traffic (see its README.md)."""
    return shared_dir() / "fio-captures"


def load_fio_json(text: str) -> Any:
    """fio's JSON with every float kept as the exact text fio printed (('F', '123.456789'))."""
    return json.loads(text, parse_float=lambda s: ("F", s))


def as_printed(obj: Any) -> Any:
    """Our decoded values as fio would print them (floats with %f, like fio's json.c)."""
    if isinstance(obj, float):
        return ("F", f"{obj:f}")
    if isinstance(obj, dict):
        return {k: as_printed(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [as_printed(v) for v in obj]
    return obj


def without_percentile_lists(obj: Any) -> Any:
    """fio's output without its "percentile" lists: what a live (not final) report of ours holds."""
    if isinstance(obj, dict):
        return {k: without_percentile_lists(v) for k, v in obj.items() if k != "percentile"}
    if isinstance(obj, list):
        return [without_percentile_lists(v) for v in obj]
    return obj


def as_reported_live(stock_jobs: list[Any], final_jobs: int) -> list[Any]:
    """The stock client's jobs as our snapshots hold them: fio's percentile lists only in the final
    report (its last ``final_jobs`` jobs); live reports carry the bins they are computed from."""
    live = len(stock_jobs) - final_jobs
    assert any("percentile" in all_keys(j) for j in stock_jobs[live:])  # the final one keeps them
    return [without_percentile_lists(j) for j in stock_jobs[:live]] + stock_jobs[live:]


def all_keys(obj: Any) -> set[str]:
    """Every key anywhere in ``obj``."""
    if isinstance(obj, dict):
        return set(obj).union(*(all_keys(v) for v in obj.values()))
    if isinstance(obj, list):
        return set().union(*(all_keys(v) for v in obj))
    return set()


def compare(ours: Any, stock: Any, path: str = "") -> tuple[list[str], int]:
    """Mismatches (key order included) and the number of leaf values compared."""
    problems: list[str] = []
    leaves = 0

    def walk(a: Any, b: Any, p: str) -> None:
        nonlocal leaves
        if isinstance(a, dict) and isinstance(b, dict):
            if list(a) != list(b):
                problems.append(f"{p}: keys {list(a)} != {list(b)}")
            for k in a:
                if k in b:
                    walk(a[k], b[k], f"{p}/{k}")
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                problems.append(f"{p}: {len(a)} items != {len(b)}")
            for i, (x, y) in enumerate(zip(a, b, strict=False)):
                walk(x, y, f"{p}[{i}]")
        else:
            leaves += 1
            if a != b or type(a) is not type(b):
                problems.append(f"{p}: {a!r} != {b!r}")

    walk(ours, stock, path)
    return problems, leaves


def server_packets(name: str) -> list[TimedPacket]:
    return [p for p in read_packets(find_captures() / f"{name}.cap") if p.direction == SERVER_TO_CLIENT]


class FakeConn:
    """The server side of one accepted connection, for scripted fake fio servers."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = FrameReader()
        self._queue: list[Packet] = []
        self.received: list[Packet] = []

    def read(self, timeout: float = 5.0) -> Packet | None:
        while not self._queue:
            try:  # the test may close this socket from its own thread at any moment (teardown)
                self.sock.settimeout(timeout)
                data = self.sock.recv(65536)
            except (TimeoutError, OSError):
                return None
            if not data:
                return None
            self._queue.extend(self.reader.feed(data))
        pkt = self._queue.pop(0)
        self.received.append(pkt)
        return pkt

    def read_until(self, opcode: int, timeout: float = 5.0) -> Packet | None:
        while True:
            pkt = self.read(timeout)
            if pkt is None or pkt.opcode == opcode:
                return pkt

    def send(self, version: int, opcode: int, payload: bytes = b"", tag: int = 0) -> None:
        with contextlib.suppress(OSError):
            self.sock.sendall(encode(version, opcode, payload, tag=tag))


def _hang_up(sock: socket.socket, linger: float = 2.0) -> None:
    """End a connection gracefully: FIN after the last packet, then read what the client still sends (its ETA
    polls) until it closes. Closing with unread bytes sends RST instead, and a client that has not yet read
    the final packets loses them (seen under Wine on a loaded machine: "lost connection ... mid-step")."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(linger)
        while sock.recv(65536):
            pass
    with contextlib.suppress(OSError):
        sock.close()


class FakeServer:
    """A TCP listener on 127.0.0.1 that runs ``handler(conn)`` in a thread for every connection."""

    def __init__(self, handler: Callable[[FakeConn], None] | None) -> None:
        self.handler = handler
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections: list[FakeConn] = []
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._accept_thread = threading.Thread(target=self._accept, daemon=True)
        self._accept_thread.start()

    def _accept(self) -> None:
        self.listener.settimeout(0.1)
        while not self._stop.is_set():
            try:
                sock, _ = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            conn = FakeConn(sock)
            self.connections.append(conn)
            if self.handler is None:
                continue  # a listener that accepts and never answers
            t = threading.Thread(target=self._run, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _run(self, conn: FakeConn) -> None:
        try:
            self.handler(conn)  # type: ignore[misc]
        finally:
            _hang_up(conn.sock)

    def close(self) -> None:
        self._stop.set()
        self._accept_thread.join(2)
        self.listener.close()
        for conn in self.connections:
            with contextlib.suppress(OSError):
                conn.sock.close()
        for t in self._threads:
            t.join(2)


def probe_reply_payload(fio_version: str = "fio-3.33", hostname: str = "fakehost") -> bytes:
    import struct

    return struct.pack("<64sB32sBBBIQ", hostname.encode(), 0, fio_version.encode(), 1, 1, 8, 4, 0)


def accept_job(conn: FakeConn, version: int, starts: list[bytes] | None = None) -> bool:
    """Answer JOBLINE and JOB with START like fio does; True once RUN arrives."""
    import struct

    replies = starts or [struct.pack("<II", 0, 0), struct.pack("<II", 1, 1)]
    for opcode, reply in zip((Op.JOBLINE, Op.JOB), replies, strict=True):
        if conn.read_until(opcode) is None:
            return False
        conn.send(version, Op.START, reply)
    return conn.read_until(Op.RUN) is not None


def version_gate(conn: FakeConn, version: int) -> Packet | None:
    """Behave like fio on the first frame: a wrong version gets TEXT + hang-up. Returns the PROBE."""
    from app.engine.transports.fioproto.commands import LOG_ERR, text_pdu

    pkt = conn.read()
    if pkt is None:
        return None
    if pkt.version != version:
        conn.send(version, Op.TEXT, text_pdu(f"fio: bad server cmd version {pkt.version}\n", LOG_ERR))
        return None
    return pkt
