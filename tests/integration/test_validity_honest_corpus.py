"""A corpus of honest runs on real fio carries no validity note: direct I/O on a file fio laid out and on a raw
loop device, 1M requests the kernel splits into 512 KiB ones, short steps, steps with a ramp-up. Short steps are
said once to be too short to judge for steadiness, never "not steady"; a comparison report of them has neither
a validity note nor test-file layout on the raw device. (The misleading runs keep theirs:
tests/integration/test_validity_notes.py.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.model import planfile
from app.model.plan import SpecLine
from tests.helpers import grid, spec
from tests.loop_disk import NEEDS_LOOP, attach, detach, mounted_ext4

pytestmark = [
    pytest.mark.fio,
    pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio"),
    NEEDS_LOOP,
    pytest.mark.skipif(not shutil.which("mkfs.ext4"), reason="needs mkfs.ext4"),
]
MiB = 1 << 20


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def plan_of(tmp_path: Path, name: str, bs: int, *, random: int, seconds: int, ramp: int) -> Path:
    plan = grid(1, 1, 1)
    plan.specs = [spec("S", SpecLine(bs, 100, 100, random, 0, 1, 0, 0))]
    worker = plan.managers[0].workers[0]
    worker.targets[0].name = "T"
    worker.queue_depth = 4
    plan.setup.run_time = seconds
    plan.setup.ramp_up = ramp
    plan.setup.direct_io = True
    path = tmp_path / f"{name}.json"
    planfile.save(plan, path)
    return path


def run(db: Path, plan: Path, target: str, *extra) -> dict:
    done = cli("run", plan, "--map", f"T={target}", "--db", db, *extra)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "validity:" not in done.stdout, done.stdout  # `run` prints no note either
    run_id = int(done.stdout.rsplit("Stored as run ", 1)[1].split()[0])
    shown = cli("show", run_id, "--json", "--db", db)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


@pytest.fixture
def raw_loop(tmp_path):
    dev = attach(tmp_path / "raw.img", 256 * MiB)
    (Path("/sys/block") / Path(dev).name / "queue" / "max_sectors_kb").write_text("512")  # 1M is split
    try:
        yield dev
    finally:
        detach(dev)


def test_honest_runs_carry_no_note_and_short_steps_are_too_short_to_judge(tmp_path, raw_loop):
    db = tmp_path / "results.sqlite"
    corpus = {
        # 1M direct reads of a raw device, split by the kernel in two: 5 s with 1 s of ramp-up
        "raw-1m": (plan_of(tmp_path, "raw-1m", MiB, random=0, seconds=5, ramp=1), raw_loop),
        "raw-4k": (plan_of(tmp_path, "raw-4k", 4096, random=100, seconds=3, ramp=1), raw_loop),
    }
    docs = {name: run(db, plan, target) for name, (plan, target) in corpus.items()}
    with mounted_ext4(tmp_path) as (_dev, mnt):
        for name, bs in (("file-4k", 4096), ("file-1m", MiB)):  # files fio lays out itself, then reads
            plan = plan_of(tmp_path, name, bs, random=100 if bs == 4096 else 0, seconds=3, ramp=1)
            docs[name] = run(db, plan, str(mnt / f"{name}.dat"), "--test-file-size", "32M")
            subprocess.run(["sync"], check=False)
    for name, doc in docs.items():
        assert doc["validity"] == [], (name, doc["validity"])
        (unjudged,) = doc["not_judged"]
        assert "step 1): too short to judge" in unjudged and "not steady" not in unjudged.lower(), unjudged
        assert doc["disk_stats"] and doc["disk_stats"][0]["reads"] > 0, name  # the disk was there to check
    (split,) = docs["raw-1m"]["disk_stats"]
    assert split["rareq_kib"] == pytest.approx(512, rel=0.01)  # each 1M read reached the disk as two
    text = cli("show", 1, "--db", db).stdout
    assert "Validity: no notes" in text and text.count("too short to judge") == 1

    # a report comparing two of them: no note, the short steps said once, no layout on the raw device
    out = tmp_path / "r.html"
    done = cli("report", 1, "--compare", 2, "--html", out, "--db", db)
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    assert "No validity notes" in html and "Not steady" not in html and "Other traffic" not in html
    assert "of test-file layout before the first I/O" not in html and "cache-bound" not in html
    assert html.count("too short to judge") == 1, html.count("too short to judge")


def test_a_long_honest_step_is_judged_and_steady(tmp_path, raw_loop):
    """10 s of throttled 4k reads: 5 rounds of 2 s, judged, and steady (no note, nothing left unjudged)."""
    from tests.io_throttle import how, run_in, throttled

    if how() is None or os.geteuid() != 0:
        pytest.skip("needs cgroup io.max or blkio throttling")
    db = tmp_path / "results.sqlite"
    plan = plan_of(tmp_path, "steady", 4096, random=100, seconds=10, ramp=0)
    with throttled(raw_loop, read_iops=1500) as group:
        done = run_in(
            group,
            [sys.executable, "-m", "app.cli", "run", str(plan), "--map", f"T={raw_loop}", "--db", str(db)],
            timeout=120,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(cli("show", 1, "--json", "--db", db).stdout)
    assert doc["validity"] == [] and doc["not_judged"] == [], (doc["validity"], doc["not_judged"])
