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
from tests.helpers import grid
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
    runner = Runner(
        plan, endpoints, options=RunOptions(run_time=1, file_size=1 << 20, allow_write={str(target)})
    )
    target.rename(tmp_path / "old.bin")
    target.write_bytes(b"b" * (3 << 20))  # a new inode under the armed name
    assert runner.run() == "failed"
    reason = runner.outcomes[0].finished["M1"].reason
    assert "is not the object that was checked" in reason, reason
    assert target.read_bytes() == b"b" * (3 << 20)
    assert (tmp_path / "old.bin").read_bytes() == b"a" * (3 << 20)
