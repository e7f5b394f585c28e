"""Linux process-tree helpers for tests and benchmarks: a process's descendants, and waiting for them to end."""

from __future__ import annotations

import time
from pathlib import Path

from app.engine.transports.local_fio import _children as children  # the process tree as the engine reads it


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def descendants(pid: int) -> dict[int, str]:
    """pid -> start time of every living descendant of ``pid``."""
    out: dict[int, str] = {}
    todo = children(pid)
    while todo:
        p = todo.pop()
        st = _stat(p)
        if st is not None and p not in out:
            out[p] = st[19]
            todo.extend(children(p))
    return out


def command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def alive(procs: dict[int, str]) -> list[int]:
    """The processes of ``procs`` (pid -> start time) still running (zombies count as ended)."""
    out = []
    for pid, started in procs.items():
        st = _stat(pid)
        if st is not None and st[19] == started and st[0] not in ("Z", "X"):
            out.append(pid)
    return out


def wait_gone(procs: dict[int, str], timeout: float) -> float | None:
    """Seconds until every process of ``procs`` has ended, or None if some still run after ``timeout``."""
    t0 = time.monotonic()
    while alive(procs):
        if time.monotonic() - t0 > timeout:
            return None
        time.sleep(0.02)
    return time.monotonic() - t0
