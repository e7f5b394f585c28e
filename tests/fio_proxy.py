"""A loopback TCP proxy between Fiometer and a real `fio --server`, for fault tests.

Server-to-client bytes are cut into fio frames (24-byte header, ``pdu_len`` payload) so that
frames can be injected between them (a text flood), held back (a server that never ends) or
passed at a limited rate (a slow link). Client-to-server bytes pass unchanged.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time

from app.engine.transports.fioproto.commands import LOG_ERR, Op, text_pdu
from app.engine.transports.fioproto.frames import F_MORE, HEADER, HEADER_SIZE, encode
from app.engine.transports.fioproto.layouts import layout_for


class FioProxy:
    """Listens on ``listen_host``; each connection is relayed to (host, port).

    ``rate``: server-to-client bytes per second (None: unlimited). ``flood``: TEXT frames per
    second injected after the server's first TS, each with a new text (0: none).
    ``hold_end``: STOP and QUIT from the server are not passed on. ``corrupt``: (field, value):
    from the second report on, that u64 thread_stat field (its first element, i.e. reads) is
    overwritten in every TS (fio cuts a message into 1024-byte fragments; payload CRCs are left
    stale, as Fiometer does not check them by default). ``bunch``: from the server's first TS on, its
    frames are held and passed on together every ``bunch`` seconds (a link that delays and bunches
    reports; fio's own times in them stay as fio measured them). ``run_delay``: the client's RUN
    command is held that many seconds (this manager's jobs start that much later than the others').
    """

    def __init__(
        self,
        host: str,
        port: int,
        listen_host: str = "127.0.0.1",
        *,
        rate: float | None = None,
        flood: float = 0.0,
        hold_end: bool = False,
        repeat_every: int = 2,
        corrupt: tuple[str, int] | None = None,
        bunch: float | None = None,
        run_delay: float = 0.0,
    ) -> None:
        self.target = (host, port)
        self.rate, self.flood, self.hold_end, self.repeat_every = rate, flood, hold_end, repeat_every
        self.listener = socket.create_server((listen_host, 0))
        self.host, self.port = self.listener.getsockname()[:2]
        self.corrupt = corrupt
        self.bunch = bunch
        self.run_delay = run_delay
        self.bunches = 0  # times held frames were passed on together
        self.corrupted = 0
        self.injected = 0
        self.sent_to_client = 0
        self._stop = threading.Event()
        self._socks: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self.listener.settimeout(0.1)
        while not self._stop.is_set():
            try:
                client, _ = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            server = socket.create_connection(self.target)
            self._socks += [client, server]
            threading.Thread(target=self._up, args=(client, server), daemon=True).start()
            threading.Thread(target=self._down, args=(server, client), daemon=True).start()

    def _up(self, client: socket.socket, server: socket.socket) -> None:
        buf = b""
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                if not self.run_delay:
                    server.sendall(data)
                    continue
                buf += data
                while len(buf) >= HEADER_SIZE:
                    _ver, opcode, _flags, _tag, pdu_len, _c1, _c2 = HEADER.unpack_from(buf)
                    if len(buf) < HEADER_SIZE + pdu_len:
                        break
                    frame, buf = buf[: HEADER_SIZE + pdu_len], buf[HEADER_SIZE + pdu_len :]
                    if opcode == Op.RUN:
                        time.sleep(self.run_delay)
                    server.sendall(frame)
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_WR)

    def _send(self, client: socket.socket, data: bytes) -> None:
        if self.rate is None:
            client.sendall(data)
            self.sent_to_client += len(data)
            return
        for i in range(0, len(data), 4096):
            chunk = data[i : i + 4096]
            client.sendall(chunk)
            self.sent_to_client += len(chunk)
            time.sleep(len(chunk) / self.rate)

    def _down(self, server: socket.socket, client: socket.socket) -> None:
        buf = b""
        version: int | None = None
        flooding = False
        mid_message = False  # inside a fragmented message: nothing may be injected
        ts_seen, ts_offset = 0, 0  # TS messages begun, payload offset of the next TS fragment
        next_text = time.monotonic()
        held: list[bytes] = []
        release_at = 0.0
        server.settimeout(0.01)
        try:
            while not self._stop.is_set():
                try:
                    data = server.recv(1 << 20)
                    if not data:
                        break
                    buf += data
                except TimeoutError:
                    pass
                while len(buf) >= HEADER_SIZE:
                    ver, opcode, flags, _tag, pdu_len, _c1, _c2 = HEADER.unpack_from(buf)
                    if len(buf) < HEADER_SIZE + pdu_len:
                        break
                    frame, buf = buf[: HEADER_SIZE + pdu_len], buf[HEADER_SIZE + pdu_len :]
                    version = ver
                    if opcode == Op.TS:
                        if ts_offset == 0:
                            ts_seen += 1
                        frame = self._maybe_corrupt(frame, ver, ts_seen, ts_offset)
                        ts_offset = ts_offset + pdu_len if flags & F_MORE else 0
                    mid_message = bool(flags & F_MORE)
                    if opcode == Op.TS:
                        flooding = self.flood > 0
                    if self.hold_end and opcode in (Op.STOP, Op.QUIT):
                        continue
                    if self.bunch and (ts_seen or held):
                        if not held:
                            release_at = time.monotonic() + self.bunch
                        held.append(frame)
                        continue
                    self._send(client, frame)
                if held and time.monotonic() >= release_at:
                    self._send(client, b"".join(held))
                    held.clear()
                    self.bunches += 1
                if flooding and version is not None and not mid_message:
                    now = time.monotonic()
                    while next_text <= now:
                        n = self.injected
                        text = "fio: flood line" if n % self.repeat_every == 0 else f"fio: flood line {n}"
                        self._send(client, encode(version, Op.TEXT, text_pdu(text + "\n", LOG_ERR)))
                        self.injected += 1
                        next_text = max(next_text + 1.0 / self.flood, now - 0.1)
            if held:
                self._send(client, b"".join(held))
        except OSError:
            pass
        with contextlib.suppress(OSError):
            client.shutdown(socket.SHUT_WR)

    def _maybe_corrupt(self, frame: bytes, version: int, nth: int, offset: int) -> bytes:
        if self.corrupt is None or nth < 2:
            return frame
        name, value = self.corrupt
        at = layout_for(version).ts[name].offset - offset
        pdu_len = len(frame) - HEADER_SIZE
        if not 0 <= at <= pdu_len - 8:
            return frame
        self.corrupted += 1
        body = bytearray(frame)
        struct.pack_into("<Q", body, HEADER_SIZE + at, value)
        return bytes(body)

    def close(self) -> None:
        self._stop.set()
        for s in [self.listener, *self._socks]:
            with contextlib.suppress(OSError):
                s.close()
