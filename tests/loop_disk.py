"""Loop devices for tests that need a real block device (root, losetup; CI runs as root)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

NEEDS_LOOP = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("losetup"),
                                reason="needs root and losetup (CI runs as root)")


def attach(image: Path, size: int) -> str:
    image.write_bytes(b"")
    os.truncate(image, size)
    return subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True, text=True,
                          check=True).stdout.strip()


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


def kernel_stat(dev: str) -> dict[str, int]:
    """The kernel's counters of a disk (/sys/block/NAME/stat), as iostat reads them."""
    f = [int(x) for x in Path(f"/sys/block/{os.path.basename(dev)}/stat").read_text().split()]
    return {"reads": f[0], "read_ticks": f[3], "writes": f[4], "write_ticks": f[7], "io_ticks": f[9],
            "in_queue": f[10]}
