"""What fio opens is what was checked, for the whole run: attacks between the check and fio's start, as root, on
loop devices holding a known pattern, with real fio (psync).

The races are driven through ``RunOptions.before_fio_start`` (called after the step's targets were checked and
opened, right before fio starts) and through the listener between steps, never through sleeps. After every
attack the devices are compared byte for byte with their pattern (a mounted ext4: ``e2fsck -n`` and its file).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from app.engine.guards.safety import CreatedFiles
from app.engine.jobs.placement import place_local
from app.engine.jobs.sequence import Step
from app.engine.run.managers import local_endpoint
from app.engine.run.runner import RunListener, Runner, RunOptions, RunRefused, StepOutcome
from app.model.plan import SpecLine, Target
from tests.helpers import grid, prepared
from tests.loop_disk import Loop, MiB, loop_maker, mount_ext4, pattern, sh

TOOLS = ("losetup", "mkfs.ext4", "e2fsck", "mount", "umount", "unshare", "fio")

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root: creates loop devices and mounts ext4"),
    pytest.mark.skipif(any(shutil.which(t) is None for t in TOOLS), reason="needs " + ", ".join(TOOLS)),
]


@pytest.fixture
def loops(tmp_path):
    """Make loop devices (a pattern, or an ext4 with a file); all are unmounted and detached afterwards."""
    yield from loop_maker(tmp_path)


def fs_intact(loop: Loop) -> None:
    """The ext4 on ``loop`` is unmounted, passes e2fsck -n and still holds its file."""
    if loop.mountpoint is not None:
        sh("umount", str(loop.mountpoint))
        loop.mountpoint = None
    fsck = subprocess.run(["e2fsck", "-n", "-f", loop.dev], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


class Steps(RunListener):
    def __init__(self, between: Callable[[int], None] | None = None):
        self.between = between
        self.outcomes: list[StepOutcome] = []
        self.errors: list[str] = []

    def message(self, step, message) -> None:
        if message.level == "error":
            self.errors.append(message.text)

    def step_finished(self, outcome: StepOutcome) -> None:
        self.outcomes.append(outcome)
        if self.between is not None:
            self.between(outcome.step.index)


def plan_for(target: str, reads: tuple[int, ...] = (0, 0)):
    """One worker on ``target``, one step per entry of ``reads`` (its read percentage)."""
    names = tuple(f"S{i}" for i in range(len(reads)))
    plan = grid(1, 1, 1, specs=names)
    for spec, r in zip(plan.specs, reads, strict=True):
        spec.lines = [SpecLine(4096, 100, r, 100)]
    plan.managers[0].workers[0].targets = [Target("T1", path=target)]
    return plan


def runner(
    tmp_path: Path,
    target: str,
    listener: Steps,
    *,
    reads=(0, 0),
    allow=(),
    allow_in_use=(),
    hook: Callable[[Step], None] | None = None,
    file_size: int = 2 * MiB,
    **options,
) -> Runner:
    registry = CreatedFiles(tmp_path / "created.json")
    opts = RunOptions(
        run_time=1,
        file_size=file_size,
        registry=registry,
        allow_write=set(allow),
        allow_write_in_use=set(allow_in_use),
        before_fio_start=hook,
        **options,
    )
    return prepared(Runner(plan_for(target, reads), {"M1": local_endpoint("M1")}, listener, opts))


def swap_for_link(path: Path, to: str) -> None:
    tmp = path.with_name(path.name + ".planted")
    tmp.symlink_to(to)
    os.replace(tmp, path)


# --- 1. what fio opens is what was checked -----------------------------------------------------------------
def test_a_test_file_replaced_by_a_link_to_a_disk_between_steps_stops_the_run(tmp_path, loops):
    disk = loops()
    target = tmp_path / "iobw.tst"
    steps = Steps(between=lambda i: swap_for_link(target, disk.dev) if i == 0 else None)
    status = runner(tmp_path, str(target), steps).run()
    assert status == "failed"
    assert [o.status for o in steps.outcomes] == ["complete", "failed"]
    assert f"now leads to {disk.dev}" in steps.errors[0] and "nothing was written" in steps.errors[0]
    assert disk.intact()


def test_a_link_to_a_disk_planted_after_the_check_is_not_followed_by_fio(tmp_path, loops):
    """The symlink lands between the check and fio's start (the job file exists then): fio writes the test
    file it was handed, the disk keeps its pattern, and the name, now a link, is not adopted."""
    disk = loops()
    target = tmp_path / "iobw.tst"
    planted: list[int] = []

    def plant(step: Step) -> None:
        assert target.is_file() and not target.is_symlink()  # Fiometer created and laid it out
        swap_for_link(target, disk.dev)
        planted.append(step.index)

    steps = Steps()
    status = runner(tmp_path, str(target), steps, reads=(0,), hook=plant).run()
    assert planted == [0]
    assert status == "complete", steps.errors  # complete: fio did I/O (a step without any fails)
    assert disk.intact()
    assert target.is_symlink()
    assert not CreatedFiles(tmp_path / "created.json").owns(place_local(str(target)))


def test_a_mounted_file_systems_device_reached_through_a_planted_link_is_never_written(tmp_path, loops):
    fs = loops(ext4=True)
    target = tmp_path / "iobw.tst"
    steps = Steps()
    status = runner(
        tmp_path, str(target), steps, reads=(0,), hook=lambda step: swap_for_link(target, fs.dev)
    ).run()
    assert status == "complete"
    assert (fs.mountpoint / "precious.txt").read_text().startswith("data that must survive")
    fs_intact(fs)


def test_an_armed_file_that_became_a_device_node_between_steps_is_not_written(tmp_path, loops):
    """Armed as a file (by name, as --allow-write does): the arming holds for that file only."""
    disk = loops()
    target = tmp_path / "precious.bin"
    target.write_bytes(pattern(2 * MiB))

    def become_device(index: int) -> None:
        if index == 0:
            target.unlink()
            os.mknod(target, 0o600 | stat.S_IFBLK, os.makedev(*disk.number))

    steps = Steps(between=become_device)
    status = runner(tmp_path, str(target), steps, allow={"T1"}).run()
    assert status == "failed"
    assert "changed since it was checked" in steps.errors[0] and "block device" in steps.errors[0]
    assert disk.intact()


def test_a_confirmed_file_that_became_a_device_node_before_start_is_refused(tmp_path, loops):
    """The window's confirmation arms the object it showed (``armed_objects``); Start checks it again."""
    disk = loops()
    target = tmp_path / "precious.bin"
    target.write_bytes(pattern(2 * MiB))
    with pytest.raises(RunRefused) as refused:
        runner(tmp_path, str(target), Steps())
    (risk,) = refused.value.risks
    assert risk.obj is not None and risk.obj[0] == "file"
    target.unlink()  # while the question was on screen
    os.mknod(target, 0o600 | stat.S_IFBLK, os.makedev(*disk.number))
    with pytest.raises(RunRefused) as again:
        runner(tmp_path, str(target), Steps(), allow={risk.path}, armed_objects={risk.path: risk.obj})
    assert "changed after you confirmed" in str(again.value)
    assert disk.intact()


