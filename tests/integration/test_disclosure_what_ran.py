"""Disclosure true to what ran, on real fio and a raw loop device (issue 37.4): "What changed" names every
difference the environment table shows (the I/O scheduler, the block queue's settings) and a specification
whose definition changed (a read mix 65 -> 66 %); the disclosure gives a raw device's own size (never the
plan's test-file size) and a --run-time override against the plan's run time."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.model import planfile
from app.model.plan import SpecLine
from tests.helpers import grid, spec
from tests.loop_disk import NEEDS_LOOP, attach, detach

pytestmark = [
    pytest.mark.fio,
    pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio"),
    NEEDS_LOOP,
]
MiB = 1 << 20
ARROW = "\u2192"


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def plan_of(tmp_path: Path, name: str, read_pct: int) -> Path:
    plan = grid(1, 1, 1)
    plan.specs = [
        spec("Mix", SpecLine(8192, 100, read_pct, 100, 0, 1, 0, 0)),
        spec("Seq", SpecLine(MiB, 100, 100, 0, 0, 1, 0, 0)),
    ]
    worker = plan.managers[0].workers[0]
    worker.specs = ["Mix", "Seq"]
    worker.targets[0].name = "T"
    worker.queue_depth = 4
    plan.setup.run_time = 300  # run for 1 s: an override the report must disclose
    plan.setup.direct_io = True
    path = tmp_path / f"{name}.json"
    planfile.save(plan, path)
    return path


def set_queue(dev: str, scheduler: str, max_sectors_kb: int) -> None:
    queue = Path("/sys/block") / Path(dev).name / "queue"
    if scheduler not in (queue / "scheduler").read_text():
        pytest.skip(f"{dev} has no {scheduler} scheduler")
    (queue / "scheduler").write_text(scheduler)
    (queue / "max_sectors_kb").write_text(str(max_sectors_kb))


@pytest.fixture
def raw_loop(tmp_path):
    dev = attach(tmp_path / "raw.img", 256 * MiB)
    try:
        yield dev
    finally:
        detach(dev)


def test_what_changed_and_the_disclosure_say_what_ran(tmp_path, raw_loop):
    db = tmp_path / "r.db"
    for tag, read_pct, scheduler, kb in (("before", 65, "mq-deadline", 512), ("after", 66, "none", 256)):
        set_queue(raw_loop, scheduler, kb)
        done = cli(
            "run", plan_of(tmp_path, tag, read_pct), "--map", f"T={raw_loop}", "--allow-write", "T",
            "--run-time", "1", "--tag", tag, "--db", db,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr

    out = cli("compare", 1, 2, "--db", db)
    assert out.returncode == 0, out.stderr
    changed = next(ln for ln in out.stdout.splitlines() if ln.startswith("  What changed: "))
    assert f"\u201cMix\u201d 65% read {ARROW} 66% read" in changed, changed
    assert f"I/O scheduler mq-deadline {ARROW} none" in changed, changed
    assert re.search(rf"queue settings max_sectors_kb 512\b.* {ARROW} max_sectors_kb 256\b", changed), changed

    html = tmp_path / "r.html"
    assert cli("report", 1, "--compare", 2, "--html", html, "--db", db).returncode == 0
    text = re.sub(r"<[^>]+>", " ", html.read_text(encoding="utf-8"))
    text = " ".join(text.replace("&#x27;", "'").replace("&#39;", "'").split())
    both = "Runs 1 (before), 2 (after)"  # what the runs share is said once, naming both
    assert f"{both}: raw device {raw_loop} (target T): the device itself, 256 MiB (no test file)." in text
    assert f"{both}: run time per step 1 s, set for this run in place of the plan's 300 s." in text
    assert "test files of" not in text and "4 GiB" not in text  # the plan's default file size: not what ran
    assert "Target: queue settings max_sectors_kb 512" in text  # the environment table shows them
    assert f"What changed: \u201cMix\u201d 65% read {ARROW} 66% read" in text


def test_what_changed_names_a_different_device_the_environment_table_shows(tmp_path):
    """Before on a 64 MiB device, after on a 128 MiB one: beside the targets, the device's size changed, and
    What changed says so as the environment table does."""
    db = tmp_path / "r.db"
    devices = []
    try:
        for tag, size in (("before", 64), ("after", 128)):
            devices.append(attach(tmp_path / f"{tag}.img", size * MiB))
            done = cli(
                "run", plan_of(tmp_path, tag, 100), "--map", f"T={devices[-1]}", "--run-time", "1", "--tag", tag,
                "--db", db,
            )  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
        out = cli("compare", 1, 2, "--db", db)
    finally:
        for dev in devices:
            detach(dev)
    assert out.returncode == 0, out.stderr
    changed = next(ln for ln in out.stdout.splitlines() if ln.startswith("  What changed: "))
    assert f"targets {devices[0]} {ARROW} {devices[1]}" in changed, changed
    assert re.search(rf"target: device (\S+, )?64 MiB {ARROW} (\S+, )?128 MiB", changed), changed
