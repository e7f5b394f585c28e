"""Where a target lives on a manager's OS: Iometer target names -> fio file or device names.

Iometer names targets as its Dynamo saw them: ``C:`` / ``C: "LABEL"`` / ``C:label`` (Windows
volume, test file ``iobw.tst`` at its root), ``PHYSICALDRIVE:1`` / ``1: "VENDOR MODEL"`` (Windows
raw disk), ``/mnt/data [xfs]`` (Linux mount, test file at its root) and ``sdb`` (Linux device).
This module is the only place that knows those conventions per OS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.engine.jobs import geometry
from app.model.plan import Target

WINDOWS = "windows"
LINUX = "linux"
MACOS = "darwin"

TEST_FILE = "iobw.tst"
FILE_SECTOR = geometry.FS_BLOCK  # the sector assumed for a test file on Linux/macOS until it is examined
DEVICE_SECTOR = geometry.BASE_SECTOR  # ... for a raw disk, or a file on a Windows volume
SECTOR_RULE = (
    "As in Iometer's Dynamo, sizes are in sectors of the object the target resolves to on its manager: a "
    "test file on a Linux or macOS file system counts the file system's block (statfs f_bsize, usually 4096 "
    "bytes), a raw disk its logical sector, a file on a Windows volume the volume's bytes per sector. "
    "'Align 0' (sector boundaries) is the logical sector of the disk under the target (512 bytes at least). "
    "One rule holds for local and remote managers: a local or ssh:// manager's object is examined there; "
    "for a plain fio server, where nothing can be examined, Fiometer assumes 4096-byte sectors for a Linux or "
    "macOS file and 512 bytes otherwise. Maximum Disk Size 0 is the whole "
    "disk, or an existing test file's own size."
)
MAX_PATH_BYTES = 4000  # fio reads job lines of at most 8 KiB; a longer one would be split into two lines
# fio replaces these in every option value: ${VAR} by the environment, the keywords by numbers (then calls bc)
_FIO_SUBSTITUTIONS = (
    ("${", "an environment variable"),
    ("$pagesize", "the page size"),
    ("$mb_memory", "the memory size"),
    ("$ncpus", "the number of CPUs"),
)
_WIN_DRIVE = re.compile(r"^([A-Za-z]):")
_WIN_PHYSICAL = re.compile(r"^(?:PHYSICALDRIVE:(\d+)|(\d+):)", re.IGNORECASE)
_LINUX_MOUNT = re.compile(r"^(/\S*|/.*?) \[[^\]]*\]$")
_LINUX_DEVICE = re.compile(
    r"^(sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+n\d+(p\d+)?|dm-\d+|md\d+|loop\d+)$"
)


class TargetError(Exception):
    """The target cannot be placed on this manager; str() says why and how to map it."""


@dataclass(frozen=True)
class ResolvedTarget:
    path: str  # as the OS names it: C:\iobw.tst, \\.\PhysicalDrive1, /dev/sdb, /tmp/t.tst
    is_device: bool  # a raw disk (writes destroy data) rather than a test file
    sector_size: int  # Iometer's sector assumed by the path (geometry.assumed); the examined object's wins


def normalize_os(name: str) -> str:
    n = name.lower()
    if n.startswith("win"):
        return WINDOWS
    if n in ("darwin", "macos", "mac", "osx"):
        return MACOS
    return LINUX


def _assumed_sector(path: str, os_name: str) -> int:
    """Iometer's sector of a path before (or without) looking at it: by what it resolves to, never by the
    plan's name for it (the object's own numbers replace it once it is examined: ``placement``)."""
    return geometry.assumed(is_device_path(path), os_name).sector


def is_device_path(path: str) -> bool:
    """A device by its spelling alone (before the file system is asked): /dev/..., \\\\.\\..., \\\\?\\GLOBALROOT."""
    from app.engine.jobs import windows_paths

    return path.startswith("/dev/") or windows_paths.is_device(path)


def _windows_device(path: str) -> bool:
    """\\\\.\\PhysicalDrive0, \\\\?\\GLOBALROOT\\...: a name only Windows reads as a device."""
    from app.engine.jobs import windows_paths

    return path.startswith("\\\\") and windows_paths.is_device(path)


def fio_path_problem(path: str) -> str | None:
    """Why fio would read this filename= value differently from its text (None: it reads it literally).

    fio cuts a value at ';' or '#' (comments), strips blanks at both ends, substitutes ${VAR} and
    $pagesize/$mb_memory/$ncpus, and splits job lines longer than 8 KiB. ':' is escaped by fio_filename."""
    if not path:
        return "the path is empty"
    for i, c in enumerate(path):
        if not c.isprintable():
            return f"the path contains the control character U+{ord(c):04X} at position {i + 1}"
    if path != path.strip():
        return "the path starts or ends with a blank, which fio strips"
    for c in ";#":
        if c in path:
            return (
                f"the path contains {c!r}, which starts a comment in a fio job file: fio would open "
                f"{path.split(c, 1)[0].rstrip()!r}"
            )
    for text, what in _FIO_SUBSTITUTIONS:
        if text in path:
            return f"the path contains {text!r}, which fio replaces by {what}"
    if len(path.encode("utf-8", "surrogateescape")) > MAX_PATH_BYTES:
        return f"the path is longer than {MAX_PATH_BYTES} bytes"
    return None


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
    problem = fio_path_problem(resolved.path)  # a newline would even let a plan file add options to the job
    if problem:
        raise TargetError(f"target {target.name!r}: {problem} ({resolved.path!r}); rename or move the target")
    return resolved


def _resolve(target: Target, os_name: str, mapping: dict[str, str] | None) -> ResolvedTarget:
    os_name = normalize_os(os_name)
    name = target.name.strip()
    mapped = target.path or lookup_mapping(name, mapping or {})
    hint = f"map it to a test file or device, e.g. --map '{name}=/path/to/{TEST_FILE}'"
    if os_name != WINDOWS and _windows_device(mapped or name):
        raise TargetError(
            f"target '{name}': {mapped or name} is a Windows raw disk or device name; on this {os_name} "
            f"manager it would be a file named so in fio's folder: {hint}"
        )
    if mapped:
        return ResolvedTarget(mapped, is_device_path(mapped), _assumed_sector(mapped, os_name))
    if target.kind == "network":
        raise TargetError(f"target '{name}' is a network target; fio cannot run Iometer network workers")
    phys = _WIN_PHYSICAL.match(name)
    if phys:
        number = phys.group(1) or phys.group(2)
        if os_name == WINDOWS:
            return ResolvedTarget(f"\\\\.\\PhysicalDrive{number}", True, 512)
        raise TargetError(
            f"target '{name}' is Windows physical disk {number}; on this {os_name} manager {hint}"
        )
    drive = _WIN_DRIVE.match(name)
    if drive and name[2:3] not in ("\\", "/"):
        if os_name == WINDOWS:
            return ResolvedTarget(f"{drive.group(1).upper()}:\\{TEST_FILE}", False, 512)
        raise TargetError(f"target '{name}' is a Windows drive; on this {os_name} manager {hint}")
    mount = _LINUX_MOUNT.match(name)
    if mount:
        if os_name == WINDOWS:
            raise TargetError(f"target '{name}' is a Linux mount point; on this Windows manager {hint}")
        root = mount.group(1).rstrip("/")
        return ResolvedTarget(f"{root}/{TEST_FILE}", False, FILE_SECTOR)
    if _LINUX_DEVICE.match(name):
        if os_name == WINDOWS:
            raise TargetError(f"target '{name}' is a Linux disk; on this Windows manager {hint}")
        return ResolvedTarget(f"/dev/{name}", True, DEVICE_SECTOR)
    if name.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", name) or name.startswith("\\\\"):
        # the name as written: blanks around a path are refused by fio_path_problem, never dropped
        return ResolvedTarget(target.name, is_device_path(name), _assumed_sector(name, os_name))
    raise TargetError(f"target '{name}' is not a drive, disk or path Fiometer recognises; {hint}")


def fio_filename(path: str) -> str:
    """Escape a path for fio's filename= (an unescaped ':' separates file names on every OS)."""
    return path.replace(":", "\\:")
