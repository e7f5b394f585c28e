"""Validity notes on real fio runs: runs made to mislead carry the right note in `show` and `show --json`, and
an honest run (direct reads of a written region on a disk nothing else uses) carries none."""

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
from tests.loop_disk import attach, detach, mounted_ext4

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")]
ROOT_LOOP = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("losetup") or not shutil.which("mkfs.ext4"),
    reason="needs root, losetup and mkfs.ext4 (CI runs as root)",
)
MiB = 1 << 20


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def plan_file(
    tmp_path: Path,
    *,
    reads: int,
    qd: int = 4,
    direct: bool = True,
    pattern: int = 2,
    seconds: int = 2,
    name: str = "plan.json",
) -> Path:
    plan = grid(1, 1, 1)
    plan.specs = [spec("S", SpecLine(4096, 100, reads, 100, 0, 1, 0, 0))]
    worker = plan.managers[0].workers[0]
    worker.targets[0].name = "T"
    worker.queue_depth = qd
    worker.data_pattern = pattern
    plan.setup.run_time = seconds
    plan.setup.direct_io = direct
    path = tmp_path / name
    planfile.save(plan, path)
    return path


def run_and_show(tmp_path: Path, plan: Path, *extra) -> tuple[dict, str]:
    db = tmp_path / "results.sqlite"
    done = cli("run", plan, "--db", db, *extra)
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = int(done.stdout.rsplit("Stored as run ", 1)[1].split()[0])
    shown = cli("show", run_id, "--json", "--db", db)
    assert shown.returncode == 0, shown.stderr
    text = cli("show", run_id, "--db", db)
    assert text.returncode == 0, text.stderr
    return json.loads(shown.stdout), text.stdout


def kinds(doc: dict) -> set[str]:
    return {n["kind"] for n in doc["validity"]}


def test_buffered_read_of_a_small_file_gets_the_cache_note(tmp_path):
    plan = plan_file(tmp_path, reads=100, direct=False)
    doc, text = run_and_show(
        tmp_path, plan, "--map", f"T={tmp_path / 'small.dat'}", "--test-file-size", "32M"
    )
    cache = [n for n in doc["validity"] if n["kind"] == "cache"]
    assert cache, doc["validity"]
    assert "direct=0" in cache[0]["text"] and "32 MiB" in cache[0]["figure"] and "RAM" in cache[0]["figure"]
    assert cache[0]["step"] == 0 and cache[0]["advice"]
    # shown first, before the results table
    assert text.index("Validity notes") < text.index("Access specification") and "Cache (step 1" in text


def test_reads_of_a_never_written_region_get_their_note(tmp_path):
    sparse = tmp_path / "sparse.dat"
    with open(sparse, "wb") as f:
        f.truncate(32 * MiB)  # a size but no data: every read is of a hole
    plan = plan_file(tmp_path, reads=100)
    doc, text = run_and_show(tmp_path, plan, "--map", f"T={sparse}", "--test-file-size", "32M")
    never = [n for n in doc["validity"] if n["kind"] == "never_written"]
    assert never and "100 % of the 32 MiB region read was never written" in never[0]["figure"], doc[
        "validity"
    ]
    assert "Never-written data" in text


def test_writes_of_a_repeating_pattern_get_the_compressible_note_and_full_random_does_not(tmp_path):
    repeating = plan_file(tmp_path, reads=0, pattern=0, name="repeating.json")
    doc, _ = run_and_show(tmp_path, repeating, "--map", f"T={tmp_path / 'w1.dat'}", "--test-file-size", "16M")
    notes = [n for n in doc["validity"] if n["kind"] == "compressible"]
    assert notes and "buffer_pattern=0xa5" in notes[0]["figure"], doc["validity"]
    reused = plan_file(tmp_path, reads=0, pattern=1, name="reused.json")
    doc, _ = run_and_show(tmp_path, reused, "--map", f"T={tmp_path / 'w2.dat'}", "--test-file-size", "16M")
    notes = [n for n in doc["validity"] if n["kind"] == "compressible"]
    assert notes and "deduplicates" in notes[0]["text"], doc["validity"]
    honest = plan_file(tmp_path, reads=0, pattern=2, name="random.json")
    doc, _ = run_and_show(tmp_path, honest, "--map", f"T={tmp_path / 'w3.dat'}", "--test-file-size", "16M")
    assert "compressible" not in kinds(doc), doc["validity"]


def test_a_cpu_bound_generator_gets_its_note(tmp_path):
    # the null engine does no I/O at all: fio's CPU is the only limit
    plan = plan_file(tmp_path, reads=100, qd=64)
    doc, _ = run_and_show(
        tmp_path, plan, "--map", f"T={tmp_path / 'n.dat'}", "--test-file-size", "16M", "--engine", "null"
    )
    gen = [n for n in doc["validity"] if n["kind"] == "generator"]
    assert gen and ("of a CPU core" in gen[0]["figure"] or "CPUs were" in gen[0]["figure"]), doc["validity"]


