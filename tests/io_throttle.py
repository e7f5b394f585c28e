"""Throttling a block device for the processes of one test (a knee at a known rate, for `fiometer curve`).

cgroup v2's io.max where the io controller is available on the v2 hierarchy, else cgroup v1's blkio throttle
(this machine's kernel mounts the controllers on v1, with an empty v2 hierarchy beside them). Either way a
command is started inside the cgroup (``sh -c 'echo $$ > cgroup.procs; exec ...'``) so fio, its child,
inherits the limit. Both limit the rate in slices of 100 ms: below the rate fio waits out the slice, above it
the wait grows with the queue, so p99 climbs in steps with the load."""

from __future__ import annotations

import os
import shlex
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

V2_ROOTS = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"))
V1_BLKIO = Path("/sys/fs/cgroup/blkio")


def _v2_root() -> Path | None:
    for root in V2_ROOTS:
        controllers = root / "cgroup.controllers"
        if controllers.exists() and "io" in controllers.read_text().split():
            return root
    return None


def how() -> str | None:
    """'cgroup v2 io.max', 'cgroup v1 blkio throttle', or None where neither can be used (not root)."""
    if os.geteuid() != 0:
        return None
    if _v2_root() is not None:
        return "cgroup v2 io.max"
    if (V1_BLKIO / "blkio.throttle.read_iops_device").exists():
        return "cgroup v1 blkio throttle"
    return None


NEEDS_THROTTLE = pytest.mark.skipif(how() is None, reason="needs root and cgroup io.max or blkio throttling")


def dev_numbers(dev: str) -> str:
    st = os.stat(dev)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


V1_FILES = {"riops": "read_iops", "rbps": "read_bps", "wiops": "write_iops", "wbps": "write_bps"}


@contextmanager
def throttled(
    dev: str,
    *,
    read_iops: int | None = None,
    read_bps: int | None = None,
    write_iops: int | None = None,
    write_bps: int | None = None,
) -> Iterator[Path]:
    """A cgroup whose processes read and write ``dev`` at most at these rates; yields the cgroup's folder."""
    rates = {"riops": read_iops, "rbps": read_bps, "wiops": write_iops, "wbps": write_bps}
    numbers = dev_numbers(dev)
    name = f"fiometer-test-{uuid.uuid4().hex[:8]}"
    root = _v2_root()
    if root is not None:
        subtree = root / "cgroup.subtree_control"
        if "io" not in subtree.read_text().split():
            subtree.write_text("+io")
        group = root / name
        group.mkdir()
        limits = " ".join(f"{k}={v}" for k, v in rates.items() if v)
        (group / "io.max").write_text(f"{numbers} {limits}")
    else:
        group = V1_BLKIO / name
        group.mkdir()
        for key, v1 in V1_FILES.items():
            if rates[key]:
                (group / f"blkio.throttle.{v1}_device").write_text(f"{numbers} {rates[key]}")
    try:
        yield group
    finally:
        with suppress(OSError):
            group.rmdir()


def run_in(group: Path, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
    """Run ``argv`` inside the cgroup (its children too)."""
    script = f"echo $$ > {shlex.quote(str(group / 'cgroup.procs'))} && exec {shlex.join(argv)}"
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=timeout)


def set_read_iops(group: Path, dev: str, read_iops: int) -> None:
    """Change the cgroup's read IOPS limit on ``dev`` while its processes run."""
    numbers = dev_numbers(dev)
    if (group / "io.max").exists():
        (group / "io.max").write_text(f"{numbers} riops={read_iops}")
    else:
        (group / "blkio.throttle.read_iops_device").write_text(f"{numbers} {read_iops}")


@contextmanager
def write_throttled(dev: str, write_iops: int) -> Iterator[Path]:
    """A cgroup whose processes write ``dev`` at most ``write_iops`` I/Os a second (direct I/O); yields its
    folder. The limit can be changed while they run (``set_write_iops``)."""
    name = f"fiometer-test-{uuid.uuid4().hex[:8]}"
    root = _v2_root()
    if root is not None:
        subtree = root / "cgroup.subtree_control"
        if "io" not in subtree.read_text().split():
            subtree.write_text("+io")
        group = root / name
    else:
        group = V1_BLKIO / name
    group.mkdir()
    try:
        set_write_iops(group, dev, write_iops)
        yield group
    finally:
        with suppress(OSError):
            group.rmdir()


def set_write_iops(group: Path, dev: str, write_iops: int) -> None:
    """Change the cgroup's write IOPS limit on ``dev`` while its processes run."""
    numbers = dev_numbers(dev)
    if (group / "io.max").exists():
        (group / "io.max").write_text(f"{numbers} wiops={write_iops}")
    else:
        (group / "blkio.throttle.write_iops_device").write_text(f"{numbers} {write_iops}")
