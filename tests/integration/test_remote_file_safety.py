"""Test files on a plain `fio --server` manager (issue 25): checked through fio before anything is
written. A file Fiometer did not create is refused unless armed, one it creates carries its marker, a
read-only test never lays out a smaller foreign file again, and a file changed after the check stops
the step before fio writes. Real fio servers on 127.0.0.x; patterns compared byte for byte."""

from __future__ import annotations

import copy
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from app.engine.remote import files as remote_files
from app.engine.run.managers import build_endpoints
from app.engine.run.runner import Runner, RunOptions, RunRefused
from app.engine.transports.fioproto import RemoteFio
from app.model import planfile
from app.model.plan import SpecLine, Target
from tests.helpers import grid, prepared
from tests.loop_disk import NEEDS_LOOP, attach, detach

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")]
SIZE = 1 << 20  # --test-file-size 1M
PATTERN = bytes(range(256)) * (3 * SIZE // 256)  # 3 MiB of somebody else's


def plan_on(path: Path, reads: int):
    plan = grid(1, 1, 1, qd=2)
    plan.specs[0].lines = [SpecLine(4096, 100, reads, 100, 0, 1, 4096, 0)]
    plan.managers[0].host = None
    plan.managers[0].workers[0].targets = [Target(str(path))]
    return plan


def cli(
    tmp_path: Path, plan, server: tuple[str, int], *extra: str, host_armed: bool = True
) -> subprocess.CompletedProcess[str]:
    """``host_armed``: the run carries --allow-unverified-writes M1 (a plain server's writes armed)."""
    p = tmp_path / "plan.json"
    planfile.save(plan, p)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(tmp_path / "r.db"),
            "run",
            str(p),
            "--manager",
            f"M1={server[0]}:{server[1]}",
            "--run-time",
            "1",
            "--test-file-size",
            "1M",
            *(["--allow-unverified-writes", "M1"] if host_armed else []),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture
def server(fio_server):
    host, port, _proc = fio_server("127.0.0.6")
    return host, port


def test_a_foreign_file_is_refused_unarmed_and_written_only_when_armed(tmp_path, server):
    target = tmp_path / "data.bin"
    target.write_bytes(PATTERN)
    done = cli(tmp_path, plan_on(target, reads=0), server)
    assert done.returncode != 0
    assert "does not carry Fiometer's marker" in done.stderr and "--allow-write" in done.stderr, done.stderr
    assert target.read_bytes() == PATTERN
    done = cli(tmp_path, plan_on(target, reads=0), server, "--allow-write", str(target))
    assert done.returncode == 0, done.stderr
    assert target.read_bytes()[:SIZE] != PATTERN[:SIZE]  # armed: fio wrote it
    assert target.read_bytes()[SIZE + 4096 :] == PATTERN[SIZE + 4096 :]  # beyond the run's region: kept


def test_a_link_to_a_foreign_file_is_refused(tmp_path, server):
    victim = tmp_path / "victim.bin"
    victim.write_bytes(PATTERN)
    link = tmp_path / "test.tst"
    link.symlink_to(victim)
    done = cli(tmp_path, plan_on(link, reads=30), server)
    assert done.returncode != 0 and "does not carry Fiometer's marker" in done.stderr, done.stderr
    assert victim.read_bytes() == PATTERN and link.is_symlink()


def test_a_read_only_test_never_extends_a_smaller_foreign_file(tmp_path, server):
    small = tmp_path / "small.bin"
    small.write_bytes(PATTERN[:100000])
    done = cli(tmp_path, plan_on(small, reads=100), server)
    assert done.returncode != 0 and "fio would lay it out again" in done.stderr, done.stderr
    assert small.read_bytes() == PATTERN[:100000]
    big = tmp_path / "big.bin"
    big.write_bytes(PATTERN)  # large enough: a read-only test needs no arming and leaves it as it was
    done = cli(tmp_path, plan_on(big, reads=100), server)
    assert done.returncode == 0, done.stderr
    assert big.read_bytes() == PATTERN


def test_a_file_fiometer_creates_carries_its_marker_and_is_reused_unarmed(tmp_path, server):
    new = tmp_path / "new.tst"
    done = cli(tmp_path, plan_on(new, reads=0), server)
    assert done.returncode == 0, done.stderr
    data = new.read_bytes()
    spill = 4096  # the largest block: a random I/O may run that far past the size
    assert len(data) == SIZE + spill + remote_files.MARK_SIZE
    assert data[SIZE + spill :] == (remote_files.marker(str(new)) * 64)[: remote_files.MARK_SIZE]
    done = cli(tmp_path, plan_on(new, reads=0), server)  # Fiometer's own: no arming the second time
    assert done.returncode == 0, done.stderr
    # the same bytes at another path are not Fiometer's file there (the marker names its path)
    other = tmp_path / "copy.tst"
    other.write_bytes(new.read_bytes())
    done = cli(tmp_path, plan_on(other, reads=0), server)
    assert done.returncode != 0 and "marker" in done.stderr


def test_random_writes_of_blocks_larger_than_their_alignment_leave_the_marker_whole(tmp_path, server):
    """fio starts a random 8 KiB write at any 512-byte boundary below the size, so writes run up to 7.5 KiB
    past it: the marker sits beyond the largest block, and the next step still finds the file Fiometer's
    (the bundled VMware template failed its third step on every remote manager without this)."""
    new = tmp_path / "spill.tst"
    plan = plan_on(new, reads=0)
    plan.specs[0].lines = [SpecLine(8192, 100, 0, 100, 0, 1, 512, 0)]
    plan.specs.append(copy.deepcopy(plan.specs[0]))
    plan.specs[1].name = "again"
    plan.managers[0].workers[0].specs = [plan.specs[0].name, "again"]
    for _ in range(2):
        done = cli(tmp_path, plan, server)
        assert done.returncode == 0, done.stderr
        assert "2 of 2 steps ran (2 complete)" in done.stdout
    data = new.read_bytes()
    assert data[SIZE + 8192 :] == (remote_files.marker(str(new)) * 64)[: remote_files.MARK_SIZE]


def test_a_missing_remote_folder_is_refused_and_not_created(tmp_path, server):
    target = tmp_path / "no-such-folder" / "t.tst"
    done = cli(tmp_path, plan_on(target, reads=0), server)
    assert done.returncode != 0 and "does not exist on that host" in done.stderr, done.stderr
    assert not target.parent.exists()


def test_a_file_replaced_after_the_check_stops_the_step_before_fio_writes(tmp_path, server):
    """The race, driven deterministically: the run is checked (the file missing), then a foreign file
    appears under its name before the step starts: the step fails, nothing is written."""
    target = tmp_path / "race.tst"
    plan = plan_on(target, reads=0)
    plan.managers[0].host = f"{server[0]}:{server[1]}"
    endpoints = build_endpoints(plan)
    runner = prepared(
        Runner(plan, endpoints, options=RunOptions(run_time=1, file_size=SIZE, allow_unverified={"M1"}))
    )
    target.write_bytes(PATTERN)  # between the check and the step
    assert runner.run() == "failed"
    reason = runner.outcomes[0].finished["M1"].reason
    assert "changed since the run was checked" in reason and "marker" in reason
    assert target.read_bytes() == PATTERN


def test_probe_answers(tmp_path, server):
    """What fio reports for each kind of object at a path, and that probing changes nothing."""
    make = lambda: RemoteFio(server[0], server[1], name="M1")  # noqa: E731
    (tmp_path / "foreign").write_bytes(PATTERN)
    (tmp_path / "small").write_bytes(PATTERN[:5000])
    (tmp_path / "dir").mkdir()
    files = [remote_files.RemoteFile(str(tmp_path / n), SIZE) for n in ("none", "foreign", "small", "dir")]
    files.append(remote_files.RemoteFile(str(tmp_path / "nofolder" / "x"), SIZE))
    got = {Path(p).name: (v.state, v.folder_exists) for p, v in remote_files.probe(make, files).items()}
    assert got == {
        "none": ("missing", True),
        "foreign": ("foreign", True),
        "small": ("smaller", True),
        "dir": ("folder", True),
        "x": ("missing", False),
    }
    assert sorted(os.listdir(tmp_path)) == ["dir", "foreign", "small"]
    assert (tmp_path / "small").read_bytes() == PATTERN[:5000]


@NEEDS_LOOP
@pytest.mark.parametrize("how", ["symlink", "mknod"])
def test_a_link_or_node_to_a_disk_as_the_test_file_is_refused_unarmed(tmp_path, server, how):
    """The attack of issue 25 on a plain fio server: a test file's name made a link (or a device node)
    to a disk holding data; the run is refused unarmed and the disk keeps every byte."""
    dev = attach(tmp_path / "disk.img", 8 << 20)
    try:
        pattern = bytes(range(251)) * ((8 << 20) // 251) + bytes((8 << 20) % 251)
        with open(dev, "r+b") as d:
            d.write(pattern)
        name = tmp_path / "t.tst"
        if how == "symlink":
            name.symlink_to(dev)
        else:
            st = os.stat(dev)
            os.mknod(name, stat.S_IFBLK | 0o600, st.st_rdev)
        done = cli(tmp_path, plan_on(name, reads=0), server)
        assert done.returncode != 0 and "does not carry Fiometer's marker" in done.stderr, done.stderr
        with open(dev, "rb") as d:
            assert d.read() == pattern
    finally:
        detach(dev)


def test_a_plain_server_writes_nothing_unless_its_host_is_armed(tmp_path, server):
    """Issue 36: on a plain fio server nothing can be verified, so a writing run (or a test file to lay out)
    is refused until that host is armed; the message says in one line why and offers ssh://. Reads of a
    file that is there stay free."""
    new = tmp_path / "new.tst"
    done = cli(tmp_path, plan_on(new, reads=0), server, host_armed=False)
    assert done.returncode != 0
    line = next(ln for ln in done.stderr.splitlines() if "plain fio --server" in ln)
    assert "--allow-unverified-writes 'M1'" in line and f"ssh://{server[0]}" in line, line
    assert "swapped for a link to a device" in line and "app." not in done.stderr, done.stderr
    assert not new.exists()  # not even laid out
    done = cli(tmp_path, plan_on(new, reads=100), server, host_armed=False)  # a read lays out: refused
    assert done.returncode != 0 and "--allow-unverified-writes" in done.stderr and not new.exists()
    # armed by its host (not its name) the same run goes
    done = cli(
        tmp_path, plan_on(new, reads=0), server, "--allow-unverified-writes", server[0], host_armed=False
    )
    assert done.returncode == 0, done.stderr
    assert "writes armed without verification" in done.stdout
    done = cli(tmp_path, plan_on(new, reads=100), server, host_armed=False)  # reads: free
    assert done.returncode == 0, done.stderr
    assert "plain fio --server" in done.stdout and "app.engine" not in done.stdout  # the note, no module


@NEEDS_LOOP
def test_a_swap_to_a_disk_after_the_last_check_writes_nothing_on_an_unarmed_host(tmp_path, server):
    """Issue 36's first row: a 2-step plan on a new test file; after step 2's marker probe (in the window
    before fio opens it) the file becomes a link to a disk. Unarmed, the run never starts, so the swap
    performed right before fio starts (before_fio_start) finds nothing to redirect: the disk keeps every
    byte. Armed, it is the user's word (the message said so)."""
    dev = attach(tmp_path / "disk.img", 8 << 20)
    try:
        pattern = bytes(range(251)) * ((8 << 20) // 251) + bytes((8 << 20) % 251)
        with open(dev, "r+b") as d:
            d.write(pattern)
        target = tmp_path / "f.tst"
        plan = plan_on(target, reads=0)
        plan.specs.append(copy.deepcopy(plan.specs[0]))
        plan.specs[1].name = "again"
        plan.managers[0].workers[0].specs = [plan.specs[0].name, "again"]
        plan.managers[0].host = f"{server[0]}:{server[1]}"
        swapped = []

        def swap(step):
            if step.index == 1:
                target.unlink()
                target.symlink_to(dev)
                swapped.append(step.index)

        endpoints = build_endpoints(plan)
        try:
            with pytest.raises(RunRefused, match="allow-unverified-writes") as refused:
                prepared(
                    Runner(
                        plan, endpoints, options=RunOptions(run_time=1, file_size=SIZE, before_fio_start=swap)
                    )
                )
        finally:
            for ep in endpoints.values():
                if ep.close is not None:
                    ep.close()
        assert refused.value.unverified == [("M1", f"{server[0]}:{server[1]}")] and refused.value.only_asks
        assert not swapped and not target.exists()
        with open(dev, "rb") as d:
            assert d.read() == pattern
    finally:
        detach(dev)
