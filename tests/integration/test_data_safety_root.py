"""Data safety tried as an admin would, as root, on loop devices: every way of spelling a target that once
reached a device or a precious file unarmed, through ``--map`` and through a plan file.

Each must be refused before fio starts (exit 2, nothing stored), the device's pattern must be intact (hash)
and a mounted ext4 must pass ``fsck -n`` afterwards. Then the armed path: a mounted device armed twice is
really written (fio gets allow_mounted_write), and the run has numbers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.model import planfile
from app.model.plan import LOCAL, SpecLine, Target
from tests.helpers import grid
from tests.loop_disk import MiB, loop_maker, pattern, sh, sha

REPO = Path(__file__).resolve().parents[2]
TOOLS = ("losetup", "mkfs.ext4", "e2fsck", "mount", "umount")

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root: creates loop devices and mounts ext4"),
    pytest.mark.skipif(any(shutil.which(t) is None for t in TOOLS), reason="needs " + ", ".join(TOOLS)),
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed"),
]


@pytest.fixture
def loops(tmp_path):
    """Make loop devices; all are detached (and unmounted) afterwards, even when the test fails."""
    yield from loop_maker(tmp_path)


def fiometer(db: Path, *args: str, cwd: str | Path = REPO, env: dict[str, str] | None = None):
    full = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "--db", str(db), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full,
        timeout=120,
    )


def save_plan(
    path: Path, target: Target, reads: int = 0, start_sector: int = 0, max_size: int = 2048
) -> Path:
    plan = grid(1, 1, 1)
    plan.name = "safety"
    plan.managers[0].host = LOCAL
    plan.specs[0].lines = [SpecLine(4096, 100, reads, 100)]
    worker = plan.managers[0].workers[0]
    worker.targets = [target]
    worker.start_sector = start_sector
    worker.max_size = max_size
    planfile.save(plan, path)
    return path


@dataclass
class Case:
    label: str
    spelled: Callable[[dict], str]  # from the context (dev, tmp, precious ...) to the path as written
    words: str  # in the refusal
    reads: int = 0
    start_sector: int = 0
    cwd: Callable[[dict], str] = lambda c: str(REPO)
    env: Callable[[dict], dict] = lambda c: {}
    allow: bool = False  # armed once (--allow-write): the mounted device still needs the second override
    mounted: bool = False  # aims at the mounted ext4 instead of the pattern device


CASES = [
    Case("symlink to the device", lambda c: str(c["link"]), "raw device"),
    Case("//dev/x", lambda c: "/" + c["dev"], "raw device"),
    Case("/./dev/x", lambda c: "/." + c["dev"], "raw device"),
    Case("/tmp/../dev/x", lambda c: "/tmp/.." + c["dev"], "raw device"),
    Case("/proc/self/root/dev/x", lambda c: "/proc/self/root" + c["dev"], "/proc"),
    Case("/proc/PID/root/dev/x", lambda c: f"/proc/{os.getpid()}/root" + c["dev"], "/proc"),
    Case("/proc/self/fd/N", lambda c: f"/proc/self/fd/{c['fd']}", "/proc"),
    Case("/dev/fd/N", lambda c: f"/dev/fd/{c['fd']}", "/proc"),
    Case(
        "relative path (cwd /dev)", lambda c: os.path.basename(c["dev"]), "raw device", cwd=lambda c: "/dev"
    ),
    Case(
        "relative path with ..",
        lambda c: "../dev/" + os.path.basename(c["dev"]),
        "raw device",
        cwd=lambda c: "/tmp",
    ),
    Case(
        "${VAR} expanding to the device",
        lambda c: "${FIOMETER_SAFETY_T}",
        "'${'",
        env=lambda c: {"FIOMETER_SAFETY_T": c["dev"]},
    ),
    Case("; comment after the device", lambda c: c["dev"] + ";x", "';'"),
    Case("# comment after the device", lambda c: c["dev"] + "#x", "'#'"),
    Case("trailing blank", lambda c: c["dev"] + " ", "blank"),
    Case("control character", lambda c: c["dev"] + "\x1b", "U+001B"),
    Case("foreign file, write spec", lambda c: str(c["precious"]), "did not create it"),
    Case(
        "file of exactly the test size, start sector 1, 100 % read",
        lambda c: str(c["precious"]),
        "lay it out again",
        reads=100,
        start_sector=1,
    ),
    Case(
        "mounted ext4, --allow-write only",
        lambda c: c["mdev"],
        "in use (mounted at",
        allow=True,
        mounted=True,
    ),
    Case(
        "symlink to mounted ext4, --allow-write only",
        lambda c: str(c["mlink"]),
        "in use (mounted at",
        allow=True,
        mounted=True,
    ),
]


@pytest.mark.parametrize("route", ["map", "plan"])
def test_every_spelling_is_refused_before_fio_starts(tmp_path, loops, route):
    dev = loops()
    mounted = loops(ext4=True)
    precious = tmp_path / "precious.bin"
    precious.write_bytes(pattern(MiB))
    precious_digest = sha(precious)
    (tmp_path / "link").symlink_to(dev.dev)
    (tmp_path / "mlink").symlink_to(mounted.dev)
    fd = os.open(dev.dev, os.O_RDONLY)
    ctx = {
        "dev": dev.dev,
        "mdev": mounted.dev,
        "link": tmp_path / "link",
        "mlink": tmp_path / "mlink",
        "precious": precious,
        "fd": fd,
    }
    db = tmp_path / "results.db"
    seen = []
    try:
        for i, case in enumerate(CASES):
            spelled = case.spelled(ctx)
            name = "C:" if route == "map" else "T1"
            target = Target("C:") if route == "map" else Target("T1", path=spelled)
            plan = save_plan(tmp_path / f"plan{i}.json", target, case.reads, case.start_sector)
            args = ["run", str(plan), "--run-time", "1", "--test-file-size", "1M"]
            if route == "map":
                args += ["--map", f"C:={spelled}"]
            if case.allow:
                args += ["--allow-write", name]
            out = fiometer(db, *args, cwd=case.cwd(ctx), env=case.env(ctx))
            said = out.stdout + out.stderr
            seen.append((case.label, out.returncode, said.strip().splitlines()[-1:]))
            assert out.returncode == 2, f"{case.label}: rc {out.returncode}\n{said}"
            assert "cannot start" in said and case.words in said, f"{case.label}:\n{said}"
            assert "Traceback" not in said
            assert sha(dev.dev) == dev.digest, f"{case.label}: the pattern device changed"
            assert sha(precious) == precious_digest, f"{case.label}: the precious file changed"
    finally:
        os.close(fd)
        for label, rc, last in seen:
            print(f"[{route}] {label}: rc {rc}: {last}")
    runs = fiometer(db, "runs", "--json")
    assert json.loads(runs.stdout or "[]") == []  # nothing started, so nothing was stored
    assert sha(dev.backing) == dev.digest
    sh("umount", str(mounted.mountpoint))
    mounted.mountpoint = None
    fsck = subprocess.run(["e2fsck", "-n", "-f", mounted.dev], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def test_a_mounted_device_armed_twice_is_really_written(tmp_path, loops):
    """fio refuses mounted devices unless allow_mounted_write=1 is sent: only for a target armed twice."""
    mounted = loops(size=32 * MiB, ext4=True)
    region = 31 * MiB  # the last MiB: written, then compared
    with open(mounted.dev, "rb") as f:
        f.seek(region)
        before = f.read(MiB)
    plan = save_plan(tmp_path / "plan.json", Target("T1", path=mounted.dev), start_sector=region // 512)
    db = tmp_path / "results.db"
    out = fiometer(
        db, "run", str(plan), "--run-time", "1", "--allow-write", "T1", "--allow-write-mounted", "T1"
    )
    assert out.returncode == 0, out.stdout + out.stderr
    shown = json.loads(fiometer(db, "show", "1", "--json").stdout)
    (step,) = shown["steps"]
    total = next(r for r in step["results"] if r["level"] == "all")
    assert step["status"] == "complete" and total["iops"] > 0, step
    with open(mounted.dev, "rb") as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        f.seek(region)
        assert f.read(MiB) != before  # really written (fio's own mount check was told to let it)
