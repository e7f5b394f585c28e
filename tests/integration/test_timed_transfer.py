"""A timed transfer (the bundled dd-style example, made small) moves exactly its bytes on a real file with
real fio, and `show` states each step's elapsed time."""

import json
import subprocess
import sys

import pytest

from app.model.units import format_elapsed

pytestmark = pytest.mark.fio


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def test_timed_transfer_moves_its_bytes_and_reports_elapsed_time(tmp_path):
    assert cli("examples", "--save", tmp_path).returncode == 0
    doc = json.loads((tmp_path / "timed.json").read_text())
    assert doc["plan"]["setup"]["transfer_bytes"] == 4 << 30
    doc["plan"]["setup"]["transfer_bytes"] = 8 << 20
    plan = tmp_path / "small.json"
    plan.write_text(json.dumps(doc))
    jobs = tmp_path / "jobs"
    assert cli("plan", plan, "--jobs", jobs, "--map", f"TESTFILE={tmp_path / 't.tst'}").returncode == 0
    text = (jobs / "step-001-local.fio").read_text()
    assert "time_based" not in text and "io_size=8388608" in text
    assert subprocess.run(["fio", "--parse-only", str(jobs / "step-001-local.fio")]).returncode == 0

    db = tmp_path / "r.db"
    out = cli("--db", db, "run", plan, "--map", f"TESTFILE={tmp_path / 't.tst'}", "--test-file-size", "16M")
    assert out.returncode == 0, out.stderr + out.stdout
    shown = json.loads(cli("--db", db, "show", "1", "--json").stdout)
    moved = shown["transfers"]
    assert [t["bytes"] for t in moved] == [8 << 20, 8 << 20]  # fio stopped at exactly the bytes asked for
    assert all(t["seconds"] > 0 for t in moved)
    lines = cli("--db", db, "show", "1").stdout
    assert f"step 1 Sequential write 1M: 8 MiB in {format_elapsed(moved[0]['seconds'])}" in lines


def test_elapsed_time_reads_as_people_say_it():
    assert format_elapsed(0.42) == "0.42 s" and format_elapsed(38.24) == "38.2 s"
    assert format_elapsed(216) == "3 min 36 s" and format_elapsed(3720) == "1 h 02 min"
