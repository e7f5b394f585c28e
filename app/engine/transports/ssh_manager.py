"""Managers reached over SSH: ``ssh://[user@]host[:port]`` starts ``fio --server`` on that host's
loopback through the system's ``ssh`` client and forwards a local port to it, so fio's
unauthenticated port is never exposed on the network.

One ``ssh`` process per manager does both: it runs the remote command and holds the forward
(``-L 127.0.0.1:LOCAL:127.0.0.1:REMOTE``). The remote command keeps fio running only while its
standard input is open, so closing the ``ssh`` process (or Fiometer dying: the child gets SIGTERM
with its parent on Linux) ends the remote fio server too. Authentication is whatever the user's
``ssh`` does non-interactively (keys, agent, ``~/.ssh/config``); ``BatchMode`` keeps it from
prompting. ``$FIOMETER_SSH`` replaces the ``ssh`` command (e.g. ``ssh -F /path/to/config``).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import platform
import random
import shlex
import socket
import subprocess
import threading
import time

from app.engine.common.ssh_address import SshAddress
from app.engine.transports.fioproto.client import ServerInfo, probe
from app.engine.transports.local_fio import popen_options
from app.engine.transports.transport import TransportError

log = logging.getLogger(__name__)
SSH_ENV = "FIOMETER_SSH"
START_TIMEOUT = 20.0


def _free_local_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]  # (host, port) for AF_INET
        return port


def remote_command(fio: str, port: int) -> str:
    """Run fio's server on the remote loopback while our stdin stays open; then stop it and its children."""
    return (
        f"{shlex.quote(fio)} --server=127.0.0.1,{port} >/dev/null 2>&1 & p=$!; "
        "cat >/dev/null; pkill -TERM -P $p 2>/dev/null; kill -TERM $p 2>/dev/null; wait"
    )


class SshFioServer:
    """``fio --server`` on ``address``'s loopback, reachable at ``local`` = ("127.0.0.1", port) here."""

    def __init__(self, address: SshAddress, *, fio: str = "fio", ssh: list[str] | None = None) -> None:
        self.address = address
        self.fio = fio
        self.ssh = ssh or shlex.split(os.environ.get(SSH_ENV) or "ssh")
        self.local: tuple[str, int] | None = None
        self.remote_port: int | None = None  # fio's port on the remote host's loopback
        self.info: ServerInfo | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def command(self, local_port: int, remote_port: int) -> list[str]:
        a = self.address
        return [
            *self.ssh,
            "-o",
            "BatchMode=yes",
            "-o",
            "ExitOnForwardFailure=yes",
            "-o",
            "ServerAliveInterval=5",
            "-T",
            "-L",
            f"127.0.0.1:{local_port}:127.0.0.1:{remote_port}",
            *(["-p", str(a.port)] if a.port else []),
            a.destination,
            remote_command(self.fio, remote_port),
        ]

    def alive(self) -> bool:
        """The SSH session (and so the forward and the remote fio server) is still up."""
        with self._lock:
            return self._proc is not None and self._proc.poll() is None

    def reopen(self, timeout: float = START_TIMEOUT) -> bool:
        """Start the session again if it died (e.g. between steps), on the same local port so that
        transports made for it stay valid; True when it had to. Raises TransportError naming the host."""
        if self.alive():
            return False
        self.close()
        self.start(timeout, local_port=self.local[1] if self.local else None)
        return True

    def start(self, timeout: float = START_TIMEOUT, local_port: int | None = None) -> ServerInfo:
        """Start ssh and the remote fio server; returns what the server says about itself. ``local_port``:
        the forward's port here (default: a free one)."""
        last = ""
        deadline = time.monotonic() + timeout
        fixed = local_port
        for _attempt in range(3):  # a remote port in use: try another
            local_port, remote_port = fixed or _free_local_port(), random.randint(20000, 60000)
            try:
                self._proc = subprocess.Popen(
                    self.command(local_port, remote_port),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    **popen_options(platform.system()),
                )
            except OSError as e:
                raise TransportError(f"{self.address}: cannot run {self.ssh[0]!r}: {e}") from e
            log.info(
                "%s: ssh started, pid %d: %s",
                self.address,
                self._proc.pid,
                shlex.join(self.command(local_port, remote_port)),
            )
            atexit.register(self.close)
            while time.monotonic() < deadline:
                if self._proc.poll() is not None:
                    err = (
                        (self._proc.stderr.read() if self._proc.stderr else b"")
                        .decode(errors="replace")
                        .strip()
                    )
                    last = err.splitlines()[-1] if err else f"ssh exited with status {self._proc.returncode}"
                    log.warning("%s: ssh ended, exit code %s: %s", self.address, self._proc.returncode, last)
                    break
                try:
                    self.info = probe("127.0.0.1", local_port, timeout=2.0)
                    self.local, self.remote_port = ("127.0.0.1", local_port), remote_port
                    log.info("%s: fio server reached through ssh (local port %d)", self.address, local_port)
                    return self.info
                except TransportError:
                    time.sleep(0.2)
            else:
                self.close()
                raise TransportError(
                    f"{self.address}: fio --server did not answer through SSH within "
                    f"{timeout:g} s — is fio installed there (`{self.fio}` on the PATH)?"
                )
            self.close()
            if "forward" not in last.lower() and "address already in use" not in last.lower():
                break
        raise TransportError(f"{self.address}: could not start fio --server over SSH: {last}")

    def python(self, code: str) -> subprocess.Popen[str]:
        """``python3 -c code`` on that host over a session of its own, text pipes on stdin, stdout, stderr
        (the rules there: app.engine.remote.hold). Raises OSError."""
        a = self.address
        argv = [
            *self.ssh,
            "-o",
            "BatchMode=yes",
            "-T",
            *(["-p", str(a.port)] if a.port else []),
            a.destination,
        ]
        return subprocess.Popen(
            [*argv, "python3", "-c", _quoted(code)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            **popen_options(platform.system()),
        )

    def close(self) -> None:
        """Stop the remote fio server (its stdin closes) and the ssh process."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            if proc.stdin:
                proc.stdin.close()
        try:
            proc.wait(3)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(3)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(3)
        if proc.stderr:
            proc.stderr.close()


def _quoted(code: str) -> str:
    """The remote shell reads the command line again: quote the program once for it."""
    return "'" + code.replace("'", "'\"'\"'") + "'"