def test_a_device_written_through_its_descriptor_is_really_written(tmp_path, loops):
    """The other side: an armed device is written through /proc/self/fd/N (fio takes it as a block device)."""
    disk = loops()
    steps = Steps()
    status = runner(tmp_path, disk.dev, steps, reads=(0,), allow={"T1"}, file_size=MiB).run()
    assert status == "complete", steps.errors
    assert not disk.intact()


# --- 2. in use as the kernel sees it ------------------------------------------------------------------------
def test_a_loop_device_under_another_loop_device_is_in_use(tmp_path, loops):
    lower = loops()
    upper = loops(over=lower.dev)
    with pytest.raises(RunRefused) as refused:
        runner(tmp_path, lower.dev, Steps(), allow={"T1"})
    assert f"backing device of /dev/{os.path.basename(upper.dev)}" in str(refused.value)
    assert lower.intact()


def test_the_backing_file_of_a_mounted_loop_device_is_in_use(tmp_path, loops):
    fs = loops(ext4=True)
    with pytest.raises(RunRefused) as refused:
        runner(tmp_path, str(fs.backing), Steps(), allow={"T1"})
    assert f"backing file of {fs.dev}" in str(refused.value) and "--allow-write-mounted" in str(refused.value)
    fs_intact(fs)


def stacked_on(fs: Loop, how: str, loops) -> str:
    """A loop device over the mounted ext4 ``fs``: over its device, over its image file, or 1 MiB into it."""
    if how == "over the mounted device":
        return loops(over=fs.dev).dev
    if how == "on the same image file":
        return loops(over=str(fs.backing)).dev
    dev = sh("losetup", "--find", "--show", "-o", str(MiB), str(fs.backing))
    stacked_on.extra.append(dev)  # type: ignore[attr-defined]
    return dev


