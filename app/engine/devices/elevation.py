"""Whether this process may open raw disks: Windows asks for Administrator rights (an elevated process).

On Windows, fio opens ``\\\\.\\PhysicalDriveN`` and ``\\\\.\\X:`` only when the process runs elevated;
without it fio says no more than "failed to open file". POSIX systems decide by the device node's
permissions (root or the ``disk`` group), which fio reports in plain words itself.
"""

from __future__ import annotations

import ctypes
import os


def may_open_raw_disks() -> bool:
    """False only on Windows without Administrator rights (a process that is not elevated)."""
    if os.name != "nt":
        return True
    try:
        return bool(ctypes.windll.shell32.IsUserAnAdmin())  # type: ignore[attr-defined]
    except (AttributeError, OSError):  # no shell32 (Server Core without it): let fio say what it can
        return True


RAW_DISK_NEEDS_ADMIN = (
    "is a raw disk: Windows lets fio open it only when Fiometer runs as Administrator — start Fiometer "
    "(or the Fiometer Command Prompt) with 'Run as administrator', or use a test file"
)
