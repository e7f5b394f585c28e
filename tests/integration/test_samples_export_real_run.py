"""On a real fio run (two managers' worth of workers, null engine, a few seconds per step), the streamed
samples export written by the CLI is byte for byte the export that held the whole run in memory."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.analysis.samples_export import samples_csv_bytes
from app.model import planfile
from app.model.plan import LOCAL, Target
from app.store.database import open_store
from app.store.queries import get_run
from tests.helpers import grid
from tests.unit.test_samples_export_stream import export_as_before

pytestmark = pytest.mark.fio


def test_the_cli_samples_export_of_a_real_run_equals_the_whole_export(tmp_path):
    plan = grid(1, 2, 2, specs=("A", "B"), qd=2)
    plan.managers[0].host = LOCAL
    for i, w in enumerate(plan.managers[0].workers):
        w.targets = [Target(str(tmp_path / f"t{i}{j}.tst")) for j in range(2)]
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
            "4",
            "--engine",
            "null",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    csv_path = tmp_path / "s.csv"
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "--db", str(db), "export", "1", "--samples", str(csv_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    with open_store(db) as store:
        run = get_run(store, 1)
        before = export_as_before(store, run)
        assert b"".join(samples_csv_bytes(store, run, 1.5)) == before  # stretches shorter than a step
    assert csv_path.read_bytes() == before
    assert before.count(b"\r\n") > 1 + 2 * 3 * 7  # 2 steps, 3+ seconds, ALL + manager + 2 workers + 4 targets
