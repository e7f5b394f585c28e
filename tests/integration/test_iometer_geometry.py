"""Iometer's geometry from the object a target resolves to, not from its name (issue 38, item 6).

For each kind of target the job file's size=, offset= and blockalign= are compared with what Iometer's Dynamo
does (eilerjc/iometer, IOTargetDisk.cpp, TargetDisk::Set_Sizes), computed here the way Dynamo reads it:
statfs f_bsize for a test file, ioctl(BLKSSZGET) for a raw device; Maximum Disk Size 0 is an existing file's
size. "Align 0" is 512 on a file, as the traced Dynamo aligned a file on ext4, or the logical sector of the
disk under it where that is larger (direct I/O refuses less); a raw device's own logical sector.
The same targets are placed as on this machine and as on an ssh:// manager's host (the rules' modules run
in a python3 of their own, fed as ssh feeds them): one rule, one job text."""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import struct
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.engine.jobs.jobfile import JobSettings, step_jobfile
from app.engine.jobs.placement import placer
from app.engine.jobs.sequence import expand
from app.engine.remote.hold import BOOT
from app.engine.run.endpoint import ManagerEndpoint
from app.engine.run.runner import Runner, RunOptions
from app.model.plan import SpecLine, Target
from tests.helpers import grid, prepared
from tests.loop_disk import NEEDS_LOOP, detach, sh

pytestmark = [NEEDS_LOOP, pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="needs mkfs.ext4")]
BLKSSZGET = 0x1268
MiB = 1 << 20


def blksszget(dev: str) -> int:
    """A device's logical sector as Dynamo's getSectorSizeOfPhysDisk asks for it."""
    fd = os.open(dev, os.O_RDONLY)
    try:
        return struct.unpack("i", fcntl.ioctl(fd, BLKSSZGET, b"\0" * 4))[0]
    finally:
        os.close(fd)


def iometer(path: str, disk: str | None, max_sectors: int, start: int) -> dict[str, str]:
    """size/offset/blockalign as Dynamo covers the target: ``disk`` is the block device under a file's file
    system (None: none, as tmpfs), or the raw device itself when ``path`` is one."""
    if os.path.exists(path) and stat.S_ISBLK(os.stat(path).st_mode):
        sector = align = blksszget(path)
    else:
        sector = os.statvfs(os.path.dirname(path)).f_bsize  # Set_Sizes: statfs of the test file's folder
        align = max(512, blksszget(disk) if disk else 512)
    # Maximum Disk Size 0: the whole (existing) file, from the starting sector on
    size = max_sectors * sector if max_sectors else os.stat(path).st_size - start * sector
    out = {"size": str(size), "blockalign": fio_size(align)}
    if start:
        out["offset"] = str(start * sector)
    return out


def fio_size(n: int) -> str:
    return f"{n // 1024}k" if n % 1024 == 0 else str(n)


def job_lines(text: str) -> dict[str, str]:
    section = text.split("\n[m1.w1.t1]\n", 1)[1]
    return {
        k: v
        for k, _, v in (line.partition("=") for line in section.splitlines())
        if k in ("size", "offset", "blockalign")
    }


@contextmanager
def loop(tmp_path: Path, name: str, size: int, sector: int = 512) -> Iterator[str]:
    image = tmp_path / f"{name}.img"
    image.write_bytes(b"")
    os.truncate(image, size)
    dev = sh("losetup", "--find", "--show", "--sector-size", str(sector), str(image))
    try:
        yield dev
    finally:
        detach(dev)


@contextmanager
def ext4(tmp_path: Path, name: str, sector: int, block: int) -> Iterator[tuple[str, Path]]:
    with loop(tmp_path, name, 64 * MiB, sector) as dev:
        sh("mkfs.ext4", "-q", "-F", "-b", str(block), dev)
        mnt = tmp_path / f"mnt-{name}"
        mnt.mkdir()
        sh("mount", dev, str(mnt))
        try:
            yield dev, mnt
        finally:
            subprocess.run(["umount", str(mnt)], capture_output=True)


