"""Linux: what uses a block device, decided by its device number (major:minor), never by its name.

A device is in use when it or one of its partitions is mounted (``/proc/self/mountinfo`` field 3, and
the mount source for file systems such as btrfs that report an anonymous number), is an active swap
area (``/proc/swaps``), is held by another device (``/sys/dev/block/M:m/holders``: device-mapper,
LVM, md RAID, dm-crypt), or backs a loop device (a loop over a loop holds nothing, so the loop devices are
asked, by ``LOOP_GET_STATUS64``: the backing object's device and inode numbers, never its name). A loop
device writes through to what backs it, so it is in use when that is: a backing device in use (mounted,
held, or backing another loop device), at any depth of the stack, or a backing file that also backs another
loop device (whatever its offset). The stack is followed through every kind of layer: a partition writes
through to its whole device's stack (a partition of a second loop device on a mounted image is that file
system), device-mapper and md devices to the devices under them (``slaves``), whose other holders count.
A regular file that backs a loop device is in use too (``file_uses``). A whole disk with partitions counts
as in use too (writing destroys the partition table). The places read are parameters so the rules are
tested on any machine.
"""

from __future__ import annotations

import contextlib
import os
import stat
import struct
from pathlib import Path

from app.engine.devices.disks import unescape_mount_field

ObjectId = tuple[str, int, int]
"""An object independent of its name, as ``placement.object_id`` names it: (kind, a, b)."""


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


def swap_files(swaps: Path = Path("/proc/swaps")) -> dict[tuple[int, int], str]:
    """The active swap *files* (not partitions) by (st_dev, st_ino): the kernel refuses writes to them
    (ETXTBSY) only once fio is already writing."""
    out: dict[tuple[int, int], str] = {}
    for line in _read(swaps).splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 2 and fields[1] == "file":
            name = unescape_mount_field(fields[0])
            with contextlib.suppress(OSError, ValueError):
                st = os.stat(name)
                out[(st.st_dev, st.st_ino)] = name
    return out


def _number(text: str) -> tuple[int, int] | None:
    major, _, minor = text.strip().partition(":")
    try:
        return int(major), int(minor)
    except ValueError:
        return None


LOOP_GET_STATUS64 = 0x4C05
_LOOP_INFO64 = struct.Struct("=5Q4I64s64s32s2Q")  # struct loop_info64 (linux/loop.h)


def _decode_kernel_dev(value: int) -> int:
    """The kernel's huge_encode_dev() number as the st_dev/st_rdev Python reports."""
    return os.makedev((value >> 8) & 0xFFF, (value & 0xFF) | ((value >> 12) & 0xFFF00))


def loop_backings(sys_block: Path = Path("/sys/block"), dev_dir: str = "/dev") -> list[tuple[str, ObjectId]]:
    """(loop device name, the object backing it) for every bound loop device; the object as
    ``placement.object_id`` names it: ("file", st_dev, st_ino) or ("block", major, minor)."""
    out: list[tuple[str, ObjectId]] = []
    try:
        names = sorted(p.name for p in sys_block.iterdir() if p.name.startswith("loop"))
    except OSError:
        return out
    for name in names:
        if not (sys_block / name / "loop").is_dir():
            continue  # not bound
        obj = _backing_by_ioctl(f"{dev_dir}/{name}", _number(_read(sys_block / name / "dev")))
        if obj is None:  # no node to ask: the name the kernel keeps (gone if the file was deleted)
            backing = _read(sys_block / name / "loop" / "backing_file").strip()
            with contextlib.suppress(OSError, ValueError):
                st = os.stat(backing)
                obj = (
                    ("block", os.major(st.st_rdev), os.minor(st.st_rdev))
                    if stat.S_ISBLK(st.st_mode)
                    else ("file", st.st_dev, st.st_ino)
                )
        out.append((name, obj if obj is not None else ("unknown", 0, 0)))
    return out