stacked_on.extra = []  # type: ignore[attr-defined]


@pytest.mark.parametrize("how", ["over the mounted device", "on the same image file", "1 MiB into the image"])
def test_a_loop_device_stacked_on_a_mounted_file_system_is_in_use(tmp_path, loops, how):
    """Issue 36.3: writing a loop device writes what backs it. A loop over a mounted loop device, a second
    loop on a mounted loop's image file, or one at an offset into it, is in use: armed once it is refused
    (the second override is required) and the file system stays whole; armed twice it is the user's word."""
    fs = loops(ext4=True)
    try:
        upper = stacked_on(fs, how, loops)
        with pytest.raises(RunRefused) as refused:
            runner(tmp_path, upper, Steps(), allow={"T1"})
        text = str(refused.value)
        assert "is in use" in text and "--allow-write-mounted" in text, text
        assert (
            ("its backing device" in text)
            if how == "over the mounted device"
            else (f"its backing file also backs {fs.dev}" in text)
        ), text
        fs_intact(fs)
    finally:
        for dev in stacked_on.extra:  # type: ignore[attr-defined]
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        stacked_on.extra.clear()  # type: ignore[attr-defined]


def test_a_loop_over_an_unused_loop_is_not_in_use(tmp_path, loops):
    """The stack rule does not make every loop device busy: one over a loop device nothing uses is armed
    once, and written through its descriptor."""
    lower = loops()
    upper = loops(over=lower.dev)
    listener = Steps()
    assert runner(tmp_path, upper.dev, listener, reads=(0,), allow={"T1"}).run() == "complete", (
        listener.errors
    )
    assert not lower.intact()


def test_an_ext4_mounted_only_in_another_mount_namespace_is_refused_by_the_kernel(tmp_path, loops):
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
        assert other.stdout.readline().strip() == "mounted"
        assert not os.path.ismount(mnt)  # invisible here: only the kernel knows
        steps = Steps()
        status = runner(tmp_path, fs.dev, steps, reads=(0,), allow={"T1"}).run()
        assert status == "failed"
        assert "EBUSY" in steps.errors[0] and "another mount namespace" in steps.errors[0]
    finally:
        other.communicate("\n", timeout=30)
    fs_intact(fs)


def test_a_device_mounted_between_steps_is_not_written_and_cannot_be_mounted_while_held(tmp_path, loops):
    fs = loops(ext4=True, mount=False)
    mnt = tmp_path / "later"
    tried: list[str] = []

    def mount_during_hold(step: Step) -> None:  # Fiometer holds it exclusively: the kernel refuses the mount
        if step.index == 1:
            mnt.mkdir(exist_ok=True)
            tried.append(subprocess.run(["mount", fs.dev, str(mnt)], capture_output=True, text=True).stderr)

    def mount_between(index: int) -> None:
        if index == 0:
            fs.mountpoint = mount_ext4(fs, tmp_path / "between")

    steps = Steps(between=mount_between)
    status = runner(tmp_path, fs.dev, steps, reads=(100, 0), allow={"T1"}, hook=mount_during_hold).run()
    assert status == "failed"
    assert [o.status for o in steps.outcomes] == ["complete", "failed"]
    assert "in use now (mounted at" in steps.errors[0]
    assert tried == []  # step 2 never reached fio's start
    fs_intact(fs)


def test_a_device_held_for_writing_cannot_be_mounted_meanwhile(tmp_path, loops):
    fs = loops(ext4=True, mount=False)
    mnt = tmp_path / "meanwhile"
    mnt.mkdir()
    tried: list[subprocess.CompletedProcess] = []
    steps = Steps()
    status = runner(
        tmp_path,
        fs.dev,
        steps,
        reads=(0,),
        allow={"T1"},
        file_size=MiB,
        hook=lambda step: tried.append(
            subprocess.run(["mount", fs.dev, str(mnt)], capture_output=True, text=True)
        ),
    ).run()
    mounted = os.path.ismount(mnt)
    if mounted:
        subprocess.run(["umount", str(mnt)], capture_output=True)
    assert status == "complete", steps.errors
    (mount,) = tried
    assert mount.returncode != 0 and not mounted, mount.stderr