def plan_for(name: str, max_sectors: int, start: int):
    plan = grid(1, 1, 1)
    plan.specs[0].lines = [SpecLine(4096, 100, 100, 100, 0, 1, 0, 0)]  # 4 KiB random reads, align 0
    w = plan.managers[0].workers[0]
    w.targets = [Target(name)]
    w.max_size, w.start_sector = max_sectors, start
    return plan


def local_text(plan, mapping: dict[str, str]) -> str:
    return step_jobfile(
        plan, expand(plan)[0], 0, "Linux", JobSettings(mapping=mapping, place=placer(True, "Linux", "M1"))
    ).text


def ssh_text(plan, mapping: dict[str, str]) -> str:
    """The job text for an ssh:// manager whose host is this machine: its targets examined by the rules'
    modules in a python3 of their own (as ``remote.hold`` starts them over ssh)."""
    python = shutil.which("python3") or sys.executable

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [python, "-c", BOOT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def no_fio():  # the run is only prepared: no fio is reached
        raise AssertionError("no transport expected")

    ep = ManagerEndpoint("M1", "Linux", no_fio, "geometry-host", python_there=start)
    runner = prepared(Runner(plan, {"M1": ep}, options=RunOptions(run_time=1, mapping=mapping)))
    return runner.jobfiles[0]["M1"].text


def check(name: str, path: str, disk: str | None, max_sectors: int, start: int = 0) -> None:
    plan = plan_for(name, max_sectors, start)
    want = iometer(path, disk, max_sectors, start)
    mapping = {name: path} if name != path else {}
    for where, text in (("local", local_text(plan, mapping)), ("ssh://", ssh_text(plan, mapping))):
        assert job_lines(text) == want, (where, name, path, text)


def test_a_file_on_ext4_counts_the_file_systems_block_and_aligns_to_512(tmp_path):
    with ext4(tmp_path, "e4k", 512, 4096) as (dev, mnt):
        path = str(mnt / "iobw.tst")
        # the target: Iometer's name for the mount, mapped to a file on ext4 (4096-byte blocks)
        check("TARGET_DIR [ext4]", path, dev, 65536)
        want = iometer(path, dev, 65536, 0)
        assert want == {"size": str(256 * MiB), "blockalign": "512"}  # what the traced Dynamo covered
        check(path, path, dev, 2048, start=8)  # a Linux-looking name: the same rule
        check("sdb", path, dev, 100)  # a name of a raw disk, mapped to a file: still the file's geometry


def test_a_1k_block_ext4_and_a_4k_sector_disk_under_ext4(tmp_path):
    with ext4(tmp_path, "e1k", 512, 1024) as (dev, mnt):
        check("/data [ext4]", str(mnt / "iobw.tst"), dev, 1000, start=3)  # sectors of 1024 bytes
    with ext4(tmp_path, "e4kn", 4096, 4096) as (dev, mnt):
        check("/data [ext4]", str(mnt / "iobw.tst"), dev, 1000)  # "align 0" at the disk's 4096 bytes


def test_a_file_on_tmpfs(tmp_path):
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    sh("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mnt))
    try:
        check("/shm [tmpfs]", str(mnt / "iobw.tst"), None, 4096, start=1)  # f_bsize: the page, no disk: 512
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


@pytest.mark.parametrize("sector", [512, 4096])
def test_a_raw_loop_device_counts_its_logical_sector(tmp_path, sector):
    with loop(tmp_path, f"raw{sector}", 32 * MiB, sector) as dev:
        assert blksszget(dev) == sector
        check(dev, dev, None, 2048, start=16)
        check("PHYSICALDRIVE:1", dev, None, 2048)  # the name of a Windows disk, mapped: the device's sector


def test_maximum_disk_size_0_is_an_existing_files_own_size(tmp_path):
    with ext4(tmp_path, "e0", 512, 4096) as (dev, mnt):
        path = mnt / "iobw.tst"
        with open(path, "wb") as f:
            f.truncate(3 * MiB)
        check("TARGET_DIR [ext4]", str(path), dev, 0)
        assert iometer(str(path), dev, 0, 0)["size"] == str(3 * MiB)
        check("TARGET_DIR [ext4]", str(path), dev, 0, start=16)  # from the starting sector to the end
