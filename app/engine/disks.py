"""Raw disks of this machine, for choosing physical targets: size, model and whether they are in use.

Qt-free and side-effect free: the OS and the places it reads are parameters, so every branch is
testable on any machine. Linux reads ``/sys/block`` and ``/proc/mounts`` (and ``/proc/swaps``).
Windows and macOS return an empty list for now: enumerating ``\\\\.\\PhysicalDriveN`` needs WMI or
DeviceIoControl, which is not implemented; the GUI says so and lets the user type a device path.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path

SECTOR = 512  # /sys/block/*/size is always in 512-byte units, whatever the device's sector size
_SKIP_PREFIXES = ("ram", "zram", "fd")


@dataclass(frozen=True)
class Disk:
    name: str  # kernel name: sdb, nvme0n1, vda, dm-0
    path: str  # what fio opens: /dev/sdb
    size_bytes: int
    model: str = ""
    partitions: tuple[str, ...] = ()
    mountpoints: tuple[str, ...] = ()  # of the disk itself or any of its partitions (incl. [SWAP])
    holders: tuple[str, ...] = ()  # devices built on it: LVM, MD RAID, dm-crypt (dm-0, md0)
    removable: bool = False
    read_only: bool = False
    rotational: bool | None = None
    logical_sector: int = SECTOR

    @property
    def in_use(self) -> bool:
        """Writing to it would destroy a file system, a swap area or a member of a volume."""
        return bool(self.partitions or self.mountpoints or self.holders)

    @property
    def state(self) -> str:
        """In words: 'mounted at /, /boot', 'partitioned (sda1, sda2)', 'used by dm-0' or 'unused'."""
        if self.mountpoints:
            return "mounted at " + ", ".join(self.mountpoints)
        if self.holders:
            return "used by " + ", ".join(self.holders)
        if self.partitions:
            return "partitioned (" + ", ".join(self.partitions) + ")"
        if self.read_only:
            return "read-only"
        return "unused"


def _read(path: Path, default: str = "") -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return default


def _unescape(field_text: str) -> str:
    """/proc/mounts escapes space, tab, newline and backslash as octal (\\040 ...)."""
    out, i = [], 0
    while i < len(field_text):
        if field_text[i] == "\\" and field_text[i + 1:i + 4].isdigit() and len(field_text[i + 1:i + 4]) == 3:
            out.append(chr(int(field_text[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field_text[i])
            i += 1
    return "".join(out)


def _dm_names(sys_block: Path) -> dict[str, str]:
    """/dev/mapper/<name> -> dm-N, from /sys/block/dm-N/dm/name."""
    out = {}
    for d in sys_block.glob("dm-*"):
        name = _read(d / "dm" / "name")
        if name:
            out[name] = d.name
    return out


def _mounts(proc_mounts: Path, proc_swaps: Path | None, dm: dict[str, str]) -> dict[str, list[str]]:
    """kernel device name (sda1, dm-0) -> mount points (swap shows as [SWAP])."""
    out: dict[str, list[str]] = {}

    def add(dev: str, where: str) -> None:
        if not dev.startswith("/dev/"):
            return
        rest = dev[5:]
        kernel = dm.get(rest[7:], rest) if rest.startswith("mapper/") else rest.rsplit("/", 1)[-1]
        out.setdefault(kernel, []).append(where)

    text = _read(proc_mounts)
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            add(_unescape(parts[0]), _unescape(parts[1]))
    if proc_swaps is not None:
        for line in _read(proc_swaps).splitlines()[1:]:
            parts = line.split()
            if parts:
                add(_unescape(parts[0]), "[SWAP]")
    return out


def _linux(sys_block: Path, proc_mounts: Path, proc_swaps: Path | None) -> list[Disk]:
    if not sys_block.is_dir():
        return []
    dm = _dm_names(sys_block)
    mounts = _mounts(proc_mounts, proc_swaps, dm)
    disks = []
    for d in sorted(sys_block.iterdir(), key=lambda p: p.name):
        name = d.name
        if name.startswith(_SKIP_PREFIXES):
            continue
        try:
            sectors = int(_read(d / "size", "0") or 0)
        except ValueError:
            sectors = 0
        if sectors <= 0:  # empty loop devices, card readers without a card
            continue
        parts = tuple(sorted(p.name for p in d.iterdir() if (p / "partition").is_file())) if d.is_dir() else ()
        where = list(mounts.get(name, []))
        holders = sorted(h.name for h in (d / "holders").glob("*"))
        for p in parts:
            where += mounts.get(p, [])
            holders += sorted(h.name for h in (d / p / "holders").glob("*"))
        vendor = _read(d / "device" / "vendor")
        if vendor.startswith("0x"):  # virtio and friends report a PCI vendor id, not a name
            vendor = ""
        model = _read(d / "device" / "model")
        if name.startswith("dm-"):
            model = model or f"device mapper {_read(d / 'dm' / 'name')}".strip()
        elif name.startswith("md"):
            model = model or f"MD RAID {_read(d / 'md' / 'level')}".strip()
        elif name.startswith("loop"):
            backing = _read(d / "loop" / "backing_file")
            model = model or (f"loop on {backing}" if backing else "loop device")
        rot = _read(d / "queue" / "rotational")
        try:
            sector = int(_read(d / "queue" / "logical_block_size", str(SECTOR)))
        except ValueError:
            sector = SECTOR
        disks.append(Disk(
            name=name, path=f"/dev/{name}", size_bytes=sectors * SECTOR,
            model=f"{vendor} {model}".strip() if vendor and vendor not in model else model,
            partitions=parts, mountpoints=tuple(dict.fromkeys(where)), holders=tuple(dict.fromkeys(holders)),
            removable=_read(d / "removable") == "1", read_only=_read(d / "ro") == "1",
            rotational=None if rot == "" else rot == "1", logical_sector=sector))
    return disks


def list_disks(os_name: str | None = None, *, sys_block: str | os.PathLike[str] = "/sys/block",
               proc_mounts: str | os.PathLike[str] = "/proc/mounts",
               proc_swaps: str | os.PathLike[str] | None = "/proc/swaps") -> list[Disk]:
    """The machine's whole disks. ``os_name`` uses ``platform.system()`` spelling (default: this OS).

    Windows/macOS: not implemented, returns [] (see the module docstring).
    """
    os_name = os_name or platform.system()
    if os_name != "Linux":
        return []
    return _linux(Path(sys_block), Path(proc_mounts), Path(proc_swaps) if proc_swaps else None)


def unsupported_reason(os_name: str | None = None) -> str:
    """Why no disks are listed on this OS, in words for the user ('' where listing works)."""
    os_name = os_name or platform.system()
    if os_name == "Linux":
        return ""
    if os_name == "Windows":
        return ("Fiometer cannot list physical disks on Windows yet. Type the device as "
                "\\\\.\\PhysicalDriveN (Disk Management shows N), or use a test file on a volume.")
    return f"Fiometer cannot list physical disks on {os_name} yet; type the device path or use a test file."


def format_size(n: int) -> str:
    """Binary units with one decimal, as disk tools show them: 512.0 GiB."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024 or unit == "PiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"
