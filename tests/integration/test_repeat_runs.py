"""The README's before/after workflow on one test file: repeats need no arming, a missing folder is refused
in words (fio would create it), and remote targets say what could not be verified."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.engine.guards.safety import record_beside
from app.engine.run.managers import build_endpoints
from app.engine.run.runner import ManagerEndpoint, Runner, RunOptions, RunRefused
from app.model import planfile
from app.model.plan import LOCAL, SpecLine, Target
from tests.helpers import grid, prepared

REPO = Path(__file__).resolve().parents[2]


def fiometer(db: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "--db", str(db), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )


def iometer_like_plan(path: Path) -> Path:
    """Iometer's 'C:' target, a 4 KiB random 70 % read spec (it writes)."""
    plan = grid(1, 1, 1)
    plan.name = "before-after"
    plan.managers[0].host = LOCAL
    plan.specs[0].lines = [SpecLine(4096, 100, 70, 100)]
    plan.managers[0].workers[0].targets = [Target("C:")]
    planfile.save(plan, path)
    return path


@pytest.mark.fio
def test_three_runs_before_and_two_after_on_one_test_file_need_no_arming(tmp_path):
    plan = iometer_like_plan(tmp_path / "plan.json")
    db = tmp_path / "results.db"
    data = tmp_path / "data"
    data.mkdir()
    for tag in ("before", "before", "before", "after", "after"):
        out = fiometer(
            db,
            "run",
            str(plan),
            "--map",
            f"C:={data / 'iobw.tst'}",
            "--run-time",
            "1",
            "--test-file-size",
            "1M",
            "--tag",
            tag,
        )
        assert out.returncode == 0, out.stdout + out.stderr
    runs = json.loads(fiometer(db, "runs", "--json").stdout)
    assert sorted(r["tags"][0] for r in runs) == ["after", "after", "before", "before", "before"]
    assert str(data / "iobw.tst") in record_beside(db)


def test_a_missing_folder_is_refused_in_words_and_never_created(tmp_path):
    plan = iometer_like_plan(tmp_path / "plan.json")
    out = fiometer(
        tmp_path / "r.db",
        "run",
        str(plan),
        "--map",
        f"C:={tmp_path / 'no' / 'such' / 'iobw.tst'}",
        "--run-time",
        "1",
    )
    assert out.returncode == 2
    assert f"the folder {tmp_path / 'no' / 'such'} does not exist" in out.stderr
    assert not (tmp_path / "no").exists()


def local_plan(target: Target):
    plan = grid(1, 1, 1)
    plan.managers[0].host = LOCAL
    plan.specs[0].lines = [SpecLine(4096, 100, 0, 100)]
    plan.managers[0].workers[0].targets = [target]
    return plan


def test_the_runner_refuses_a_missing_folder_and_says_only_asking_would_help(tmp_path):
    plan = local_plan(Target(str(tmp_path / "new" / "iobw.tst")))
    with pytest.raises(RunRefused) as e:
        prepared(Runner(plan, build_endpoints(plan), None, RunOptions(run_time=1)))
    assert e.value.missing_folders == [str(tmp_path / "new")] and e.value.only_asks


def test_the_runner_refuses_unarmed_writes_and_lists_them(tmp_path):
    (tmp_path / "link").symlink_to("/dev/null")
    plan = local_plan(Target(str(tmp_path / "link")))
    with pytest.raises(RunRefused) as e:
        prepared(Runner(plan, build_endpoints(plan), None, RunOptions(run_time=1)))
    (risk,) = e.value.risks
    assert risk.path == "/dev/null" and risk.in_use and e.value.only_asks
    runner = prepared(
        Runner(
            plan,
            build_endpoints(plan),
            None,
            RunOptions(run_time=1, allow_write={"/dev/null"}, allow_write_in_use={str(tmp_path / "link")}),
        )
    )
    assert "allow_mounted_write=1" in runner.jobfiles[0]["M1"].text


def test_remote_targets_carry_a_note_of_what_could_not_be_verified():
    plan = grid(1, 1, 1)
    plan.managers[0].workers[0].targets = [Target("/data/iobw.tst")]

    def never():
        raise AssertionError("not started")

    # the null engine: nothing is opened, so the test files are not probed through fio (which would start
    # a transport; see tests/integration/test_remote_file_safety.py)
    runner = prepared(
        Runner(
            plan,
            {"M1": ManagerEndpoint("M1", "Linux", never, "10.0.0.9:8765")},
            None,
            RunOptions(run_time=1, engine="null"),
        )
    )
    (note,) = runner.notes
    assert "manager 'M1'" in note and "cannot verify /data/iobw.tst" in note