# --- 4. free space before a test file is laid out ---------------------------------------------------------
def test_a_test_file_larger_than_its_file_system_is_refused_and_nothing_is_recorded(tmp_path, loops):
    fs = loops(ext4=True)
    target = fs.mountpoint / "iobw.tst"
    steps = Steps()
    status = runner(tmp_path, str(target), steps, reads=(0,), file_size=64 * MiB).run()
    assert status == "failed"
    (said,) = steps.errors
    assert "needs 64.0 MiB" in said and "free" in said and "make the test file smaller" in said, said
    assert not target.exists()
    assert (
        not (tmp_path / "created.json").exists() or str(target) not in (tmp_path / "created.json").read_text()
    )
    assert (fs.mountpoint / "precious.txt").read_text().startswith("data that must survive")
    fs_intact(fs)


def test_two_local_managers_writing_one_armed_device_share_the_exclusive_hold(tmp_path, loops):
    disk = loops()
    plan = grid(2, 1, 1)
    plan.specs[0].lines = [SpecLine(4096, 100, 0, 100)]
    for m in plan.managers:
        m.workers[0].targets = [Target("T1", path=disk.dev)]
    steps = Steps()
    opts = RunOptions(run_time=1, registry=CreatedFiles(tmp_path / "created.json"), allow_write={"T1"})
    status = prepared(
        Runner(plan, {"M1": local_endpoint("M1"), "M2": local_endpoint("M2")}, steps, opts)
    ).run()
    assert status == "complete", steps.errors
    assert not disk.intact()  # both wrote it, through one exclusive open


# --- file systems whose other devices the mount table does not name (the kernel's exclusive claim does) ------
def mounted(what: list[str], mnt: Path) -> Path:
    mnt.mkdir(exist_ok=True)
    sh("mount", *what, str(mnt))
    (mnt / "precious.txt").write_text("data that must survive\n" * 1000)
    sh("sync")
    return mnt


def refused_by_the_kernel(tmp_path: Path, dev: str) -> None:
    """The device passes the run's checks (armed once, nothing names it as mounted), and the step's exclusive
    open refuses it."""
    steps = Steps()
    status = runner(tmp_path, dev, steps, reads=(0,), allow={"T1"}, file_size=MiB).run()
    assert status == "failed", steps.errors
    assert "EBUSY" in steps.errors[0], steps.errors


