"""Where a target lives on a manager's OS: Iometer target names -> fio file or device names.

Iometer names targets as its Dynamo saw them: ``C:`` / ``C: "LABEL"`` / ``C:label`` (Windows
volume, test file ``iobw.tst`` at its root), ``PHYSICALDRIVE:1`` / ``1: "VENDOR MODEL"`` (Windows
raw disk), ``/mnt/data [xfs]`` (Linux mount, test file at its root) and ``sdb`` (Linux device).
This module is the only place that knows those conventions per OS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.model.plan import Target

WINDOWS = "windows"
LINUX = "linux"
MACOS = "darwin"

TEST_FILE = "iobw.tst"
_WIN_DRIVE = re.compile(r"^([A-Za-z]):")
_WIN_PHYSICAL = re.compile(r"^(?:PHYSICALDRIVE:(\d+)|(\d+):)", re.IGNORECASE)
_LINUX_MOUNT = re.compile(r"^(/\S*|/.*?) \[[^\]]*\]$")
_LINUX_DEVICE = re.compile(r"^(sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+n\d+(p\d+)?|dm-\d+|md\d+|loop\d+)$")


class TargetError(Exception):
    """The target cannot be placed on this manager; str() says why and how to map it."""


@dataclass(frozen=True)
class ResolvedTarget:
    path: str  # as the OS names it: C:\iobw.tst, \\.\PhysicalDrive1, /dev/sdb, /tmp/t.tst
    is_device: bool  # a raw disk (writes destroy data) rather than a test file
    sector_size: int  # bytes of Iometer's "sector" for maximum size, starting sector and align 0


def normalize_os(name: str) -> str:
    n = name.lower()
    if n.startswith("win"):
        return WINDOWS
    if n in ("darwin", "macos", "mac", "osx"):
        return MACOS
    return LINUX


def _sector_size_of_name(name: str, os_name: str) -> int:
    # Iometer's sector: the device's logical sector, the Windows volume's bytes/sector, or on Linux
    # the file system block (statfs f_bsize), usually 4096.
    if _LINUX_MOUNT.match(name) or (os_name != WINDOWS and name.startswith("/") and not name.startswith("/dev/")):
        return 4096
    return 512


def _is_device_path(path: str) -> bool:
    return path.startswith("/dev/") or path.startswith("\\\\.\\")


def lookup_mapping(name: str, mapping: dict[str, str]) -> str | None:
    """The user's mapping for a target: exact name, then case-insensitive, then Iometer's 'C:' rule."""
    if name in mapping:
        return mapping[name]
    folded = {k.casefold(): v for k, v in mapping.items()}
    if name.casefold() in folded:
        return folded[name.casefold()]
    if len(name) >= 2 and name[1] == ":":  # Iometer matches such names by their first two characters
        for k, v in mapping.items():
            if len(k) >= 2 and k[1] == ":" and k[:2].casefold() == name[:2].casefold():
                return v
    return None


def resolve(target: Target, os_name: str, mapping: dict[str, str] | None = None) -> ResolvedTarget:
    resolved = _resolve(target, os_name, mapping)
    if not resolved.path.isprintable():  # a newline would let a plan file add options to the job
        raise TargetError(f"target {target.name!r}: the path {resolved.path!r} contains control characters")
    return resolved


def _resolve(target: Target, os_name: str, mapping: dict[str, str] | None) -> ResolvedTarget:
    os_name = normalize_os(os_name)
    name = target.name.strip()
    mapped = target.path or lookup_mapping(name, mapping or {})
    if mapped:
        return ResolvedTarget(mapped, _is_device_path(mapped), _sector_size_of_name(name, os_name))
    if target.kind == "network":
        raise TargetError(f"target {name!r} is a network target; fio cannot run Iometer network workers")
    hint = f"map it to a test file or device, e.g. --map '{name}=/path/to/{TEST_FILE}'"
    phys = _WIN_PHYSICAL.match(name)
    if phys:
        number = phys.group(1) or phys.group(2)
        if os_name == WINDOWS:
            return ResolvedTarget(f"\\\\.\\PhysicalDrive{number}", True, 512)
        raise TargetError(f"target {name!r} is Windows physical disk {number}; on this {os_name} manager {hint}")
    drive = _WIN_DRIVE.match(name)
    if drive and name[2:3] not in ("\\", "/"):
        if os_name == WINDOWS:
            return ResolvedTarget(f"{drive.group(1).upper()}:\\{TEST_FILE}", False, 512)
        raise TargetError(f"target {name!r} is a Windows drive; on this {os_name} manager {hint}")
    mount = _LINUX_MOUNT.match(name)
    if mount:
        if os_name == WINDOWS:
            raise TargetError(f"target {name!r} is a Linux mount point; on this Windows manager {hint}")
        root = mount.group(1).rstrip("/")
        return ResolvedTarget(f"{root}/{TEST_FILE}", False, 4096)
    if _LINUX_DEVICE.match(name):
        if os_name == WINDOWS:
            raise TargetError(f"target {name!r} is a Linux disk; on this Windows manager {hint}")
        return ResolvedTarget(f"/dev/{name}", True, 512)
    if name.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", name) or name.startswith("\\\\"):
        return ResolvedTarget(name, _is_device_path(name), _sector_size_of_name(name, os_name))
    raise TargetError(f"target {name!r} is not a drive, disk or path Fiometer recognises; {hint}")


def fio_filename(path: str) -> str:
    """Escape a path for fio's filename= (an unescaped ':' separates file names on every OS)."""
    return path.replace(":", "\\:")
