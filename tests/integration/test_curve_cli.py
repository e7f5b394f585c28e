"""`fiometer curve` end to end on the null engine (no throttle needed): the refusal of a plan whose steps run
until stopped, the stored run's curve in `show`, `show --json` and the HTML report (with its Validity section
first)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from app.model import planfile
from app.model.plan import SpecLine
from tests.helpers import grid, spec

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")]


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def plan(tmp_path, run_time: int):
    p = grid(1, 1, 1)
    p.specs = [spec("8k random 70 % read", SpecLine(8192, 100, 70, 100, 0, 1, 0, 0))]
    p.managers[0].workers[0].specs = ["8k random 70 % read"]
    p.managers[0].workers[0].targets[0].name = "T"
    p.managers[0].workers[0].data_pattern = 2
    p.setup.run_time = run_time
    path = tmp_path / f"plan-{run_time}.json"
    planfile.save(p, path)
    return path


def test_a_plan_that_runs_until_stopped_is_refused(tmp_path):
    done = cli(
        "curve",
        plan(tmp_path, 0),
        "--p99-max",
        5,
        "--engine",
        "null",
        "--map",
        f"T={tmp_path / 'n.dat'}",
        "--db",
        tmp_path / "r.db",
    )
    assert done.returncode == 2 and "set a run time" in done.stderr


def test_curve_is_stored_shown_and_reported(tmp_path):
    db = tmp_path / "r.db"
    done = cli(
        "curve",
        plan(tmp_path, 1),
        "--p99-max",
        50,
        "--max-load",
        32,
        "--engine",
        "null",
        "--map",
        f"T={tmp_path / 'n.dat'}",
        "--test-file-size",
        "8M",
        "--db",
        db,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Curve: 8k random 70 % read:" in done.stdout and "at QD 32 with p99" in done.stdout
    shown = json.loads(cli("show", 1, "--json", "--db", db).stdout)
    (curve,) = shown["curve"]
    assert curve["answer_load"] == 32 and curve["steps_measured"] <= 8
    loads = [p["load"] for p in curve["points"]]
    # each load measured, as it was, with its p99 against the limit (issue 38.5)
    tried = [
        ln for ln in done.stdout.splitlines() if ln.startswith("  load search: 8k random 70 % read: QD ")
    ]
    assert [int(ln.split("QD ")[1].split()[0].rstrip(",")) for ln in tried] == loads, done.stdout
    assert all("ms ≤ 50 ms, within the limit" in ln for ln in tried), tried
    assert loads[-1] == 32 and sum(p["confirm"] for p in curve["points"]) == 1
    assert len(shown["steps"]) == len(curve["points"])  # every measured step is a stored step
    text = cli("show", 1, "--db", db).stdout
    assert "Curve (the highest load whose p99 keeps the limit):" in text
    html = tmp_path / "r.html"
    assert cli("report", 1, "--html", html, "--db", db).returncode == 0
    page = html.read_text()
    assert page.index('id="validity"') < page.index('id="environment"')
    assert "highest load within p99 50 ms" in page and "8k random 70 % read: " in page
