"""The before/after workflow with repeats, with real fio runs: three runs tagged "before" and two tagged
"after" of one plan; `fiometer compare` and `report` compare the means and take the noise from the repeats.
The "after" runs really are slower (fio's psync engine on a file instead of the null engine), so the change
is real and larger than the noise."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest

from app.model import planfile
from app.model.plan import LOCAL, AccessSpec, SpecLine, Target
from tests.helpers import grid

pytestmark = pytest.mark.fio


def cli(*args):
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def five_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("repeats")
    plan = grid(1, 1, 1, qd=1)
    plan.specs[0].lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]  # 4 KiB random read
    plan.managers[0].host = LOCAL
    target = tmp / "iobw.tst"
    target.write_bytes(b"\0" * (8 << 20))  # reads only: an existing file is fine
    plan.managers[0].workers[0].targets = [Target(str(target))]
    path = tmp / "plan.json"
    planfile.save(plan, path)
    db = tmp / "r.db"
    for tag, engine in (("before", "null"),) * 3 + (("after", "psync"),) * 2:
        out = cli(
            "--db",
            db,
            "run",
            path,
            "--run-time",
            "1",
            "--engine",
            engine,
            "--tag",
            tag,
            "--test-file-size",
            "8M",
        )
        assert out.returncode == 0, out.stderr
    return db, tmp


def test_compare_groups_show_the_change_with_noise_from_the_repeats(five_runs):
    db, _ = five_runs
    out = cli("--db", db, "compare", "1,2,3", "4,5")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "after (runs 4, 5) compared with before (runs 1, 2, 3)" in text
    assert "Noise \u00b1" in text and "twice the larger coefficient of variation of repeated runs" in text
    iops = next(ln for ln in text.splitlines() if ln.startswith("S ") and "%" in ln)  # first row: IOPS
    assert iops.rstrip().endswith("worse")  # psync on a file is far slower than the null engine


def test_single_runs_find_their_repeats_by_plan_and_tags(five_runs):
    db, _ = five_runs
    out = cli("--db", db, "compare", "3", "5")
    assert out.returncode == 0, out.stderr
    assert "Noise \u00b1" in out.stdout
    assert "before: 3 runs (3, 2, 1)" in out.stdout and "after: 2 runs (5, 4)" in out.stdout


def test_report_carries_the_noise_column(five_runs):
    db, tmp = five_runs
    out = cli("--db", db, "report", "1,2,3", "--compare", "4,5", "--csv-tables", tmp / "r.csv")
    assert out.returncode == 0, out.stderr
    rows = list(csv.reader((tmp / "r.csv").read_text(encoding="utf-8-sig").splitlines()))
    assert any("Noise \u00b1" in r for r in rows)


def test_a_step_whose_workers_run_different_specs_stores_every_definition(tmp_path):
    from app.analysis.compare import step_key
    from app.store.database import open_store
    from app.store.queries import get_run

    plan = grid(1, 2, 1, specs=("A",), qd=2)
    plan.specs.append(AccessSpec("B", [SpecLine(65536, 100, 0, 0, 0, 1, 0, 0)]))
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[1].specs = ["B"]
    for i, w in enumerate(plan.managers[0].workers):
        w.targets = [Target(str(tmp_path / f"t{i}.tst"))]
    path = tmp_path / "plan.json"
    planfile.save(plan, path)
    out = cli("--db", tmp_path / "r.db", "run", path, "--run-time", "1", "--engine", "null")
    assert out.returncode == 0, out.stderr
    with open_store(tmp_path / "r.db") as store:
        (step,) = get_run(store, 1).steps
    assert step.spec_name == "A + B"
    assert step.spec_text == "4096,100,100,100,0,1,0,0 | 65536,100,0,0,0,1,0,0"
    assert step_key(step).definition == "4096,100,100,100,0,1,0,0 | 65536,100,0,0,0,1,0,0"
