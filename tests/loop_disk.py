"""Loop devices for tests that need a real block device (root, losetup; CI runs as root)."""

from __future__ import annotations

import hashlib
import mmap
import os
import shutil
import struct
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

NEEDS_LOOP = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("losetup"), reason="needs root and losetup (CI runs as root)"
)
MiB = 1 << 20


def sh(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()


def sha(path: str | Path) -> str:
    """SHA-256 of a file or device as the disk holds it (the page cache dropped first)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        while chunk := f.read(MiB):
            h.update(chunk)
    return h.hexdigest()


def pattern(size: int) -> bytes:
    """A known, position-dependent pattern: a loop device holding it shows any write by its hash."""
    block = b"".join(b"fiometer-pattern-%08d\n" % i for i in range(4096))
    return (block * (size // len(block) + 1))[:size]


@dataclass
class Loop:
    dev: str
    backing: Path
    digest: str
    mountpoint: Path | None = None

    def intact(self) -> bool:
        return sha(self.dev) == self.digest

    @property
    def number(self) -> tuple[int, int]:
        rdev = os.stat(self.dev).st_rdev
        return os.major(rdev), os.minor(rdev)


def mount_ext4(loop: Loop, mnt: Path) -> Path:
    """Mount the ext4 on ``loop`` at ``mnt`` and put a precious file in it."""
    mnt.mkdir(exist_ok=True)
    sh("mount", loop.dev, str(mnt))
    (mnt / "precious.txt").write_text("data that must survive\n" * 1000)
    sh("sync")
    return mnt


def loop_maker(tmp_path: Path) -> Iterator[Callable[..., Loop]]:
    """Behind a test module's ``loops`` fixture: ``make(size, ext4=False, mount=True, over=None, sparse=False)``
    makes a loop device holding ``pattern`` (or an ext4, mounted with a precious file); all are unmounted and
    detached afterwards, even when the test fails."""
    made: list[Loop] = []

    def make(
        size: int = 16 * MiB,
        ext4: bool = False,
        mount: bool = True,
        over: str | None = None,
        sparse: bool = False,
    ) -> Loop:
        backing = tmp_path / f"backing{len(made)}.img"
        if sparse:  # for file systems made by the test itself
            backing.write_bytes(b"")
            os.truncate(backing, size)
        else:
            backing.write_bytes(pattern(size))
        if ext4:
            sh("mkfs.ext4", "-q", "-F", str(backing))
        dev = sh("losetup", "--find", "--show", over or str(backing))
        loop = Loop(dev, backing, "" if sparse else sha(dev))
        made.append(loop)
        if ext4 and mount:
            loop.mountpoint = mount_ext4(loop, tmp_path / f"mnt{len(made)}")
        return loop

    try:  # also when the generator is closed (a test that drives it itself): close() raises GeneratorExit here
        yield make
    finally:
        for loop in reversed(made):
            if loop.mountpoint is not None:
                subprocess.run(["umount", str(loop.mountpoint)], capture_output=True)
            subprocess.run(["losetup", "-d", loop.dev], capture_output=True)


def attach(image: Path, size: int) -> str:
    image.write_bytes(b"")
    os.truncate(image, size)
    return subprocess.run(
        ["losetup", "--find", "--show", str(image)], capture_output=True, text=True, check=True
    ).stdout.strip()


def detach(dev: str) -> None:
    subprocess.run(["losetup", "-d", dev], capture_output=True)


def loop_device_in(tmp_path: Path) -> Iterator[str]:
    """Behind a test module's ``loop_device`` fixture: a 64 MiB loop device (its image in tmp_path),
    detached after the test."""
    dev = attach(tmp_path / "loop.img", 64 << 20)
    try:
        yield dev
    finally:
        detach(dev)


@contextmanager
def mounted_ext4(tmp_path: Path, size: int = 96 << 20) -> Iterator[tuple[str, Path]]:
    """A file system of its own on a loop device, mounted at tmp_path/mnt: its disk counters see only the
    test's I/O. Yields (device, mount point); unmounts and detaches after."""
    dev = attach(tmp_path / "disk.img", size)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True)
        subprocess.run(["mount", dev, str(mnt)], check=True, capture_output=True)
        try:
            yield dev, mnt
        finally:
            subprocess.run(["umount", str(mnt)], capture_output=True)
    finally:
        detach(dev)


def kernel_stat(dev: str) -> dict[str, int]:
    """The kernel's counters of a disk (/sys/block/NAME/stat), as iostat reads them."""
    f = [int(x) for x in Path(f"/sys/block/{os.path.basename(dev)}/stat").read_text().split()]
    return {
        "reads": f[0],
        "read_ticks": f[3],
        "writes": f[4],
        "write_ticks": f[7],
        "io_ticks": f[9],
        "in_queue": f[10],
    }


@contextmanager
def kernel_delta(dev: str, every: float = 0.02) -> Iterator[dict[str, int]]:
    """The kernel's counters of a disk over the block, as a dict filled in when the block ends.

    Linux adds a disk's whole idle time to io_ticks when two requests race to start after an idle
    spell (seen here: 5 to 54 s of "busy" in a 5-s run with two workers, about one run in five). A direct
    4 KiB read every ``every`` seconds keeps the idle spells short, so io_ticks stays a reference; the
    reads themselves are a few hundred against the run's hundreds of thousands."""
    stop = threading.Event()

    def keep_awake() -> None:
        fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
        buf = mmap.mmap(-1, 4096)  # page-aligned, as O_DIRECT needs
        try:
            while True:
                os.preadv(fd, [buf], 0)
                if stop.wait(every):
                    return
        finally:
            os.close(fd)
            buf.close()

    awake = threading.Thread(target=keep_awake, daemon=True)
    awake.start()
    delta: dict[str, int] = {}
    try:
        stop.wait(2 * every)  # the last idle spell ends before the first reading
        before = kernel_stat(dev)
        yield delta
        after = kernel_stat(dev)
        delta.update({k: after[k] - before[k] for k in after})
    finally:
        stop.set()
        awake.join()


def partitioned_image(image: Path, size: int = 32 * MiB) -> None:
    """A sparse disk image with an MBR naming one Linux partition from 1 MiB to the end."""
    image.write_bytes(b"")
    os.truncate(image, size)
    mbr = bytearray(512)
    mbr[446:462] = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", 2048, size // 512 - 2048)
    mbr[510:512] = b"\x55\xaa"
    with open(image, "r+b") as f:
        f.write(mbr)


def attach_partitioned(what: str) -> tuple[str, str]:
    """(loop device, its first partition's node) for an image or device with a partition table. The kernel's
    partition scan of a new loop device can miss (seen here for a second loop on an image): partx asks again."""
    dev = sh("losetup", "--find", "--show", "--partscan", what)
    part = f"{dev}p1"
    if not os.path.exists(part):
        subprocess.run(["partx", "--add", dev], capture_output=True)
    if not os.path.exists(part):
        detach(dev)
        pytest.skip(f"the kernel made no partition node for {dev}")
    return dev, part
