"""Windows path rules for targets: which spellings are devices, and how a path is normalised.

Pure string rules (no Windows needed, so every branch is unit-tested anywhere). On Windows a raw disk
or volume is opened through the device namespace: ``\\\\.\\PhysicalDrive1``, ``\\\\.\\C:``,
``\\\\?\\GLOBALROOT\\Device\\Harddisk1\\Partition0``, ``\\\\?\\Volume{guid}`` (no trailing path), and
the DOS device names (``CON``, ``NUL``, ``COM1`` ...) name devices in every folder.
"""

from __future__ import annotations

import ntpath
import re
from collections.abc import Callable

_DOS_DEVICE = re.compile(
    r"^(CON|PRN|AUX|NUL|COM[0-9¹²³]|LPT[0-9¹²³]|CONIN\$|CONOUT\$)(\..*)?$", re.IGNORECASE
)
_DRIVE_ABS = re.compile(r"^[A-Za-z]:\\")
_VOLUME = re.compile(r"^\\\\\?\\Volume\{[0-9A-Fa-f-]+\}\\?$", re.IGNORECASE)


def _flip(path: str) -> str:
    return path.replace("/", "\\")


def is_device(path: str) -> bool:
    """True for anything in the device namespace, a bare volume, or a DOS device name (also as the last
    component, which Windows resolves to the device whatever the folder)."""
    p = _flip(path)
    if p.startswith("\\\\.\\") or p.startswith("\\\\?\\GLOBALROOT"):
        return True
    if _VOLUME.match(p):
        return True
    if p.startswith("\\\\?\\"):  # \\?\C:\dir\file and \\?\UNC\server\share\file are files
        rest = p[4:]
        return not (_DRIVE_ABS.match(rest) or rest.upper().startswith("UNC\\"))
    last = p.rstrip("\\").rsplit("\\", 1)[-1]
    if len(last) == 2 and last[1] == ":":  # "C:" alone: the volume
        return p == last
    return bool(_DOS_DEVICE.match(last.split(":")[0].rstrip(" .")))


def is_absolute(path: str) -> bool:
    """Fully qualified: C:\\x, \\\\server\\share\\x or the \\\\.\\ / \\\\?\\ namespaces (not C:x or \\x)."""
    p = _flip(path)
    return bool(_DRIVE_ABS.match(p)) or p.startswith("\\\\")


def normalise(path: str) -> str:
    """One spelling: backslashes, '.' and doubled separators removed. Device namespace paths are kept as
    written (normalising them would change what they name). Raises ValueError for what cannot be
    normalised without looking at the machine: relative paths and '..' (a junction may sit before it)."""
    p = _flip(path)
    if not is_absolute(p):
        raise ValueError(
            "it is not a full path (C:\\folder\\file or \\\\server\\share\\file); fio's working "
            "folder is not Fiometer's"
        )
    if p.startswith("\\\\.\\") or p.startswith("\\\\?\\"):
        return p
    if ".." in p.split("\\"):
        raise ValueError("it contains '..', which Fiometer cannot resolve without looking at that machine")
    return ntpath.normpath(p)


MAX_PATH = 260  # Windows' classic limit, terminating NUL included: fio.exe opens files by the ANSI API


def job_encoding(os_name: str) -> str:
    """The encoding fio reads its job file in: on Windows fio.exe reads bytes and opens files through the
    ANSI API, so the job file is written in the ANSI code page (Python's "mbcs"); UTF-8 elsewhere."""
    return "mbcs" if os_name == "Windows" else "utf-8"


def ansi_problem(path: str, encode: Callable[[str], bytes] | None = None) -> str | None:
    """Why fio.exe would not open this path as written (None: it would). ``encode``: the ANSI code page's
    encoder (default: this Windows' "mbcs"; a test passes another)."""
    if len(path) >= MAX_PATH:
        return (
            f"the path has {len(path)} characters; fio.exe opens paths of at most {MAX_PATH - 1} (Windows' "
            "MAX_PATH), so choose a shorter folder or file name"
        )
    try:
        (encode or (lambda s: s.encode("mbcs", "strict")))(path)
    except UnicodeEncodeError:
        return (
            "the path has characters this Windows' ANSI code page cannot hold, and fio.exe reads its job "
            "file and opens files in that code page (it would open another name); rename the folder or "
            "file with characters of that code page"
        )
    return None
