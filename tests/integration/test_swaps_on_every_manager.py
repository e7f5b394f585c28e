"""Issue 36's families, on a local and an ``ssh://`` manager alike: every swap of a test file between steps and
right before fio starts, unarmed (Fiometer's own file, created by step 1) and armed once (a foreign file
armed with --allow-write). Real fio, loop devices holding a known pattern, a mounted ext4, an sshd in a
network namespace; the races are driven by the listener between steps and by ``before_fio_start``, never
by sleeps.

Between steps the swapped object is refused at step 2's check (nothing written); right before fio starts
the target is already held open, so fio writes the object that was checked, not what the name leads to.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from app.engine.guards.safety import CreatedFiles
from app.engine.run.managers import build_endpoints, local_endpoint
from app.engine.run.runner import RunListener, Runner, RunOptions, RunRefused, StepOutcome
from app.engine.transports.ssh_manager import SSH_ENV
from app.model.plan import SpecLine, Target
from tests.helpers import grid, prepared
from tests.integration.test_ssh_manager import pytestmark as ssh_marks
from tests.integration.test_ssh_manager import ssh_namespace  # noqa: F401 - the fixture
from tests.loop_disk import Loop, MiB, detach, loop_maker, sh, sha

TOOLS = ("losetup", "mkfs.ext4", "e2fsck", "mount", "umount", "fio")
pytestmark = [
    pytest.mark.fio,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root: creates loop devices and mounts ext4"),
    pytest.mark.skipif(any(shutil.which(t) is None for t in TOOLS), reason="needs " + ", ".join(TOOLS)),
]
KINDS = ["local", pytest.param("ssh", marks=ssh_marks)]
SIZE = 4 * MiB
FOREIGN = b"foreign data, armed once\n" * (SIZE // 25 + 1)
OTHER = b"another file, never armed\n" * (SIZE // 26 + 1)
PRECIOUS = b"precious, written in place by another program\n" * 1024


@pytest.fixture
def loops(tmp_path):
    yield from loop_maker(tmp_path)


class Between(RunListener):
    """Runs ``act`` after step 1 (its files adopted, nothing held); keeps the steps' error messages."""

    def __init__(self, act) -> None:
        self.act = act
        self.errors: list[str] = []

    def message(self, step, message) -> None:
        if message.level == "error":
            self.errors.append(message.text)

    def step_finished(self, outcome: StepOutcome) -> None:
        if outcome.step.index == 0 and self.act is not None:
            self.act()


def make_runner(
    kind: str,
    request,
    tmp_path: Path,
    target: Path,
    listener,
    armed: bool,
    hook=None,
    size: int = SIZE,
    reads: int = 0,
) -> Runner:
    plan = grid(1, 1, 1, qd=2, specs=("S1", "S2"))
    for spec in plan.specs:
        spec.lines = [SpecLine(4096, 100, reads, 100, 0, 1, 4096, 0)]  # random I/O, 100 % writes by default
    plan.managers[0].workers[0].targets = [Target(str(target))]
    if kind == "ssh":
        config, _ns = request.getfixturevalue("ssh_namespace")
        request.getfixturevalue("monkeypatch").setenv(SSH_ENV, f"ssh -F {config}")
        plan.managers[0].host = "ssh://fiometer-remote"
        endpoints = build_endpoints(plan)
    else:
        endpoints = {"M1": local_endpoint("M1")}
    options = RunOptions(
        run_time=1,
        file_size=size,
        registry=CreatedFiles(tmp_path / "created.json"),
        allow_write={str(target)} if armed else set(),
        before_fio_start=hook,
    )
    try:
        return prepared(Runner(plan, endpoints, listener, options))
    except BaseException:
        for ep in endpoints.values():
            if ep.close is not None:
                ep.close()
        raise


def replace_by_link(path: Path, to: str) -> None:
    planted = path.with_name(path.name + ".planted")
    planted.symlink_to(to)
    os.replace(planted, path)


def replace_by_file(path: Path, other: Path) -> None:
    other.write_bytes(OTHER)
    planted = path.with_name(path.name + ".planted")
    planted.write_bytes(OTHER)
    os.replace(planted, path)


class Attack:
    """One swap of ``target`` and how to tell that nothing it brought in was written."""

    def __init__(self, how: str, target: Path, tmp_path: Path, loops) -> None:
        self.how, self.target, self.tmp_path, self.loops = how, target, tmp_path, loops
        self.disk: Loop | None = None
        self.fs_dev: str | None = None
        self.mnt = tmp_path / "mnt-over-test-file"

    def __call__(self) -> None:
        t = self.target
        if self.how == "a link to a loop device":
            self.disk = self.loops(8 * MiB)
            replace_by_link(t, self.disk.dev)
        elif self.how == "another file":
            replace_by_file(t, self.tmp_path / "other.bin")
        elif self.how == "rewritten in place":  # dd conv=notrunc: size and Fiometer's marker kept
            with open(t, "r+b") as f:
                f.write(PRECIOUS)
        elif self.how == "backing a mounted loop":
            sh("mkfs.ext4", "-q", "-F", str(t))
            self.fs_dev = sh("losetup", "--find", "--show", str(t))
            self.mnt.mkdir()
            sh("mount", self.fs_dev, str(self.mnt))
            (self.mnt / "precious.txt").write_text("keep me\n" * 1000)
            sh("sync")
        else:  # pragma: no cover
            raise AssertionError(self.how)

    def nothing_written(self) -> None:
        if self.disk is not None:
            assert self.disk.intact(), "fio wrote the loop device the name was linked to"
        if self.how == "another file":
            assert self.target.read_bytes() == OTHER, "fio wrote the file put in its place"
        if self.how == "rewritten in place":
            assert self.target.read_bytes()[: len(PRECIOUS)] == PRECIOUS, "fio wrote over the new data"
        if self.fs_dev is not None:
            assert (self.mnt / "precious.txt").read_text() == "keep me\n" * 1000
            sh("umount", str(self.mnt))
            fsck = subprocess.run(["e2fsck", "-n", "-f", self.fs_dev], capture_output=True, text=True)
            assert fsck.returncode == 0, fsck.stdout + fsck.stderr

    def close(self) -> None:
        if self.fs_dev is not None:
            subprocess.run(["umount", str(self.mnt)], capture_output=True)
            subprocess.run(["losetup", "-d", self.fs_dev], capture_output=True)


