"""An ssh:// manager gets the local target checks on its host, over SSH (issue 25): links resolved,
file types, and block devices in use as the kernel sees it (mounts, an exclusive open). The "remote
host" is the network namespace of tests/integration/test_ssh_manager.py (same files, its own sshd)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.engine.transports.ssh_manager import SSH_ENV
from app.model import planfile
from app.model.plan import SpecLine, Target
from tests.helpers import grid, prepared
from tests.integration.test_ssh_manager import pytestmark as ssh_marks
from tests.integration.test_ssh_manager import ssh_namespace  # noqa: F401 - the fixture
from tests.loop_disk import NEEDS_LOOP, attach, detach

pytestmark = ssh_marks


def run_over_ssh(
    config: Path, tmp_path: Path, target: str, reads: int, *extra: str
) -> subprocess.CompletedProcess:
    plan = grid(1, 1, 1, qd=2)
    plan.specs[0].lines = [SpecLine(4096, 100, reads, 100, 0, 1, 4096, 0)]
    plan.managers[0].host = None
    plan.managers[0].workers[0].targets = [Target(target)]
    path = tmp_path / "plan.json"
    planfile.save(plan, path)
    env = {**os.environ, SSH_ENV: f"ssh -F {config}"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(tmp_path / "r.db"),
            "run",
            str(path),
            "--manager",
            "M1=ssh://fiometer-remote",
            "--run-time",
            "1",
            "--test-file-size",
            "1M",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )


def test_a_link_on_the_remote_host_is_resolved_and_refused(ssh_namespace, tmp_path):  # noqa: F811
    config, _ns = ssh_namespace
    victim = tmp_path / "victim.bin"
    victim.write_bytes(b"v" * (3 << 20))
    link = tmp_path / "t.tst"
    link.symlink_to(victim)
    done = run_over_ssh(config, tmp_path, str(link), 0, "--allow-write", str(link))
    assert done.returncode != 0
    assert f"leads to {victim} on that host (a link)" in done.stderr, done.stderr
    assert victim.read_bytes() == b"v" * (3 << 20)


@NEEDS_LOOP
@pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="needs mkfs.ext4")
def test_a_mounted_device_on_the_remote_host_needs_the_second_override(ssh_namespace, tmp_path):  # noqa: F811
    config, _ns = ssh_namespace
    dev = attach(tmp_path / "disk.img", 16 << 20)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        subprocess.run(["mkfs.ext4", "-q", dev], check=True, capture_output=True)
        before = (tmp_path / "disk.img").read_bytes()
        # read-only, so the file system itself writes nothing: every byte must stay as it is
        subprocess.run(["mount", "-o", "ro,noload", dev, str(mnt)], check=True, capture_output=True)
        try:
            done = run_over_ssh(config, tmp_path, dev, 0, "--allow-write", dev)
            assert done.returncode != 0
            assert "is in use" in done.stderr and f"mounted at {mnt}" in done.stderr, done.stderr
            assert "--allow-write-mounted" in done.stderr
            os.sync()
            assert (tmp_path / "disk.img").read_bytes() == before
        finally:
            subprocess.run(["umount", str(mnt)], capture_output=True)
    finally:
        detach(dev)


def test_an_armed_file_swapped_after_the_check_stops_the_step(ssh_namespace, tmp_path, monkeypatch):  # noqa: F811
    """The race, driven deterministically: an armed foreign file is checked, then replaced by another
    object under the same name before the step starts (here another file; a device node is the same
    case): the step fails before fio starts, and neither is written."""
    from app.engine.run.managers import build_endpoints
    from app.engine.run.runner import Runner, RunOptions

    config, _ns = ssh_namespace
    monkeypatch.setenv(SSH_ENV, f"ssh -F {config}")
    target = tmp_path / "armed.bin"
    target.write_bytes(b"a" * (3 << 20))
    plan = grid(1, 1, 1, qd=2)
    plan.specs[0].lines = [SpecLine(4096, 100, 0, 100, 0, 1, 4096, 0)]
    plan.managers[0].host = "ssh://fiometer-remote"
    plan.managers[0].workers[0].targets = [Target(str(target))]
    endpoints = build_endpoints(plan)
    runner = prepared(
        Runner(plan, endpoints, options=RunOptions(run_time=1, file_size=1 << 20, allow_write={str(target)}))
    )
    target.rename(tmp_path / "old.bin")
    target.write_bytes(b"b" * (3 << 20))  # a new inode under the armed name
    assert runner.run() == "failed"
    reason = runner.outcomes[0].finished["M1"].reason
    assert "changed since it was checked" in reason and "nothing was written" in reason, reason
    assert target.read_bytes() == b"b" * (3 << 20)
    assert (tmp_path / "old.bin").read_bytes() == b"a" * (3 << 20)


@pytest.fixture
def loops(tmp_path):
    from tests.loop_disk import loop_maker

    yield from loop_maker(tmp_path)


def two_steps(target: str, reads: int = 0):
    plan = grid(1, 1, 1, qd=2, specs=("S1", "S2"))
    for spec in plan.specs:
        spec.lines = [SpecLine(4096, 100, reads, 100, 0, 1, 4096, 0)]
    plan.managers[0].host = "ssh://fiometer-remote"
    plan.managers[0].workers[0].targets = [Target(target)]
    return plan


@NEEDS_LOOP
@pytest.mark.parametrize("here", ["Linux", "an OS whose own targets are not held (Windows, macOS)"])
def test_a_test_file_swapped_for_a_link_to_a_disk_right_before_fio_starts_is_not_followed(
    ssh_namespace,  # noqa: F811
    tmp_path,
    monkeypatch,
    loops,
    here,
):
    """Issue 36's ssh:// row: a 2-step plan on a new test file; after step 2's checks, right before fio
    starts (before_fio_start), the file is removed and its name made a link to a loop device holding a
    pattern. fio opens what the process on that host holds (/proc/<pid>/fd/N), not the name: the disk
    keeps every byte, unarmed. So also when Fiometer itself runs where it holds no local targets (on
    Windows or macOS the ssh:// host's hold was skipped with the local one, and fio followed the link)."""
    from app.engine.run import step_targets
    from app.engine.run.managers import build_endpoints
    from app.engine.run.runner import RunListener, Runner, RunOptions

    config, _ns = ssh_namespace
    monkeypatch.setenv(SSH_ENV, f"ssh -F {config}")
    if here != "Linux":
        monkeypatch.setattr(step_targets, "holds_here", lambda: False)
    disk = loops()
    target = tmp_path / "f.tst"
    swapped: list[int] = []
    texts: list[str] = []

    def swap(step) -> None:
        if step.index == 1:
            target.unlink()
            target.symlink_to(disk.dev)
            swapped.append(step.index)

    class Texts(RunListener):
        def step_started(self, step, jobfiles) -> None:
            texts.append(jobfiles["M1"].text)

    plan = two_steps(str(target))
    runner = prepared(
        Runner(
            plan,
            build_endpoints(plan),
            Texts(),
            RunOptions(run_time=1, file_size=1 << 20, before_fio_start=swap),
        )
    )
    status = runner.run()
    assert swapped == [1], "the swap was not performed in the window"
    assert disk.intact(), "fio followed the planted link to the disk"
    assert status == "complete", [o.finished["M1"].reason for o in runner.outcomes]
    assert target.is_symlink()  # the planted link is left as it is; nothing was written through it


def test_a_test_file_rewritten_in_place_is_foreign_again(ssh_namespace, tmp_path):  # noqa: F811
    """Fiometer's own test file there, rewritten in place by another program (its size kept): the change
    time moved, so the next run refuses to write it unarmed, and the data stays."""
    config, _ns = ssh_namespace
    target = tmp_path / "own.tst"
    done = run_over_ssh(config, tmp_path, str(target), 0)
    assert done.returncode == 0, done.stderr
    assert run_over_ssh(config, tmp_path, str(target), 0).returncode == 0  # its own: no arming
    with open(target, "r+b") as f:  # dd conv=notrunc
        f.write(b"precious" * 8192)
    data = target.read_bytes()
    done = run_over_ssh(config, tmp_path, str(target), 0)
    assert done.returncode != 0 and "did not create it (or it changed since)" in done.stderr, done.stderr
    assert target.read_bytes() == data


@NEEDS_LOOP
@pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="needs mkfs.ext4")
def test_a_test_file_that_backs_a_mounted_loop_is_in_use(ssh_namespace, tmp_path):  # noqa: F811
    """Fiometer's own test file there now backs a mounted file system (losetup, mkfs, mount): the next run
    refuses it unarmed, and armed once (the second override is required); the file system stays whole."""
    config, _ns = ssh_namespace
    target = tmp_path / "own.tst"
    done = run_over_ssh(config, tmp_path, str(target), 0, "--test-file-size", "16M")
    assert done.returncode == 0, done.stderr
    subprocess.run(["mkfs.ext4", "-q", "-F", str(target)], check=True, capture_output=True)
    dev = subprocess.run(
        ["losetup", "--find", "--show", str(target)], check=True, capture_output=True, text=True
    ).stdout.strip()
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        subprocess.run(["mount", dev, str(mnt)], check=True, capture_output=True)
        (mnt / "precious.txt").write_text("keep me\n" * 1000)
        subprocess.run(["umount", str(mnt)], check=True)
        subprocess.run(["mount", "-o", "ro,noload", dev, str(mnt)], check=True, capture_output=True)
        before = target.read_bytes()
        for extra in ((), ("--allow-write", str(target))):
            done = run_over_ssh(config, tmp_path, str(target), 0, "--test-file-size", "16M", *extra)
            assert done.returncode != 0, done.stdout
            assert f"backing file of {dev}" in done.stderr, done.stderr
        assert "--allow-write-mounted" in done.stderr
        assert target.read_bytes() == before
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
        detach(dev)


