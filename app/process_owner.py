"""A process's identity, and whether that process is gone (a Qt-free, store-free leaf).

An identity is a pid, host name and a *start token* (what makes that process distinct from a later one
given the same pid: boot id + start time on Linux, creation time on Windows, ``ps`` start time elsewhere).
The store keeps its recorder's identity on each run row (``store/abandoned.py``), the engine its own in
each job folder's marker (``engine/guards/workdirs.py``). An owner on another host is never judged (we cannot
see its processes).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path


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
    if sys.platform != "win32":  # ctypes' Windows half (mypy checks it as Linux otherwise)
        return None, None
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