def prepare_target(tmp_path: Path, armed: bool) -> Path:
    target = tmp_path / ("armed.bin" if armed else "own.tst")
    if armed:
        target.write_bytes(FOREIGN[:SIZE])
    return target


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("armed", [False, True], ids=["unarmed", "armed-once"])
@pytest.mark.parametrize(
    "how", ["a link to a loop device", "another file", "rewritten in place", "backing a mounted loop"]
)
def test_a_test_file_swapped_between_steps_stops_step_2_before_anything_is_written(
    kind, armed, how, request, tmp_path, loops
):
    if armed and how == "rewritten in place":
        pytest.skip("the armed object itself: the user's word covers writing it")
    target = prepare_target(tmp_path, armed)
    attack = Attack(how, target, tmp_path, loops)
    listener = Between(attack)
    try:
        runner = make_runner(kind, request, tmp_path, target, listener, armed)
        status = runner.run()
        assert len(runner.outcomes) == 2 and runner.outcomes[0].status == "complete", runner.outcomes
        reason = runner.outcomes[1].finished["M1"].reason
        assert status == "failed" and runner.outcomes[1].status == "failed", reason
        assert "nothing was written" in reason, reason
        attack.nothing_written()
    finally:
        attack.close()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("armed", [False, True], ids=["unarmed", "armed-once"])
def test_a_test_file_swapped_right_before_fio_starts_is_not_followed(kind, armed, request, tmp_path, loops):
    """The name made a link to a loop device after step 2's check: fio opens the object held, not the name."""
    target = prepare_target(tmp_path, armed)
    attack = Attack("a link to a loop device", target, tmp_path, loops)
    done: list[int] = []

    def hook(step) -> None:
        if step.index == 1:
            attack()
            done.append(step.index)

    try:
        runner = make_runner(kind, request, tmp_path, target, Between(None), armed, hook)
        status = runner.run()
        assert done == [1], "the swap was not made in the window"
        attack.nothing_written()
        assert status == "complete", [o.finished["M1"].reason for o in runner.outcomes]
    finally:
        attack.close()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("when", ["before the run", "after the run's check"])
def test_an_own_test_file_backing_a_loop_device_is_not_laid_out_again_by_a_read_only_run(
    kind, when, request, tmp_path
):
    """Fiometer's own test file, unchanged (so still its own), attached read-only to a loop device that
    something reads (a VM's disk, say); a read-only run with a larger file size would lay it out again,
    rewriting what the loop device shows. That layout is a write to a file in use: refused at the check,
    or at the step's start when the loop appeared after the check; nothing changes under the loop."""
    target = tmp_path / "own.tst"
    first = make_runner(kind, request, tmp_path, target, Between(None), False, size=SIZE, reads=100)
    assert first.run() == "complete"
    dev = ""
    try:
        if when == "before the run":
            dev = sh("losetup", "--read-only", "--find", "--show", str(target))
            before = sha(dev)
            with pytest.raises(RunRefused) as refused:
                make_runner(kind, request, tmp_path, target, Between(None), False, size=2 * SIZE, reads=100)
            text = str(refused.value)
            assert f"(in use: backing file of {dev})" in text and "laid out again" in text, text
        else:
            runner = make_runner(
                kind, request, tmp_path, target, Between(None), False, size=2 * SIZE, reads=100
            )
            dev = sh("losetup", "--read-only", "--find", "--show", str(target))
            before = sha(dev)
            assert runner.run() == "failed"
            reason = runner.outcomes[0].finished["M1"].reason
            assert "is in use now" in reason and f"backing file of {dev}" in reason, reason
        assert sha(dev) == before and target.stat().st_size == SIZE
    finally:
        if dev:
            detach(dev)


@pytest.mark.parametrize("kind", KINDS)
def test_an_armed_loop_device_bound_again_to_another_file_between_steps_is_not_written(
    kind, request, tmp_path, loops
):
    """Armed once, /dev/loopN over a scratch image; between steps it is detached and bound again, same name
    and number, to another file: another target. Step 2 is refused and that file keeps every byte."""
    scratch = loops(8 * MiB)
    precious = tmp_path / "precious.img"
    precious.write_bytes(OTHER[: 8 * MiB])

    def rebind() -> None:
        sh("losetup", "-d", scratch.dev)
        sh("losetup", scratch.dev, str(precious))

    runner = make_runner(kind, request, tmp_path, Path(scratch.dev), Between(rebind), True)
    status = runner.run()
    reason = runner.outcomes[-1].finished["M1"].reason
    assert status == "failed" and len(runner.outcomes) == 2, reason
    assert "it was a loop device over a file" in reason and "nothing was written" in reason, reason
    assert precious.read_bytes() == OTHER[: 8 * MiB]