@NEEDS_LOOP
@pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="needs mkfs.ext4")
def test_loops_stacked_on_a_mounted_loop_need_the_second_override_there(ssh_namespace, tmp_path, loops):  # noqa: F811
    """Armed once over ssh:// (issue 36.3, as locally): a loop device over a mounted loop device, a second
    loop on a mounted loop's image file, one 1 MiB into that image, and the image file itself are in use on
    that host (the local stack rules run there): each refused naming the stack, the file system whole."""
    config, _ns = ssh_namespace
    fs = loops(ext4=True)
    over = loops(over=fs.dev).dev
    same_image = loops(over=str(fs.backing)).dev
    offset = subprocess.run(
        ["losetup", "--find", "--show", "-o", str(1 << 20), str(fs.backing)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    try:
        for target, words in (
            (over, f"its backing device {fs.number[0]}:{fs.number[1]} is in use (mounted at {fs.mountpoint}"),
            (same_image, f"its backing file also backs {fs.dev}"),
            (offset, f"its backing file also backs {fs.dev}"),
            (str(fs.backing), f"backing file of {fs.dev}"),
        ):
            done = run_over_ssh(config, tmp_path, target, 0, "--allow-write", target)
            assert done.returncode != 0 and "is in use" in done.stderr, (target, done.stderr)
            assert words in done.stderr and "--allow-write-mounted" in done.stderr, (target, done.stderr)
    finally:
        detach(offset)
    subprocess.run(["umount", str(fs.mountpoint)], check=True)
    fs.mountpoint = None
    fsck = subprocess.run(["e2fsck", "-n", "-f", fs.dev], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def test_an_ssh_manager_gets_no_plain_server_warning(ssh_namespace, tmp_path):  # noqa: F811
    config, _ns = ssh_namespace
    done = run_over_ssh(config, tmp_path, str(tmp_path / "new.tst"), 0)
    assert done.returncode == 0, done.stderr
    assert "plain fio --server" not in done.stdout + done.stderr
    assert "cannot verify" not in done.stdout + done.stderr


@NEEDS_LOOP
@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare")
def test_a_device_mounted_only_in_another_mount_namespace_there_is_refused_by_its_kernel(
    ssh_namespace,  # noqa: F811
    tmp_path,
    loops,
):
    """Armed once over ssh://: an ext4 mounted in a mount namespace of its own on that host, invisible to
    every mount table Fiometer reads there; the process holding the targets opens the device exclusively,
    the kernel refuses (EBUSY), and nothing is written."""
    config, _ns = ssh_namespace
    fs = loops(ext4=True, mount=False)
    mnt = tmp_path / "elsewhere"
    mnt.mkdir()
    other = subprocess.Popen(
        [
            "unshare",
            "-m",
            "--propagation",
            "private",
            "sh",
            "-c",
            f"mount {fs.dev} {mnt} && echo mounted && read x",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "mounted"
        assert not os.path.ismount(mnt)
        done = run_over_ssh(config, tmp_path, fs.dev, 0, "--allow-write", fs.dev)
        assert done.returncode != 0, done.stdout
        assert "EBUSY" in done.stdout + done.stderr and "nothing was written" in done.stdout + done.stderr, (
            done.stdout + done.stderr
        )
    finally:
        other.communicate("\n", timeout=30)
    fsck = subprocess.run(["e2fsck", "-n", "-f", fs.dev], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


@NEEDS_LOOP
@pytest.mark.skipif(shutil.which("partx") is None, reason="needs partx")
def test_a_partition_of_a_second_loop_on_a_mounted_image_is_in_use_there(ssh_namespace, tmp_path):  # noqa: F811
    """Armed once over ssh://: partition 1 of a second loop device on a disk image whose partition 1 is
    mounted is that file system; refused there as in use, the file system whole."""
    from tests.loop_disk import attach_partitioned, partitioned_image, sh

    config, _ns = ssh_namespace
    image = tmp_path / "disk.img"
    partitioned_image(image)
    made: list[str] = []
    mnt = tmp_path / "mnt"
    try:
        disk, part = attach_partitioned(str(image))
        made.append(disk)
        sh("mkfs.ext4", "-q", part)
        mnt.mkdir()
        sh("mount", part, str(mnt))
        (mnt / "precious.txt").write_text("keep me\n" * 1000)
        other, other_part = attach_partitioned(str(image))
        made.append(other)
        done = run_over_ssh(config, tmp_path, other_part, 0, "--allow-write", other_part)
        assert done.returncode != 0 and "is in use" in done.stderr, done.stderr
        assert f"on {other}: its backing file also backs {disk}" in done.stderr, done.stderr
        sh("umount", str(mnt))
        fsck = subprocess.run(["e2fsck", "-n", "-f", part], capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
        for dev in reversed(made):
            detach(dev)
