"""The numbers Iometer's geometry needs, read from the object itself (standard library only: this module also
runs on an ``ssh://`` manager's host, sent by ``remote.hold``).

The rule that turns them into a sector and an "align 0" boundary is ``jobs.geometry``.
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

SYS_DEV_BLOCK = Path("/sys/dev/block")


def logical_sector(dev: tuple[int, int], sys_dev_block: Path = SYS_DEV_BLOCK) -> int | None:
    """A block device's logical sector (sysfs ``queue/logical_block_size``, as BLKSSZGET); a partition has
    its disk's. None: not a block device sysfs knows (tmpfs, btrfs's anonymous devices, not Linux)."""
    node = sys_dev_block / f"{dev[0]}:{dev[1]}"
    for folder in (node, node / ".."):  # a partition's folder sits inside its disk's and has no queue/
        try:
            return int((folder / "queue" / "logical_block_size").read_text().strip())
        except (OSError, ValueError):
            continue
    return None


def fs_block(path: str) -> int | None:
    """Dynamo's statfs f_bsize of the file system holding ``path`` (or the folder it would be created in).
    Linux's statvfs f_bsize is statfs's; macOS's statvfs gives statfs's f_bsize as f_frsize (its f_bsize is
    the I/O size, f_iosize)."""
    for where in (path, os.path.dirname(path) or "."):
        try:
            st = os.statvfs(where)
        except (OSError, AttributeError):
            continue
        return st.f_frsize if sys.platform == "darwin" else st.f_bsize
    return None


def windows_bytes_per_sector(path: str) -> int | None:  # pragma: no cover - Windows only
    """GetDiskFreeSpace's bytes per sector of the volume holding ``path``, as Dynamo reads it."""
    root = os.path.splitdrive(os.path.abspath(path))[0] + "\\"
    spc, bps, free, total = (ctypes.c_ulong() for _ in range(4))
    try:
        ok = ctypes.windll.kernel32.GetDiskFreeSpaceW(  # type: ignore[attr-defined]
            ctypes.c_wchar_p(root),
            ctypes.byref(spc),
            ctypes.byref(bps),
            ctypes.byref(free),
            ctypes.byref(total),
        )
    except (AttributeError, OSError):
        return None
    return bps.value if ok else None