@pytest.fixture
def mounted_loop(tmp_path):
    """A file system of its own on a loop device: its disk counters see only this test's I/O."""
    with mounted_ext4(tmp_path) as (dev, mnt):
        yield dev, mnt


@ROOT_LOOP
def test_an_honest_direct_read_of_a_written_region_larger_than_the_test_carries_no_note(
    tmp_path, mounted_loop
):
    _dev, mnt = mounted_loop
    data = mnt / "data.dat"
    with open(data, "wb") as f:  # 48 MiB of real data; the test reads its first 32 MiB
        for _ in range(48):
            f.write(os.urandom(MiB))
        os.fsync(f.fileno())
    subprocess.run(["sh", "-c", "echo 1 > /proc/sys/vm/drop_caches"], check=False)
    plan = plan_file(tmp_path, reads=100, qd=4)
    doc, text = run_and_show(tmp_path, plan, "--map", f"T={data}", "--test-file-size", "32M")
    assert doc["validity"] == [], doc["validity"]
    assert "Validity: no notes" in text
    assert doc["disk_stats"] and doc["disk_stats"][0]["reads"] > 0  # the disk's counters were there to check


@ROOT_LOOP
def test_io_fio_did_not_issue_is_other_traffic(tmp_path, mounted_loop):
    dev, mnt = mounted_loop
    data = mnt / "data.dat"
    with open(data, "wb") as f:
        for _ in range(32):
            f.write(os.urandom(MiB))
        os.fsync(f.fileno())
    plan = plan_file(tmp_path, reads=100, qd=1, seconds=3)
    # someone else reading the same disk all through the run: direct reads of the device itself
    other = subprocess.Popen(
        [
            "fio",
            "--name=other",
            f"--filename={dev}",
            "--rw=randread",
            "--bs=4k",
            "--direct=1",
            "--time_based",
            "--runtime=8",
            "--readonly",
            "--output=/dev/null",
        ]
    )
    try:
        doc, _ = run_and_show(tmp_path, plan, "--map", f"T={data}", "--test-file-size", "32M")
    finally:
        other.wait(timeout=60)
    traffic = [n for n in doc["validity"] if n["kind"] == "other_traffic"]
    assert traffic and "MB/s came from something else" in traffic[0]["text"], doc["validity"]


@ROOT_LOOP
def test_a_step_whose_iops_fall_midway_is_not_steady(tmp_path):
    """A loop device throttled to 2,000 read IOPS, then to 300 halfway through a 10-s step (tests/io_throttle.py):
    the step's rounds fail the steady-state rule."""
    import threading

    from tests.io_throttle import how, run_in, set_read_iops, throttled

    if how() is None:
        pytest.skip("needs cgroup io.max or blkio throttling")
    dev = attach(tmp_path / "loop.img", 64 << 20)
    try:
        plan = plan_file(tmp_path, reads=100, qd=4, seconds=10)
        db = tmp_path / "results.sqlite"
        with throttled(dev, read_iops=2000) as group:
            timer = threading.Timer(
                6.0, set_read_iops, (group, dev, 300)
            )  # ~5 s into the step (fio starts ~1 s in)
            timer.start()
            try:
                done = run_in(
                    group,
                    [sys.executable, "-m", "app.cli", "run", str(plan), "--map", f"T={dev}", "--db", str(db)],
                    timeout=120,
                )
            finally:
                timer.cancel()
        assert done.returncode == 0, done.stdout + done.stderr
        shown = cli("show", "1", "--json", "--db", db)
        notes = [n for n in json.loads(shown.stdout)["validity"] if n["kind"] == "not_steady"]
        assert notes and "rounds of 2 s" in notes[0]["figure"] and "drift -" in notes[0]["figure"], (
            shown.stdout[:3000]
        )
    finally:
        detach(dev)


@ROOT_LOOP
def test_honest_random_data_writes_to_a_new_file_carry_no_note(tmp_path, mounted_loop):
    """The file system's own writes (the first write into a freshly allocated file converts its extents, with
    journal writes) are not someone else's traffic."""
    _dev, mnt = mounted_loop
    plan = plan_file(tmp_path, reads=0, qd=4, pattern=2)
    doc, text = run_and_show(tmp_path, plan, "--map", f"T={mnt / 'new.dat'}", "--test-file-size", "32M")
    assert doc["validity"] == [], doc["validity"]
    assert doc["disk_stats"] and doc["disk_stats"][0]["writes"] > 0
