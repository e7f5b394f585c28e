"""A run whose stored plan (runs.plan_json) is damaged, in every way a file can be: compare and report (each
format) go on with what the store holds and say which run's plan cannot be read, never an internal error
(issue 40: the long-run benchmark's synthetic plan once stopped both with 'internal error (PlanFileError)')."""

from __future__ import annotations

import csv
import io
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from app.model.planfile import VERSION
from app.store.database import open_store
from tests.stored_runs import AFTER, BEFORE, RunSpec, record

ROOT = Path(__file__).resolve().parents[2]
SAID = "its stored plan cannot be read"


def plan(body: str) -> str:
    """A plan document of this version whose plan is ``body`` (JSON text)."""
    return f'{{"format": "fiometer-plan", "version": {VERSION}, "plan": {body}}}'


DAMAGED = {
    "not JSON": "{not json",
    "cut short": plan('{"managers": ['),
    "empty": "",
    "a list": "[1, 2, 3]",
    "a string": '"plan"',
    "a number": "42",
    "null": "null",
    "no plan in it": '{"synthetic": true}',
    "a newer format version": '{"format": "fiometer-plan", "version": 999, "plan": {}}',
    "plan not an object": plan("[]"),
    "managers not a list": plan('{"managers": "M1"}'),
    "worker not an object": plan('{"managers": [{"name": "M1", "host": "local", "workers": [7]}]}'),
    "setup of wrong types": plan('{"setup": {"run_time": "long", "engine": 5, "ramp_up": -1}}'),
    "specs of wrong types": plan('{"specs": [{"name": 1, "lines": "x"}]}'),
    "a spec line of wrong types": plan(
        '{"specs": [{"name": "S", "lines": [{"size": "big", "reads": 1e400}]}]}'
    ),
    "deeply nested": "[" * 5000 + "]" * 5000,
    "NUL and controls": plan('"\\u0000\\u0001"'),
}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    path = tmp_path_factory.mktemp("damaged") / "h.db"
    with open_store(path) as store:
        record(store, RunSpec(BEFORE, tags=["before"]))
        record(store, RunSpec(AFTER, tags=["after"]))
    return path


def cli(*args) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "app.cli", *map(str, args)]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("damage", list(DAMAGED))
def test_compare_and_report_say_which_plan_cannot_be_read(made, tmp_path, damage):
    db = tmp_path / "h.db"
    db.write_bytes(made.read_bytes())
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET plan_json = ? WHERE id = 2", (DAMAGED[damage],))
    conn.close()
    compared = cli("--db", db, "compare", 1, 2)
    assert compared.returncode == 0, compared.stderr
    assert "internal error" not in compared.stderr + compared.stdout
    assert "(run 2) compared with" in compared.stdout
    assert f"Run 2 (after): {SAID}" in compared.stdout + compared.stderr
    files = {k: tmp_path / f"r.{k}" for k in ("html", "pdf", "xlsx", "csv")}
    reported = cli(
        "--db", db, "report", 1, "--compare", 2, *(x for k, p in files.items() for x in (f"--{k}", p))
    )
    assert reported.returncode == 0, reported.stderr
    assert "internal error" not in reported.stderr
    assert SAID in files["html"].read_text(encoding="utf-8")
    assert all(p.stat().st_size > 0 for p in files.values())
    rows = list(csv.DictReader(io.StringIO(files["csv"].read_text(encoding="utf-8-sig"))))
    assert {r["run"] for r in rows} == {"1", "2"}  # the damaged run's results are all there
