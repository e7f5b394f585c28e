"""Peers for probe tests on loopback: a listener that accepts and never answers, and a relay to a real fio server
whose answers come back late (a far host). Used by tests/integration/test_build_endpoints.py and
benchmarks/bench_probe_managers.py."""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time


class SilentListener:
    """A TCP listener that accepts and never answers, counting the connections open at the same time."""

    def __init__(self, host: str) -> None:
        self.sock = socket.create_server((host, 0), backlog=64)
        self.address = f"{host}:{self.sock.getsockname()[1]}"
        self.open = 0
        self.most_open = 0
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="silent-listener", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self.sock, selectors.EVENT_READ)
        while not self._stop.is_set():
            # hang-ups before new connections: a prober closes one before it opens the next
            for key, _ in sorted(sel.select(0.05), key=lambda event: event[0].fileobj is self.sock):
                if key.fileobj is self.sock:
                    conn, _ = self.sock.accept()
                    sel.register(conn, selectors.EVENT_READ)
                    self.accepted += 1
                    self.open += 1
                    self.most_open = max(self.most_open, self.open)
                    continue
                conn = key.fileobj
                assert isinstance(conn, socket.socket)
                try:
                    data = conn.recv(65536)  # the PROBE it is sent is read and never answered
                except OSError:
                    data = b""
                if not data:  # the prober gave up and closed
                    sel.unregister(conn)
                    conn.close()
                    self.open -= 1
        for key in list(sel.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        sel.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)


class SlowLink:
    """A relay to a real fio server on a link whose answers take ``delay`` seconds to come back (a far host):
    what the client sends passes at once; the server's first bytes are passed on ``delay`` later."""

    def __init__(self, listen_host: str, target: tuple[str, int], delay: float) -> None:
        self.sock = socket.create_server((listen_host, 0), backlog=16)
        self.address = f"{listen_host}:{self.sock.getsockname()[1]}"
        self.target, self.delay = target, delay
        self._socks: list[socket.socket] = [self.sock]
        self._threads: list[threading.Thread] = []
        self._spawn(self._accept)

    def _spawn(self, target, *args) -> None:
        t = threading.Thread(target=target, args=args, name="slow-link", daemon=True)
        self._threads.append(t)
        t.start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.sock.accept()
                server = socket.create_connection(self.target)
                self._socks += [client, server]
                self._spawn(self._pass, client, server, 0.0)
                self._spawn(self._pass, server, client, self.delay, True)

    def _pass(self, src: socket.socket, dst: socket.socket, delay: float, last: bool = False) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                time.sleep(delay)
                delay = 0.0
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        if last:  # the server hung up after the client: this connection is over
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
                with contextlib.suppress(ValueError):
                    self._socks.remove(sock)

    def close(self) -> None:
        for sock in list(self._socks):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        for t in self._threads:
            t.join(5)
