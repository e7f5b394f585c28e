"""Real `fio --server` processes on loopback addresses for tests: start, wait, stop the whole tree."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from app.engine.transports.fioproto.client import forget_protocol

# A fio binary (or a wrapper that runs one, e.g. in a Debian 13 chroot: .ci/debian13.sh) for every server the
# tests start; unset: the system's fio. The local side (fio run by Fiometer itself) stays the system's.
SERVER_FIO_ENV = "FIOMETER_SERVER_FIO"


def server_fio() -> str:
    return os.environ.get(SERVER_FIO_ENV) or "fio"


def server_banner(binary: str | None = None) -> str:
    """What the servers' fio says it is (``fio-3.39``), from its own ``--version``."""
    out = subprocess.run([binary or server_fio(), "--version"], capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


def protocols_of(banner: str) -> set[int]:
    """The protocol versions fio's sources give to that release or to a distribution's package of it
    (fio-3.39: 107 as released, 109 as Debian 13 ships it)."""
    from app.engine.transports.fioproto.protocol_table import PROTOCOL_ROWS

    version = banner.removeprefix("fio-").split("-")[0]
    return {
        r.protocol
        for r in PROTOCOL_ROWS
        if version in r.releases or any(f"fio {version}-" in p for p in r.packages)
    }


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_listening(host: str, port: int, proc: subprocess.Popen, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"fio --server exited early: {proc.stderr.read() if proc.stderr else ''}")
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError("fio --server did not start listening")


def server_processes(proc: subprocess.Popen) -> list[int]:
    """Every live process of the server: itself, its connection handlers and its fio job processes. Every fio
    job calls setsid(), so it escapes a kill of the server's process group, and it is orphaned when the
    connection that ran it goes; all keep the server's arguments, which name its own address and port. The
    program's name may differ from the one started (a wrapper that execs fio in a chroot)."""
    args = ("\0".join(map(str, proc.args[1:])) + "\0").encode()
    out = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().partition(b"\0")[2] == args:
                out.append(int(entry.name))
    return out


def job_processes(proc: subprocess.Popen) -> list[int]:
    """The server's fio job processes still alive (each leads its own session)."""
    out = []
    for pid in server_processes(proc):
        with contextlib.suppress(OSError):
            if pid != proc.pid and os.getsid(pid) == pid:
                out.append(pid)
    return out


def stop_group(proc: subprocess.Popen) -> None:
    """Terminate the server's whole process group (listener, connection handlers, backends), then kill;
    its job processes (own sessions, found before the group goes) are killed by pid."""
    jobs = job_processes(proc)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(3)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(
            30
        )  # killed: it ends once scheduled (a server at the lowest CPU weight on a loaded machine took > 3 s)
    time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):  # children that outlived the listener
        os.killpg(proc.pid, signal.SIGKILL)
    for pid in jobs:  # a job process stuck in a loop ignores SIGTERM (e.g. fio's TCP sender whose peer went)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if proc.stderr:
        proc.stderr.close()


def fio_servers() -> Iterator[Callable[..., tuple[str, int, subprocess.Popen]]]:
    """Generator behind the ``fio_server`` fixture: ``start(host, binary=None)`` -> (host, port, proc);
    ``binary`` None: ``$FIOMETER_SERVER_FIO`` or the system's fio."""
    procs: list[subprocess.Popen] = []

    def start(host: str, binary: str | None = None) -> tuple[str, int, subprocess.Popen]:
        port = free_port(host)
        proc = subprocess.Popen(
            [binary or server_fio(), f"--server={host},{port}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: we can stop exactly its tree
        )
        procs.append(proc)
        wait_listening(host, port, proc)
        forget_protocol(host, port)
        return host, port, proc

    try:
        yield start
    finally:  # also when the generator is closed outside pytest
        for proc in procs:
            stop_group(proc)
