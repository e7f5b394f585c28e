"""Raw disks of this machine, for choosing physical targets: size, model and whether they are in use.

Qt-free and side-effect free: the OS and the places it reads are parameters, so every branch is
testable on any machine. Linux reads ``/sys/block`` and ``/proc/mounts`` (and ``/proc/swaps``).
Windows asks PowerShell's Storage module (Get-Disk / Get-Partition, in every Windows Fiometer runs on;
wmic is deprecated) for JSON, parsed by a pure function. macOS returns an empty list for now.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from collections.abc import Callable
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


def unescape_mount_field(field_text: str) -> str:
    """/proc/mounts escapes space, tab, newline and backslash as octal (\\040 ...)."""
    out, i = [], 0
    while i < len(field_text):
        if (
            field_text[i] == "\\"
            and field_text[i + 1 : i + 4].isdigit()
            and len(field_text[i + 1 : i + 4]) == 3
        ):
            out.append(chr(int(field_text[i + 1 : i + 4], 8)))
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
            add(unescape_mount_field(parts[0]), unescape_mount_field(parts[1]))
    if proc_swaps is not None:
        for line in _read(proc_swaps).splitlines()[1:]:
            parts = line.split()
            if parts:
                add(unescape_mount_field(parts[0]), "[SWAP]")
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
        parts = (
            tuple(sorted(p.name for p in d.iterdir() if (p / "partition").is_file())) if d.is_dir() else ()
        )
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
        disks.append(
            Disk(
                name=name,
                path=f"/dev/{name}",
                size_bytes=sectors * SECTOR,
                model=f"{vendor} {model}".strip() if vendor and vendor not in model else model,
                partitions=parts,
                mountpoints=tuple(dict.fromkeys(where)),
                holders=tuple(dict.fromkeys(holders)),
                removable=_read(d / "removable") == "1",
                read_only=_read(d / "ro") == "1",
                rotational=None if rot == "" else rot == "1",
                logical_sector=sector,
            )
        )
    return disks


# One call to the Storage module, JSON out; @() keeps a one-disk answer an array (PowerShell 5.1).
WINDOWS_SCRIPT = r"""
$ErrorActionPreference='Stop'
[Console]::OutputEncoding=[Text.Encoding]::UTF8
$out = foreach ($d in Get-Disk) {
  $p = @(Get-Partition -DiskNumber $d.Number -ErrorAction SilentlyContinue)
  [pscustomobject]@{
    Number=$d.Number; FriendlyName=$d.FriendlyName; Model=$d.Model; Size=[uint64]$d.Size
    IsBoot=$d.IsBoot; IsSystem=$d.IsSystem; IsOffline=$d.IsOffline; IsReadOnly=$d.IsReadOnly
    NumberOfPartitions=$d.NumberOfPartitions; LogicalSectorSize=$d.LogicalSectorSize
    DriveLetters=@($p | Where-Object { $_.DriveLetter -and [int][char]$_.DriveLetter -ne 0 } |
                   ForEach-Object { "$($_.DriveLetter):" })
    AccessPaths=@($p | ForEach-Object { $_.AccessPaths } | Where-Object { $_ -and $_ -notlike '\\?\Volume*' })
  }
}
ConvertTo-Json -InputObject @($out) -Depth 4 -Compress
"""


def parse_windows_disks(text: str) -> list[Disk]:
    """Disks from WINDOWS_SCRIPT's JSON (MSFT_Disk fields). Raises ValueError on output it cannot read."""
    data = json.loads(text or "[]")
    if isinstance(data, dict):
        data = [data]
    disks = []
    for d in data:
        n = int(d["Number"])
        letters = [str(x) for x in (d.get("DriveLetters") or [])]
        paths = [
            str(x).rstrip("\\")
            for x in (d.get("AccessPaths") or [])
            if str(x)[:2].upper() not in {x.upper() for x in letters} and not str(x).startswith("\\\\?\\")
        ]
        holders = tuple(
            x
            for x, flag in (("Windows boot disk", d.get("IsBoot")), ("system partition", d.get("IsSystem")))
            if flag
        )
        disks.append(
            Disk(
                name=f"PhysicalDrive{n}",
                path=f"\\\\.\\PhysicalDrive{n}",
                size_bytes=int(d.get("Size") or 0),
                model=str(d.get("FriendlyName") or d.get("Model") or "").strip(),
                partitions=tuple(f"partition {i + 1}" for i in range(int(d.get("NumberOfPartitions") or 0))),
                mountpoints=tuple(letters + paths),
                holders=holders,
                read_only=bool(d.get("IsReadOnly")),
                logical_sector=int(d.get("LogicalSectorSize") or SECTOR),
            )
        )
    return sorted(disks, key=lambda x: int(x.name.removeprefix("PhysicalDrive")))


