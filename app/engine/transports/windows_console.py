"""CTRL_BREAK to a fio.exe that has a console of its own (Windows only).

A process without a console (the window, the packaged fiometer.exe, Python started without one) cannot share
one with fio, so ``send_signal(CTRL_BREAK_EVENT)`` cannot reach it (and CPython then terminates fio instead,
cpython #87128). fio, a console program started by such a process, gets a console of its own; this process
may attach to it for a moment, send CTRL_BREAK to fio's process group (fio's handler then ends its jobs with
their final numbers, as after Ctrl+C in a terminal) and detach. Only a process with no console may attach,
so a CLI in a terminal keeps ``send_signal``, which reaches the fio sharing its console.
"""

from __future__ import annotations

import sys
import threading

CTRL_BREAK_EVENT = 1
_lock = threading.Lock()  # attaching is process-wide: one at a time


def break_by_attaching(pid: int) -> bool:
    """Send CTRL_BREAK to the process group ``pid`` (fio started with CREATE_NEW_PROCESS_GROUP) through its
    console; False where this cannot be done (not Windows, this process has a console, fio has none)."""
    if sys.platform != "win32":
        return False
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    with _lock:
        if kernel32.GetConsoleWindow() or not kernel32.AttachConsole(pid):
            return False
        try:
            kernel32.SetConsoleCtrlHandler(None, True)  # this process ignores the console's events meanwhile
            return bool(kernel32.GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid))
        finally:
            kernel32.FreeConsole()
            kernel32.SetConsoleCtrlHandler(None, False)


def send_break(pid: int) -> bool:
    """CTRL_BREAK to fio's process group ``pid`` by whichever console reaches it: this process's own, where
    fio shares it (the CLI in a terminal), else fio's (``break_by_attaching``). False where neither can
    (Wine, a fio 3.41/3.42 started without a console). Never ``os.kill``: CPython 3.11 then terminates fio."""
    if sys.platform != "win32":
        return False
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    if kernel32.GetConsoleWindow():
        return bool(kernel32.GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid))
    return break_by_attaching(pid)
