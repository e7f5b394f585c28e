"""Faults a long benchmark meets, each ending in plain words with what was recorded kept."""

import subprocess
import sys

import pytest

from app.model import planfile
from app.model.plan import LOCAL, SpecLine, Target
from app.store import get_run, list_runs, open_store
from tests.helpers import grid

pytestmark = pytest.mark.fio


def test_target_file_system_full(tmp_path, small_fs):
    plan = grid(1, 1, 1, qd=4)
    plan.specs[0].lines = [SpecLine(65536, 100, 0, 0, 0, 1, 0, 0)]  # sequential writes
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(small_fs / "iobw.tst"))]
    path = tmp_path / "plan.json"
    planfile.save(plan, path)
    db = tmp_path / "r.db"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(db),
            "run",
            str(path),
            "--run-time",
            "3",
            "--test-file-size",
            "16M",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    text = out.stdout + out.stderr
    # Fiometer lays the test file out itself, after checking the free space (engine.held_targets)
    said = "needs 16.0 MiB (16777216 bytes) but its file system has"
    assert said in text and str(small_fs / "iobw.tst") in text and "make the test file smaller" in text
    assert "Traceback" not in text
    assert not (small_fs / "iobw.tst").exists()
    store = open_store(db)
    (summary,) = list_runs(store)
    run = get_run(store, summary.id)
    assert run.status == "failed" and run.steps[0].status == "failed"
    assert any(said in m.text for m in run.steps[0].messages + run.messages)
    store.close()