def _run_powershell(script: str) -> str:
    flags = 0x08000000  # CREATE_NO_WINDOW: no console flashes up from the GUI
    out = subprocess.run(
        ["powershell.exe", "-NoProfile", "-NonInteractive", "-Command", "-"],
        input=script,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=30,
        creationflags=flags,
    )
    if out.returncode:
        raise OSError(out.stderr.strip() or f"PowerShell exited with {out.returncode}")
    return out.stdout


def list_disks(
    os_name: str | None = None,
    *,
    sys_block: str | os.PathLike[str] = "/sys/block",
    proc_mounts: str | os.PathLike[str] = "/proc/mounts",
    proc_swaps: str | os.PathLike[str] | None = "/proc/swaps",
    powershell: Callable[[str], str] = _run_powershell,
) -> list[Disk]:
    """The machine's whole disks. ``os_name`` uses ``platform.system()`` spelling (default: this OS).

    Windows: [] when PowerShell's Storage module cannot answer (unsupported_reason says why). macOS: [].
    """
    os_name = os_name or platform.system()
    if os_name == "Windows":
        try:
            return parse_windows_disks(powershell(WINDOWS_SCRIPT))
        except (OSError, ValueError, KeyError, subprocess.SubprocessError):
            return []
    if os_name != "Linux":
        return []
    return _linux(Path(sys_block), Path(proc_mounts), Path(proc_swaps) if proc_swaps else None)


def unsupported_reason(os_name: str | None = None) -> str:
    """Why no disks can be listed on this OS, in words for the user ('' where listing works)."""
    os_name = os_name or platform.system()
    if os_name in ("Linux", "Windows"):
        return ""
    return f"Fiometer cannot list physical disks on {os_name} yet; type the device path or use a test file."


def empty_reason(os_name: str | None = None) -> str:
    """What to tell the user when the listing came back empty."""
    os_name = os_name or platform.system()
    if os_name == "Windows":
        return (
            "No disks listed: PowerShell's Get-Disk gave no answer (run Get-Disk in a PowerShell window to see "
            "why). Type the device as \\\\.\\PhysicalDriveN (Disk Management shows N), or use a test file."
        )
    return "No disks found in /sys/block."


def disk_of(
    path: str, sys_dev_block: str | os.PathLike[str] = "/sys/dev/block", *, os_name: str | None = None
) -> str | None:
    """The disk that holds ``path``, or None where it is not known (never an exception).

    Linux: the kernel name of the disk fio reports statistics for when it opens ``path`` (a file: the
    disk holding its file system; a device: itself; a partition: its disk, as fio's diskutil.c does);
    None where there is no block device behind it (tmpfs, a remote or missing path).
    Windows: ``PhysicalDrive<N>`` from the Windows API (``windows_disks``), None where it does not say.
    Other systems (macOS): None, as there is no device-number map to read."""
    import stat

    system = os_name or platform.system()
    if system == "Windows":
        from app.engine.devices import windows_disks

        return windows_disks.disk_of(path)
    if system != "Linux" or not hasattr(os, "major"):
        return None
    probe = Path(path)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent  # a test file not created yet lives on its folder's disk
    try:
        st = os.stat(probe)
    except OSError:
        return None
    dev = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    node = Path(sys_dev_block) / f"{os.major(dev)}:{os.minor(dev)}"
    try:
        real = node.resolve(strict=True)
    except OSError:
        return None
    if (real.parent / "queue").is_dir():  # a partition: fio counts its disk
        real = real.parent
    return real.name
