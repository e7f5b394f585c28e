"""What the host tells about a block device for a PTS report's header: vendor, model, firmware, serial,
capacity, interface and write cache (Linux sysfs; facts only, no policy). Every field the host does not tell
is "" (never guessed). ``unsupported_reason``: where the SNIA PTS, which needs these facts, cannot run."""

from __future__ import annotations

import os
import platform
import stat
from dataclasses import asdict, dataclass
from pathlib import Path

SYS_DEV_BLOCK = Path("/sys/dev/block")
SECTOR = 512  # sysfs ``size`` counts 512-byte units whatever the logical sector

INTERFACES = (
    ("nvme", "NVMe"),
    ("loop", "loop device (file-backed)"),
    ("vd", "virtio"),
    ("sd", "SCSI/SATA/SAS"),
)


@dataclass(frozen=True)
class DeviceFacts:
    path: str
    name: str = ""  # kernel name: nvme0n1, sdb, loop3
    vendor: str = ""
    model: str = ""
    firmware: str = ""
    serial: str = ""
    capacity: int = 0  # bytes
    logical_sector: int = SECTOR
    interface: str = ""
    write_cache: str = ""  # "write back" | "write through" as the kernel says
    backing_file: str = ""  # a loop device's

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def unsupported_reason(os_name: str | None = None) -> str:
    """Why the SNIA PTS cannot run on this OS (``platform.system()`` spelling; default: this one), in words
    for the user; '' on Linux. The PTS tests a raw device of the machine Fiometer runs on (its local manager),
    purges it with blkdiscard (app.engine.guards.purge) and reads its capacity, model and firmware from
    sysfs: all of them Linux's."""
    os_name = os_name or platform.system()
    if os_name == "Linux":
        return ""
    return (
        f"The SNIA PTS needs Linux, and Fiometer runs on {os_name or 'an unknown system'} here: the PTS tests "
        "a raw device of the machine Fiometer runs on, purges it with blkdiscard and reads its capacity, "
        "model and firmware from the Linux kernel (sysfs). Run Fiometer on the Linux host that has the "
        "device (this box there, or fiometer pts DEVICE)."
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return ""


def _int(text: str, default: int = 0) -> int:
    try:
        return int(text)
    except ValueError:
        return default


def device_facts(path: str, sys_dev_block: Path = SYS_DEV_BLOCK) -> DeviceFacts | None:
    """The facts of the block device at ``path``; None when it is not a block device."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    node = sys_dev_block / f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    try:
        real = node.resolve(strict=True)
    except OSError:
        return DeviceFacts(path)
    name = real.name
    dev = real / "device"
    disk = real if (real / "queue").is_dir() else real.parent  # a partition: its disk's queue and device
    return DeviceFacts(
        path=path,
        name=name,
        vendor=_read(dev / "vendor"),
        model=_read(dev / "model"),
        firmware=_read(dev / "firmware_rev") or _read(dev / "rev"),
        serial=_read(dev / "serial") or _read(real / "serial"),
        capacity=_int(_read(real / "size")) * SECTOR,
        logical_sector=_int(_read(disk / "queue" / "logical_block_size"), SECTOR),
        interface=next((words for prefix, words in INTERFACES if name.startswith(prefix)), ""),
        write_cache=_read(disk / "queue" / "write_cache"),
        backing_file=_read(real / "loop" / "backing_file"),
    )
