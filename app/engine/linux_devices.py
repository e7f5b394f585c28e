"""Linux: what uses a block device, decided by its device number (major:minor), never by its name.

A device is in use when it or one of its partitions is mounted (``/proc/self/mountinfo`` field 3, and
the mount source for file systems such as btrfs that report an anonymous number), is an active swap
area (``/proc/swaps``), or is held by another device (``/sys/dev/block/M:m/holders``: device-mapper,
LVM, md RAID, dm-crypt). A whole disk with partitions counts as in use too (writing destroys the
partition table). The places read are parameters so the rules are tested on any machine.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from app.engine.disks import unescape_mount_field


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _rdev_of(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (os.major(st.st_rdev), os.minor(st.st_rdev)) if stat.S_ISBLK(st.st_mode) else None


def _number(text: str) -> tuple[int, int] | None:
    major, _, minor = text.strip().partition(":")
    try:
        return int(major), int(minor)
    except ValueError:
        return None


def partitions(dev: tuple[int, int], sys_dev_block: Path) -> dict[tuple[int, int], str]:
    """Device numbers of the partitions on ``dev`` -> their kernel names."""
    base = sys_dev_block / f"{dev[0]}:{dev[1]}"
    out: dict[tuple[int, int], str] = {}
    try:
        children = list(base.iterdir())
    except OSError:
        return out
    for child in children:
        if (child / "partition").is_file():
            number = _number(_read(child / "dev"))
            if number:
                out[number] = child.name
    return out


def device_uses(dev: tuple[int, int], *, mountinfo: Path = Path("/proc/self/mountinfo"),
                swaps: Path = Path("/proc/swaps"), sys_dev_block: Path = Path("/sys/dev/block")) -> list[str]:
    """What uses block device ``dev`` (major, minor), in words; [] means nothing Fiometer can see does.

    A device the kernel does not list in ``sys_dev_block`` is reported as unknown (so treated as used)."""
    base = sys_dev_block / f"{dev[0]}:{dev[1]}"
    if not base.exists():
        return [f"device {dev[0]}:{dev[1]} is not listed in {sys_dev_block}, so Fiometer cannot tell what uses it"]
    parts = partitions(dev, sys_dev_block)
    numbers = {dev: "", **{n: f" (partition {name})" for n, name in parts.items()}}
    uses: list[str] = []
    for line in _read(mountinfo).splitlines():
        fields = line.split()
        if len(fields) < 5:
            continue
        number = _number(fields[2])
        source = ""
        if " - " in line:
            after = line.split(" - ", 1)[1].split()
            source = unescape_mount_field(after[1]) if len(after) > 1 else ""
        if number not in numbers and source.startswith("/"):
            number = _rdev_of(source)  # btrfs and friends: the mount's own number is anonymous (0:N)
        if number in numbers:
            uses.append(f"mounted at {unescape_mount_field(fields[4])}{numbers[number]}")
    for line in _read(swaps).splitlines()[1:]:
        fields = line.split()
        if fields and _rdev_of(unescape_mount_field(fields[0])) in numbers:
            uses.append(f"active swap {unescape_mount_field(fields[0])}")
    for number, label in numbers.items():
        held = sys_dev_block / f"{number[0]}:{number[1]}" / "holders"
        try:
            holders = sorted(h.name for h in held.iterdir())
        except OSError:
            holders = []
        if holders:
            uses.append(f"held by {', '.join(holders)}{label} (device-mapper, LVM, RAID or encryption)")
    if parts:
        uses.append("partitioned (" + ", ".join(sorted(parts.values())) + ")")
    return list(dict.fromkeys(uses))
