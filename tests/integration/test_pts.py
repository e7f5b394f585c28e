"""`fiometer pts` on real fio and a real block device: a loop device backed by a sparse file, purged by
blkdiscard, preconditioned (scaled down), then rounds of 1-2 s. Steady state reached under a constant write
throttle and not reached when the throttle changes between rounds (a device whose rate drifts); each PTS
test runs and its report (PDF, HTML, XLSX) carries the PTS header, the steady-state plots and table; two PTS
runs compare in one report; the purge refuses a device in use and one not armed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import pytest

from app.engine.guards.purge import PurgeRefused, check_purge
from tests.io_throttle import NEEDS_THROTTLE, set_write_iops, write_throttled
from tests.loop_disk import NEEDS_LOOP, attach, detach, mounted_ext4

pytestmark = [
    pytest.mark.fio,
    pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio"),
    pytest.mark.skipif(shutil.which("blkdiscard") is None, reason="needs blkdiscard"),
    NEEDS_LOOP,
]
MiB = 1 << 20
CLI = [sys.executable, "-m", "app.cli"]
LIMIT_S = 120  # seconds a run of these tests may take at most


@pytest.fixture
def loop_dev(tmp_path):
    dev = attach(tmp_path / "pts.img", 64 * MiB)  # sparse
    try:
        yield dev
    finally:
        detach(dev)


def pts_args(dev: str, db: Path, *extra: str) -> list[str]:
    return [*CLI, "pts", dev, "--db", str(db), "--allow-write", dev, "--stimulus", "tracking", *extra]


def record_of(db: Path, run_id: int) -> dict:
    with closing(sqlite3.connect(db)) as c:
        return json.loads(c.execute("SELECT host_json FROM runs WHERE id = ?", (run_id,)).fetchone()[0])[
            "pts"
        ]


def run_id_of(out: str) -> int:
    return int(out.rsplit("Stored as run ", 1)[1].split()[0])


def write_tail(dev: str) -> None:
    """Non-zero bytes in the device's last MiB: outside the client's 75 % active range and the scaled
    preconditioning, so only the purge changes them."""
    with open(dev, "r+b") as f:
        f.seek(63 * MiB)
        f.write(b"\xa5" * MiB)
        f.flush()
        os.fsync(f.fileno())


def tail_is_zero(dev: str) -> bool:
    with open(dev, "rb") as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        f.seek(63 * MiB)
        return f.read(MiB) == b"\0" * MiB


def report(db: Path, run_ids: list[int], out: Path) -> dict[str, Path]:
    files = {k: out.with_suffix(f".{k}") for k in ("pdf", "html", "xlsx")}
    args = [*CLI, "report", str(run_ids[0]), "--db", str(db)]
    if len(run_ids) > 1:
        args += ["--compare", *map(str, run_ids[1:])]
    for k, path in files.items():
        args += [f"--{k}", str(path)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return files


def pdf_text(pdf: Path) -> str:
    return subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout


@NEEDS_THROTTLE
def test_steady_state_reached_under_a_constant_throttle_after_a_purge(tmp_path, loop_dev):
    db = tmp_path / "pts.db"
    write_tail(loop_dev)
    args = pts_args(
        loop_dev, db, "--test", "iops", "--variant", "client", "--rounds-max", "8", "--round-time", "2",
        "--purge", "blkdiscard", "--precondition-scale", "0.25", "--tested-by", "CI",
    )  # fmt: skip
    with write_throttled(loop_dev, 1500) as group:
        script = f'echo $$ > {group / "cgroup.procs"} && exec "$@"'
        done = subprocess.run(["sh", "-c", script, "sh", *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Steady state reached at round 5" in done.stdout, done.stdout
    assert f"Purge: blkdiscard {loop_dev} purged" in done.stdout
    assert tail_is_zero(loop_dev)  # the purge discarded what only it could reach
    run_id = run_id_of(done.stdout)
    rec = record_of(db, run_id)
    d = rec["decision"]
    assert d["reached"] and d["at_round"] == 5 and d["first_round"] == 1 and len(rec["rounds"]) == 5
    assert rec["purge"]["outcome"] == "purged" and rec["fill_step"] == 0
    assert rec["settings"]["active_range_pct"] == 75 and rec["settings"]["threads"] == 2
    values = [r["tracking"] for r in rec["rounds"]]
    assert all(1200 < v < 1600 for v in values), values  # the throttle's rate, not the loop device's
    avg = sum(values) / 5  # the stored figures are the rule's, worked out by hand here
    assert d["average"] == pytest.approx(avg) and d["range"] == pytest.approx(max(values) - min(values))
    assert d["range_pct"] <= 20 and d["fit_excursion_pct"] <= 10
    shown = subprocess.run(
        [*CLI, "show", str(run_id), "--json", "--db", str(db)], capture_output=True, text=True
    )
    assert json.loads(shown.stdout)["pts"]["at_round"] == 5, shown.stdout + shown.stderr
    text_shown = subprocess.run(
        [*CLI, "show", str(run_id), "--db", str(db)], capture_output=True, text=True
    ).stdout
    assert "SNIA PTS: IOPS test (C)" in text_shown and "Steady state reached at round 5" in text_shown
    files = report(db, [run_id], tmp_path / "reached")
    text = pdf_text(files["pdf"])
    assert text.count("SNIA SSS PTS v2.0.2, variant C (client)") >= 4  # the header, on every body page
    assert "tested by CI" in text and "Steady-state determination" in text and "reached at round 5" in text
    assert "Measurement window, rounds 1-5" in text and "Steady-state convergence" in text
    assert "blkdiscard" in text and "IOPS by block size and read/write mix" in text
    assert "too short to judge" not in text  # its steadiness is the PTS decision, not a per-step rule's
    html = files["html"].read_text()
    assert 'id="pts-window-' in html and 'id="pts-convergence-' in html and "90 % of the average" in html
    assert files["xlsx"].stat().st_size > 0


@NEEDS_THROTTLE
def test_steady_state_not_reached_when_the_rate_drifts_between_rounds(tmp_path, loop_dev):
    db = tmp_path / "pts.db"
    args = pts_args(
        loop_dev, db, "--test", "iops", "--variant", "client", "--rounds-max", "5", "--round-time", "2",
        "--purge", "none", "--precondition-scale", "0.1",
    )  # fmt: skip
    rates = iter([800, 2400, 800, 2400, 800])
    lines = []
    with write_throttled(loop_dev, 2400) as group:
        script = f'echo $$ > {group / "cgroup.procs"} && exec "$@"'
        with subprocess.Popen(["sh", "-c", script, "sh", *args], stdout=subprocess.PIPE, text=True) as proc:
            assert proc.stdout is not None
            watchdog = threading.Timer(LIMIT_S, proc.kill)  # a hung run fails the test instead of CI
            watchdog.start()
            for line in proc.stdout:
                lines.append(line)
                if line.startswith("PTS round "):  # a round ended: the next one runs at another rate
                    set_write_iops(group, loop_dev, next(rates))
            watchdog.cancel()
            assert proc.wait(timeout=LIMIT_S) == 0, "".join(lines)
    out = "".join(lines)
    assert "Steady state not reached: no window met the rule in 5 rounds (at most 5)" in out, out
    assert "Purge: none: not purged" in out
    rec = record_of(db, run_id_of(out))
    assert not rec["decision"]["reached"] and rec["decision"]["range_pct"] > 20
    assert rec["purge"] == {
        "method": "none",
        "outcome": "none: not purged",
        "detail": "",
        "command": "",
        "seconds": 0.0,
    }
    files = report(db, [run_id_of(out)], tmp_path / "drift")
    text = pdf_text(files["pdf"])
    assert "not reached in 5 rounds" in text and "none: not purged" in text


@pytest.mark.parametrize("test", ["throughput", "latency", "wsat"])
def test_each_pts_test_runs_and_reports(tmp_path, loop_dev, test):
    db = tmp_path / "pts.db"
    done = subprocess.run(
        pts_args(loop_dev, db, "--test", test, "--rounds-max", "5", "--round-time", "1", "--purge", "blkdiscard",
                 "--precondition-scale", "0.1"),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    rec = record_of(db, run_id_of(done.stdout))
    assert rec["test"] == test and rec["variant"] == "enterprise" and rec["purge"]["outcome"] == "purged"
    assert all(r["tracking"] and r["tracking"] > 0 for r in rec["rounds"]), rec["rounds"]
    if test == "latency":
        assert (rec["settings"]["queue_depth"], rec["settings"]["threads"]) == (1, 1)
    if test == "wsat":  # every round runs, steady or not, and nothing preconditions first
        assert len(rec["rounds"]) == 5 and rec["fill_step"] is None
    text = pdf_text(report(db, [run_id_of(done.stdout)], tmp_path / test)["pdf"])
    assert "Steady-state determination" in text and "SNIA SSS PTS v2.0.2, variant E (enterprise)" in text
    title = {"throughput": "Throughput, MB/s", "latency": "Maximum latency, ms", "wsat": "Write saturation"}[
        test
    ]
    assert title in text


def test_two_pts_runs_of_two_devices_compare_in_one_report(tmp_path, loop_dev):
    other = attach(tmp_path / "other.img", 32 * MiB)
    try:
        db = tmp_path / "pts.db"
        ids = []
        for dev, tag in ((loop_dev, "drive-a"), (other, "drive-b")):
            done = subprocess.run(
                pts_args(dev, db, "--test", "iops", "--rounds-max", "5", "--round-time", "1",
                         "--precondition-scale", "0.05", "--tag", tag),
                capture_output=True, text=True, timeout=LIMIT_S,
            )  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
            ids.append(run_id_of(done.stdout))
        files = report(db, ids, tmp_path / "both")
    finally:
        detach(other)
    text = pdf_text(files["pdf"])
    assert "PTS comparison: steady-state figure of each run" in text and "Before / after" in text
    assert f"run {ids[0]} (drive-a" in text and f"run {ids[1]} (drive-b" in text
    assert f"({loop_dev}), firmware" in text and f"({other}), firmware" in text  # both devices' page headers
    assert "64 MiB" in text and "32 MiB" in text
    html = files["html"].read_text()
    assert html.count('id="pts-determination-') == 2 and 'id="pts-compare"' in html


def test_purge_refuses_a_device_in_use_and_one_not_armed(tmp_path, loop_dev):
    with mounted_ext4(tmp_path) as (dev, _mnt):
        done = subprocess.run(
            [*CLI, "pts", dev, "--test", "iops", "--purge", "blkdiscard", "--allow-write", dev,
             "--allow-write-mounted", dev, "--db", str(tmp_path / "x.db")],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2 and "is in use (mounted at" in done.stderr, done.stderr
    done = subprocess.run(
        [*CLI, "pts", loop_dev, "--test", "iops", "--purge", "blkdiscard", "--db", str(tmp_path / "x.db")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and f"arm it with --allow-write '{loop_dev}'" in done.stderr, done.stderr
    with pytest.raises(PurgeRefused, match="not armed for writes"):
        check_purge(loop_dev, "blkdiscard", set())  # the purge's own guard, whatever the runner said
    check_purge(loop_dev, "blkdiscard", {loop_dev})


def test_a_failed_purge_ends_the_run_before_anything_is_written(tmp_path, loop_dev):
    """A loop device has no secure discard: the purge fails, is recorded with blkdiscard's words, and no
    preconditioning or round runs."""
    db = tmp_path / "pts.db"
    done = subprocess.run(
        pts_args(loop_dev, db, "--test", "iops", "--purge", "blkdiscard-secure", "--round-time", "1"),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    rec = record_of(db, run_id_of(done.stdout))
    assert (
        rec["purge"]["outcome"] == "failed" and rec["purge"]["command"] == f"blkdiscard --secure {loop_dev}"
    )
    assert rec["purge"]["detail"] and rec["rounds"] == [] and rec["fill_step"] is None
    assert "Purge: blkdiscard --secure" in done.stdout and "failed" in done.stdout


@NEEDS_THROTTLE
def test_a_stopped_run_keeps_its_rounds_and_resumes_after_its_preconditioning(tmp_path, loop_dev):
    db = tmp_path / "pts.db"
    args = pts_args(
        loop_dev, db, "--test", "iops", "--variant", "client", "--rounds-max", "8", "--round-time", "1",
        "--purge", "blkdiscard", "--precondition-scale", "0.1",
    )  # fmt: skip
    lines = []
    with write_throttled(loop_dev, 1500) as group:
        script = f'echo $$ > {group / "cgroup.procs"} && exec "$@"'
        with subprocess.Popen(["sh", "-c", script, "sh", *args], stdout=subprocess.PIPE, text=True) as proc:
            assert proc.stdout is not None
            watchdog = threading.Timer(LIMIT_S, proc.kill)  # a hung run fails the test instead of CI
            watchdog.start()
            for line in proc.stdout:
                lines.append(line)
                if line.startswith("PTS round 2/"):
                    proc.send_signal(signal.SIGINT)  # Ctrl-C: stop after the current step
            watchdog.cancel()
            assert proc.wait(timeout=LIMIT_S) == 3, "".join(lines)
        first = run_id_of("".join(lines))
        rec = record_of(db, first)
        # Ctrl-C during round 2 stops after the step running: round 2, or round 3 where the machine was so
        # loaded that the signal landed after round 3 had begun (1-s rounds)
        kept = [r["round"] for r in rec["rounds"] if r["tracking"]]
        assert kept in ([1, 2], [1, 2, 3]) and not rec["decision"]["reached"], kept
        again = [*CLI, "pts", loop_dev, "--db", str(db), "--allow-write", loop_dev, "--resume", str(first)]
        done = subprocess.run(["sh", "-c", script, "sh", *again], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PTS round 1/" not in done.stdout and f"PTS round {len(kept) + 1}/8" in done.stdout, done.stdout
    assert "Steady state reached at round 5 (window rounds 1-5)" in done.stdout, done.stdout
    second = run_id_of(done.stdout)
    rec2 = record_of(db, second)
    assert rec2["resumed_from"]["run"] == first and rec2["purge"] is None and rec2["fill_step"] is None
    assert [r["run"] for r in rec2["rounds"]] == [first] * len(kept) + [None] * (5 - len(kept))
    assert rec2["settings"]["round_time_s"] == 1 and rec2["test"] == "iops" and rec2["variant"] == "client"
    text = pdf_text(report(db, [second], tmp_path / "resumed")["pdf"])
    assert f"in run {first}, which this run resumes" in text and "reached at round 5" in text
    refused = subprocess.run([*again[:-1], str(second)], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "is decided (Steady state reached at round 5" in refused.stderr
