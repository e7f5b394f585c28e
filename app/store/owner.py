"""Which process is recording a run, and whether that process is gone.

A run row keeps its recorder's pid, host name and a *start token* (what makes that process distinct
from a later one given the same pid: boot id + start time on Linux, creation time on Windows, ``ps``
start time elsewhere). A run still marked ``running`` whose owner is gone was cut short: it becomes
``interrupted``. An owner on another host is never judged (we cannot see its processes).
"""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from .blocks import last_t_sql, seal_step
from .errors import StoreError
from .timestamps import iso, utc_now

if TYPE_CHECKING:
    from .database import Store


@dataclass(frozen=True)
class ProcessOwner:
    pid: int
    host: str
    token: str | None


def current_owner() -> ProcessOwner:
    return _owner_of(os.getpid())  # keyed by pid so a forked child is not mistaken for its parent


@cache
def _owner_of(pid: int) -> ProcessOwner:
    return ProcessOwner(pid, socket.gethostname(), _probe(pid)[1])


def owner_is_gone(owner: ProcessOwner) -> bool:
    """True only when we are sure: same host, and the pid is not running or now belongs to another process."""
    if owner.host != socket.gethostname():
        return False
    alive, token = _probe(owner.pid)
    if alive is None:
        return False
    if not alive:
        return True
    return owner.token is not None and token is not None and token != owner.token


def _probe(pid: int) -> tuple[bool | None, str | None]:
    """(running?, start token) for pid; None where this platform cannot tell."""
    if sys.platform == "win32":
        return _probe_windows(pid)
    if Path("/proc/self/stat").exists():
        return _probe_proc(pid)
    return _probe_posix(pid)


def _probe_proc(pid: int) -> tuple[bool | None, str | None]:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False, None
    except OSError:
        return None, None
    fields = stat.rsplit(")", 1)[1].split()  # the command name may hold spaces and parentheses
    if fields[0] in ("Z", "X"):  # zombie or dead: not running any more, only waiting to be reaped
        return False, None
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = "?"
    return True, f"linux:{boot}:{fields[19]}"  # field 22 of stat: start time in clock ticks after boot


def _probe_posix(pid: int) -> tuple[bool | None, str | None]:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False, None
    except PermissionError:
        pass  # exists, owned by someone else
    except OSError:
        return None, None
    try:
        out = subprocess.run(
            ["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True, text=True, timeout=5
        )
        started = out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        started = ""
    return True, (f"ps:{started}" if started else None)


def _probe_windows(pid: int) -> tuple[bool | None, str | None]:  # pragma: no cover - Windows only
    import ctypes
    from ctypes import wintypes

    k32 = ctypes.WinDLL("kernel32", use_last_error=True)
    k32.OpenProcess.restype = wintypes.HANDLE
    k32.OpenProcess.argtypes = (wintypes.DWORD, wintypes.BOOL, wintypes.DWORD)
    k32.GetProcessTimes.argtypes = (wintypes.HANDLE,) + (ctypes.POINTER(wintypes.FILETIME),) * 4
    k32.GetExitCodeProcess.argtypes = (wintypes.HANDLE, ctypes.POINTER(wintypes.DWORD))
    k32.CloseHandle.argtypes = (wintypes.HANDLE,)
    process_query_limited_information, error_access_denied, still_active = 0x1000, 5, 259
    handle = k32.OpenProcess(process_query_limited_information, False, pid)
    if not handle:
        return (None, None) if ctypes.get_last_error() == error_access_denied else (False, None)
    try:
        code = wintypes.DWORD()
        if k32.GetExitCodeProcess(handle, ctypes.byref(code)) and code.value != still_active:
            return False, None
        times = [wintypes.FILETIME() for _ in range(4)]
        if not k32.GetProcessTimes(handle, *(ctypes.byref(t) for t in times)):
            return True, None
        created = times[0].dwHighDateTime << 32 | times[0].dwLowDateTime
        return True, f"win:{created}"
    finally:
        k32.CloseHandle(handle)


def abandoned_runs(store: Store) -> list[int]:
    """Runs still ``running`` whose recording process is gone (reads only)."""
    rows = store.conn.execute(
        "SELECT id, owner_pid, owner_host, owner_token FROM runs WHERE status = 'running'"
    ).fetchall()
    return [
        run_id
        for run_id, pid, host, token in rows
        if pid is not None and owner_is_gone(ProcessOwner(pid, host or "", token))
    ]


def close_abandoned_runs(store: Store) -> list[int]:
    """Mark ``interrupted`` every run still ``running`` whose recording process is gone; their ids.

    The end time is the last moment known to have been recorded (a step's end or its last sample).
    """
    gone = abandoned_runs(store)
    closed = []
    for run_id in gone:
        try:
            if _close_abandoned(store, run_id):
                closed.append(run_id)
        except StoreError:  # housekeeping only: a full disk or a read-only file must not stop reading
            break
    return closed


def _close_abandoned(store: Store, run_id: int) -> bool:
    with store.write("marking an abandoned run as interrupted") as conn:
        ended = _last_recorded(conn, run_id)
        if conn.execute(
            "UPDATE runs SET status = 'interrupted', ended = ? WHERE id = ? AND status = 'running'",
            (ended, run_id),
        ).rowcount:
            for (step_id,) in conn.execute(
                "UPDATE steps SET status = 'interrupted', ended = ? "
                "WHERE run_id = ? AND status = 'running' RETURNING id",
                (ended, run_id),
            ).fetchall():
                seal_step(conn, step_id)  # what was recorded, as a finished step keeps it
            pid, host = conn.execute(
                "SELECT owner_pid, owner_host FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            conn.execute(
                "INSERT INTO messages (run_id, at, level, text) VALUES (?, ?, 'error', ?)",
                (
                    run_id,
                    utc_now(),
                    f"The run was cut short: the Fiometer process recording it "
                    f"(pid {pid} on {host}) ended without finishing it.",
                ),
            )
            return True
    return False


def _last_recorded(conn: sqlite3.Connection, run_id: int) -> str:
    moments = [conn.execute("SELECT started FROM runs WHERE id = ?", (run_id,)).fetchone()[0]]
    for started, ended, last_t in conn.execute(
        f"SELECT started, ended, (SELECT max({last_t_sql('series.id')}) FROM series "
        "WHERE series.step_id = steps.id) FROM steps WHERE run_id = ?",
        (run_id,),
    ):
        moments.append(ended or started)
        if last_t is not None:
            moments.append(iso(datetime.fromisoformat(started) + timedelta(seconds=last_t)))
    return max(moments, key=datetime.fromisoformat)