def _backing_by_ioctl(node: str, number: tuple[int, int] | None) -> ObjectId | None:
    try:
        fd = os.open(node, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    import fcntl  # POSIX only; this module is imported on every OS

    try:
        st = os.fstat(fd)
        if not stat.S_ISBLK(st.st_mode) or (os.major(st.st_rdev), os.minor(st.st_rdev)) != number:
            return None
        info = _LOOP_INFO64.unpack(fcntl.ioctl(fd, LOOP_GET_STATUS64, bytes(_LOOP_INFO64.size)))
    except OSError:
        return None
    finally:
        os.close(fd)
    device, inode, rdevice = info[0], info[1], info[2]
    if rdevice:
        rdev = _decode_kernel_dev(rdevice)
        return ("block", os.major(rdev), os.minor(rdev))
    return ("file", _decode_kernel_dev(device), inode)


def loop_backing(
    dev: tuple[int, int],
    backings: list[tuple[str, ObjectId]] | None = None,
    sys_dev_block: Path = Path("/sys/dev/block"),
) -> ObjectId | None:
    """What a loop device (or a partition of one) writes to, None for any other device: bound again to
    another file under the same name and number, it is another target."""
    base = (sys_dev_block / f"{dev[0]}:{dev[1]}").resolve()
    if (base / "partition").is_file():
        base = base.parent
    if not (base / "loop").is_dir():
        return None
    found = loop_backings() if backings is None else backings
    return next((o for n, o in found if n == base.name), ("unknown", 0, 0))


def file_uses(st: os.stat_result, backings: list[tuple[str, ObjectId]] | None = None) -> list[str]:
    """What uses a regular file: the loop devices it backs (writing under them corrupts what is on them)."""
    found = loop_backings() if backings is None else backings
    return [f"backing file of /dev/{name}" for name, obj in found if obj == ("file", st.st_dev, st.st_ino)]


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


def device_uses(
    dev: tuple[int, int],
    *,
    mountinfo: Path = Path("/proc/self/mountinfo"),
    swaps: Path = Path("/proc/swaps"),
    sys_dev_block: Path = Path("/sys/dev/block"),
    backings: list[tuple[str, ObjectId]] | None = None,
    _seen: dict[tuple[int, int], bool] | None = None,
    _above: str = "",
) -> list[str]:
    """What uses block device ``dev`` (major, minor), in words; [] means nothing Fiometer can see does.

    A device the kernel does not list in ``sys_dev_block`` is reported as unknown (so treated as used). A
    device is in use when what it writes through to is (``_stack_uses``: a loop device's backing, the
    devices under device-mapper or md, a partition's whole device; ``_seen``: the devices above it,
    ``_above``: the kernel name of the one just above, whose own hold is no other use)."""
    base = sys_dev_block / f"{dev[0]}:{dev[1]}"
    if not base.exists():
        return [
            f"device {dev[0]}:{dev[1]} is not listed in {sys_dev_block}, so Fiometer cannot tell what uses it"
        ]
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
            holders = sorted(h.name for h in held.iterdir() if h.name != _above)
        except OSError:
            holders = []
        if holders:
            uses.append(f"held by {', '.join(holders)}{label} (device-mapper, LVM, RAID or encryption)")
    if backings is None:
        backings = loop_backings() if sys_dev_block == Path("/sys/dev/block") else []
    uses += [
        f"backing device of /dev/{name}"
        for name, obj in backings
        if obj[0] == "block" and obj[1:] in numbers and name != _above
    ]
    if parts:
        uses.append("partitioned (" + ", ".join(sorted(parts.values())) + ")")
    uses += _stack_uses(dev, base, backings, {**(_seen or {}), dev: True}, (mountinfo, swaps, sys_dev_block))
    return list(dict.fromkeys(uses))


def _stack_uses(
    dev: tuple[int, int],
    base: Path,
    backings: list[tuple[str, ObjectId]],
    seen: dict[tuple[int, int], bool],
    places: tuple[Path, Path, Path],
) -> list[str]:
    """Writing a device writes what lies under it, so it is in use when that is: a loop device's backing
    (``_loop_uses``), the devices under device-mapper or md (``slaves``), and, for a partition, what lies
    under its whole device (a partition of a second loop device on a mounted image is that file system)."""
    real = base.resolve()
    if (base / "partition").is_file():
        whole = _number(_read(real.parent / "dev"))
        if whole is None or whole in seen:
            return []
        under = _stack_uses(whole, real.parent, backings, {**seen, whole: True}, places)
        return [f"on /dev/{real.parent.name}: {'; '.join(under)}"] if under else []
    if (base / "loop").is_dir():
        return _loop_uses(real.name, backings, seen, places)
    uses: list[str] = []
    try:
        slaves = sorted(base.joinpath("slaves").iterdir())
    except OSError:
        slaves = []
    for slave in slaves:
        number = _number(_read(slave / "dev"))
        if number is None or number in seen:
            continue
        deeper = _uses_below(number, real.name, backings, seen, places)
        if deeper:
            uses.append(f"its underlying device {slave.name} ({number[0]}:{number[1]}) is in use ({deeper})")
    return uses


def _uses_below(
    below: tuple[int, int],
    name: str,
    backings: list[tuple[str, ObjectId]],
    seen: dict[tuple[int, int], bool],
    places: tuple[Path, Path, Path],
) -> str:
    """What uses the device under ``name`` other than ``name`` itself, in words ("" when nothing does)."""
    mountinfo, swaps, sys_dev_block = places
    return "; ".join(
        device_uses(
            below,
            mountinfo=mountinfo,
            swaps=swaps,
            sys_dev_block=sys_dev_block,
            backings=backings,
            _seen=seen,
            _above=name,
        )
    )


def _loop_uses(
    name: str,
    backings: list[tuple[str, ObjectId]],
    seen: dict[tuple[int, int], bool],
    places: tuple[Path, Path, Path],
) -> list[str]:
    """A loop device writes through to what backs it: in use when that is (a device in use, at any depth of
    the stack), or when its backing file also backs another loop device (at any offset: the same file)."""
    obj = next((o for n, o in backings if n == name), None)
    if obj is None or obj[0] == "unknown":
        return [f"/dev/{name} is a loop device whose backing object Fiometer cannot read"]
    if obj[0] == "file":
        others = [f"/dev/{n}" for n, o in backings if o == obj and n != name]
        return [f"its backing file also backs {', '.join(others)}"] if others else []
    below = (obj[1], obj[2])
    if below in seen:
        return []
    deeper = _uses_below(below, name, backings, seen, places)
    return [f"its backing device {below[0]}:{below[1]} is in use ({deeper})"] if deeper else []