@pytest.mark.skipif(shutil.which("mkfs.btrfs") is None, reason="needs btrfs-progs")
def test_the_second_device_of_a_two_device_btrfs_is_refused(tmp_path, loops):
    first, second = loops(128 * MiB, sparse=True), loops(128 * MiB, sparse=True)
    sh("mkfs.btrfs", "-q", "-f", "-d", "raid1", "-m", "raid1", first.dev, second.dev)
    mnt = mounted([first.dev], tmp_path / "btrfs")
    try:
        refused_by_the_kernel(tmp_path, second.dev)
        assert (mnt / "precious.txt").read_text().startswith("data that must survive")
    finally:
        sh("umount", str(mnt))
    check = subprocess.run(["btrfs", "check", "--readonly", first.dev], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.skipif(shutil.which("mkfs.btrfs") is None, reason="needs btrfs-progs")
def test_a_btrfs_mounted_through_a_since_deleted_node_is_refused(tmp_path, loops):
    fs = loops(128 * MiB, sparse=True)
    sh("mkfs.btrfs", "-q", "-f", fs.dev)
    node = tmp_path / "node"
    os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(*fs.number))
    mnt = mounted([str(node)], tmp_path / "btrfs")
    node.unlink()  # the mount table names a node that is gone
    try:
        refused_by_the_kernel(tmp_path, fs.dev)
        assert (mnt / "precious.txt").read_text().startswith("data that must survive")
    finally:
        sh("umount", str(mnt))
    check = subprocess.run(["btrfs", "check", "--readonly", fs.dev], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.skipif(shutil.which("mkfs.xfs") is None, reason="needs xfsprogs")
def test_the_external_log_device_of_a_mounted_xfs_is_refused(tmp_path, loops):
    data, log = loops(320 * MiB, sparse=True), loops(64 * MiB, sparse=True)
    sh("mkfs.xfs", "-q", "-f", "-l", f"logdev={log.dev}", data.dev)
    mnt = mounted(["-o", f"logdev={log.dev}", data.dev], tmp_path / "xfs")
    try:
        refused_by_the_kernel(tmp_path, log.dev)
        assert (mnt / "precious.txt").read_text().startswith("data that must survive")
    finally:
        sh("umount", str(mnt))
    repair = subprocess.run(["xfs_repair", "-n", "-l", log.dev, data.dev], capture_output=True, text=True)
    assert repair.returncode == 0, repair.stdout + repair.stderr


@pytest.mark.skipif(shutil.which("swapon") is None, reason="needs swapon")
def test_an_armed_active_swap_file_is_refused_before_fio_writes_it(tmp_path, loops):
    """Issue 35: an active swap *file*, armed, was written by fio until the kernel's ETXTBSY and reported as
    'I/O error on target /proc/self/fd/7'. It is refused before fio starts, named, with what to do; its
    bytes are untouched. The swap file sits on an ext4 of its own: the kernel takes no swap file on tmpfs
    (Debian 13's /tmp) nor on an overlay (a chroot's)."""
    disk = loops(64 * MiB, sparse=True)
    sh("mkfs.ext4", "-q", disk.dev)
    mnt = tmp_path / "ext4"
    mnt.mkdir()
    sh("mount", disk.dev, str(mnt))
    swap = mnt / "swap.img"
    swap.write_bytes(b"\0" * (16 * MiB))
    swap.chmod(0o600)
    sh("mkswap", str(swap))
    before = swap.read_bytes()
    try:
        sh("swapon", str(swap))
        try:
            steps = Steps()
            status = runner(tmp_path, str(swap), steps, allow=(str(swap),), file_size=8 * MiB).run()
        finally:
            sh("swapoff", str(swap))
    finally:
        after = swap.read_bytes()
        sh("umount", str(mnt))
    fin = steps.outcomes[0].finished["M1"]
    assert status == "failed" and not fin.ok
    assert f"{swap} is an active swap file" in fin.reason and "swapoff" in fin.reason, fin.reason
    assert "/proc/self/fd" not in fin.reason and steps.outcomes[0].refused
    assert after == before


def test_a_second_run_on_the_same_own_test_file_is_refused_while_the_first_holds_it(tmp_path):
    """Issue 35: two runs started at once on the same own test file both ran, with no word, their results
    mixed. The second is started from inside the first, right before the first's fio starts (its test file
    held): it is refused before its fio starts, naming the file and what to do; the first runs on."""
    target = str(tmp_path / "shared.tst")
    second: dict[str, object] = {}

    def start_the_second(step: Step) -> None:
        if "status" not in second:
            steps = Steps()
            second["status"] = runner(tmp_path, target, steps, reads=(100,)).run()
            second["outcomes"] = steps.outcomes

    first = Steps()
    status = runner(tmp_path, target, first, reads=(0,), hook=start_the_second).run()
    assert status == "complete", first.outcomes[0].finished["M1"].reason
    (outcome,) = second["outcomes"]
    fin = outcome.finished["M1"]
    assert second["status"] == "failed" and outcome.refused, fin.reason
    assert f"{target} is in use by another run now" in fin.reason and "its own test file" in fin.reason


@pytest.mark.skipif(shutil.which("partx") is None, reason="needs partx")
@pytest.mark.parametrize("how", ["a second loop on the image", "a loop over the mounted disk's loop"])
def test_a_partition_of_a_loop_stacked_on_a_mounted_partition_is_in_use(tmp_path, how):
    """Disk images have partition tables: with partition 1 of an image mounted (through loop A), partition 1
    of another loop device on the same image, or of a loop over A, is the same file system. Armed once it
    is refused (the second override is required), naming the stack; the file system stays whole."""
    from tests.loop_disk import attach_partitioned, detach, partitioned_image

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
        sh("sync")
        other, other_part = attach_partitioned(str(image) if how == "a second loop on the image" else disk)
        made.append(other)
        with pytest.raises(RunRefused) as refused:
            runner(tmp_path, other_part, Steps(), reads=(0,), allow={"T1"})
        text = str(refused.value)
        assert "is in use" in text and "--allow-write-mounted" in text, text
        assert f"on {other}: its backing" in text, text
        assert (mnt / "precious.txt").read_text() == "keep me\n" * 1000
        sh("umount", str(mnt))
        fsck = subprocess.run(["e2fsck", "-n", "-f", part], capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
        for dev in reversed(made):
            detach(dev)
