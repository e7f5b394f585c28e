"""What a report must say about where a run was measured, collected when the run starts.

``machine_facts()``: this machine (host name, OS and kernel, CPU model and count, memory).
``target_facts(path)``: for a local test file or device, what lies under it - the file system and its mount
options, the block device's model and size, its I/O scheduler - where the OS tells (Linux: /proc and /sys).
A remote manager is described by what its fio server says in the probe reply (``probe_facts``): Fiometer
cannot look at a remote file system. Every reader is best effort: a fact that cannot be read is left out,
never guessed, and nothing here raises.
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from app.engine.devices.disks import disk_of

SYS_BLOCK_NAMES = Path("/sys/block")
MOUNTINFO = Path("/proc/self/mountinfo")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _os_release() -> str:
    for line in _read(Path("/etc/os-release")).splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return ""


def cpu_model() -> str:
    if sys.platform.startswith("linux"):
        for line in _read(Path("/proc/cpuinfo")).splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return " ".join(line.split(":", 1)[1].split())
    if sys.platform == "darwin":
        try:
            return subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True, timeout=2
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    return platform.processor()


def memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        pass
    if sys.platform == "win32":
        import ctypes

        class MemoryStatus(ctypes.Structure):
            _fields_ = [
                ("length", ctypes.c_ulong),
                ("load", ctypes.c_ulong),
                ("total", ctypes.c_ulonglong),
                ("avail", ctypes.c_ulonglong),
                ("page_total", ctypes.c_ulonglong),
                ("page_avail", ctypes.c_ulonglong),
                ("virtual_total", ctypes.c_ulonglong),
                ("virtual_avail", ctypes.c_ulonglong),
                ("extended", ctypes.c_ulonglong),
            ]

        status = MemoryStatus()
        status.length = ctypes.sizeof(MemoryStatus)
        if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore[attr-defined]
            return int(status.total)
    return None


def machine_facts() -> dict[str, Any]:
    """This machine, as a report states it."""
    facts: dict[str, Any] = {
        "hostname": socket.gethostname(),
        "os": platform.system(),
        "kernel": platform.release(),
        "arch": platform.machine(),
        "cpus": os.cpu_count(),
    }
    distro = _os_release() if sys.platform.startswith("linux") else platform.version()
    if distro:
        facts["os_release"] = distro
    model = cpu_model()
    if model:
        facts["cpu_model"] = model
    mem = memory_bytes()
    if mem:
        facts["memory_bytes"] = mem
    return facts


def probe_facts(hostname: str, os_name: str, arch: str, cpus: int) -> dict[str, Any]:
    """A remote fio server's own description (its probe reply): all it tells."""
    return {"hostname": hostname, "os": os_name, "arch": arch, "cpus": cpus}


# --- targets (Linux) ---------------------------------------------------------------------------------------
def _unescape(field: str) -> str:
    """mountinfo escapes blanks as octal (\\040)."""
    return field.encode().decode("unicode_escape") if "\\" in field else field


def mount_of(dev: int) -> dict[str, str] | None:
    """The mount whose file system has device number ``dev``: mount point, type, source and options."""
    want = f"{os.major(dev)}:{os.minor(dev)}"
    for line in _read(MOUNTINFO).splitlines():
        left, _, right = line.partition(" - ")
        f, r = left.split(), right.split()
        if len(f) >= 6 and len(r) >= 2 and f[2] == want:
            opts = ",".join(dict.fromkeys(f[5].split(",") + (r[2].split(",") if len(r) > 2 else [])))
            return {
                "mount_point": _unescape(f[4]),
                "fs_type": r[0],
                "source": _unescape(r[1]),
                "mount_options": opts,
            }
    return None


def _scheduler(text: str) -> str:
    """'mq-deadline [none]' -> 'none'."""
    for word in text.split():
        if word.startswith("["):
            return word.strip("[]")
    return text


# The block queue's settings that change what reaches the disk (request size, queue, read-ahead).
QUEUE_SETTINGS = ("max_sectors_kb", "nr_requests", "read_ahead_kb")


def queue_settings(node: Path) -> str:
    """ "max_sectors_kb 512, nr_requests 256, read_ahead_kb 128, queue_depth 32" (those the disk has)."""
    found = [(k, _read(node / "queue" / k)) for k in QUEUE_SETTINGS]
    found.append(("queue_depth", _read(node / "device" / "queue_depth")))
    return ", ".join(f"{k} {v}" for k, v in found if v.isdigit())


def disk_facts(disk: str, sys_block: Path = SYS_BLOCK_NAMES) -> dict[str, Any]:
    """Model, size, I/O scheduler and kind of a disk by its kernel name (``disks.disk_of`` finds it)."""
    node = sys_block / disk
    if not node.exists():
        return {}
    facts: dict[str, Any] = {"device": disk}
    size = _read(node / "size")
    if size.isdigit():
        facts["device_size_bytes"] = int(size) * 512
    vendor = _read(node / "device" / "vendor")
    model = " ".join(
        x for x in (vendor if not vendor.startswith("0x") else "", _read(node / "device" / "model")) if x
    )
    if not model and _read(node / "device" / "modalias").startswith("virtio"):
        model = "virtio disk (virtual machine)"
    if model:
        facts["device_model"] = model
    sched = _read(node / "queue" / "scheduler")
    if sched:
        facts["scheduler"] = _scheduler(sched)
    queue = queue_settings(node)
    if queue:
        facts["queue_settings"] = queue
    rot = _read(node / "queue" / "rotational")
    if rot in ("0", "1"):
        facts["rotational"] = rot == "1"
    return facts


def target_facts(path: str) -> dict[str, Any]:
    """What lies under a local test file or device (the file need not exist yet: its folder is looked at)."""
    if not path or not sys.platform.startswith("linux"):
        return {}
    p = Path(path)
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        st = p.stat()
    except OSError:
        return {}
    import stat

    disk = disk_of(str(p))
    device = disk_facts(disk) if disk else {}
    if stat.S_ISBLK(st.st_mode):
        return {"kind": "block device", **device}
    facts: dict[str, Any] = {"kind": "file"}
    mount = mount_of(st.st_dev)
    if mount:
        facts.update(mount)
    facts.update(device)
    return facts
