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
    connection that ran it goes; all keep the server's command line, which names its own address and port."""
    cmdline = ("\0".join(map(str, proc.args)) + "\0").encode()
    out = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and (entry / "cmdline").read_bytes() == cmdline:
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
        proc.wait(3)
    time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):  # children that outlived the listener
        os.killpg(proc.pid, signal.SIGKILL)
    for pid in jobs:  # a job process stuck in a loop ignores SIGTERM (e.g. fio's TCP sender whose peer went)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if proc.stderr:
        proc.stderr.close()


def fio_servers() -> Iterator[Callable[..., tuple[str, int, subprocess.Popen]]]:
    """Generator behind the ``fio_server`` fixture: ``start(host, binary="fio")`` -> (host, port, proc)."""
    procs: list[subprocess.Popen] = []

    def start(host: str, binary: str = "fio") -> tuple[str, int, subprocess.Popen]:
        port = free_port(host)
        proc = subprocess.Popen(
            [binary, f"--server={host},{port}"],
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
