"""Validity notes (kept with each run in runs.host_json) reach every plain format: the terminal's
`fiometer compare`, the tables CSV, the long CSV's ``validity`` column and the workbook's Summary sheet."""

from __future__ import annotations

import csv
import io
import subprocess
import sys

import pytest

from app.analysis.validity import Note
from app.report.csv_out import render_csv, render_tables_csv
from app.report.document import build_report
from app.report.xlsx import write_xlsx
from app.store.database import open_store
from app.store.run_extras import save_notes
from tests.stored_runs import AFTER, BEFORE, RunSpec, record

CACHE = Note(
    "cache",
    "93 % of 120,000 reads never reached the disk",
    "Use direct=1 or a file 3x the RAM",
    "93 % of 120,000 reads",
    step=0,
    manager="M1",
)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "s.db"
    with open_store(path) as s:
        record(s, RunSpec(BEFORE, tags=["before"]))
        record(s, RunSpec(AFTER, tags=["after"]))
        save_notes(s, 1, [])
        save_notes(s, 2, [CACHE.to_json()])
    return path


def test_compare_in_the_terminal_prints_the_validity_notes_and_the_difference(db):
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "--db", str(db), "compare", "1", "2"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    start = lines.index("Validity:")
    said = lines[start + 1 : start + 3]
    assert said[0].startswith("  - Run 2 (after): ") and CACHE.text in said[0]
    # the difference is named, without saying the run's note a second time
    assert (
        said[1].startswith("  - after carries a note on cache and before does not")
        and CACHE.text not in said[1]
    )
    assert start < next(
        i for i, ln in enumerate(lines) if ln.startswith("Access specification")
    )  # before tables


def test_the_csv_files_carry_the_notes(db):
    with open_store(db) as s:
        report = build_report(s, [1], [[2]])
    tables = [row[0] if row else "" for row in csv.reader(io.StringIO(render_tables_csv(report)))]
    assert tables.index("Validity") < next(i for i, ln in enumerate(tables) if ln.startswith("after (run 2)"))
    assert any(CACHE.text in ln and ln.startswith("Run 2 (after)") for ln in tables)
    rows = list(csv.DictReader(io.StringIO(render_csv(report))))
    flagged = {(r["run"], r["step"], r["manager"]) for r in rows if r["validity"]}
    assert flagged == {("2", "1", "M1"), ("2", "1", "")}  # step 1 of run 2: its M1 rows and the ALL row
    assert {r["validity"] for r in rows if r["validity"]} == {"Cache"}


def test_the_workbook_summary_sheet_leads_with_the_notes(db, tmp_path):
    from tests.integration.test_report import Workbook  # the tests' small .xlsx reader

    with open_store(db) as s:
        report = build_report(s, [1], [[2]])
    path = tmp_path / "r.xlsx"
    write_xlsx(report, path)
    wb = Workbook(path)
    col = [r[0] for r in wb.rows("Summary") if r and r[0]]
    v = col.index("Validity")
    assert CACHE.text in col[v + 1] and col[v + 1].startswith("Run 2 (after)")
    assert v < col.index("after (run 2) compared with before (run 1)")
    data = wb.rows("data")
    assert data[0][-1] == "validity"
    assert {r[-1] for r in data[1:] if len(r) == len(data[0])} == {"", "Cache"}  # blank where no note


def test_a_note_both_runs_carry_alike_is_said_once_naming_both(tmp_path):
    with open_store(tmp_path / "s.db") as s:
        record(s, RunSpec(BEFORE, tags=["before"]))
        record(s, RunSpec(AFTER, tags=["after"]))
        save_notes(s, 1, [CACHE.to_json()])
        save_notes(s, 2, [CACHE.to_json()])
        report = build_report(s, [1], [[2]])
    said = [v for v in report.validity if CACHE.text in v]
    assert len(said) == 1 and said[0].startswith("Runs 1 (before), 2 (after): Cache (step 1, on M1): ")


def test_compare_prints_on_a_console_without_the_arrow(monkeypatch):
    """Windows' console and pipes are cp1252: no arrow, no minus sign; the line is printed, not an error."""
    import io as _io

    from app.cli.report_commands import say

    raw = _io.BytesIO()
    out = _io.TextIOWrapper(raw, encoding="cp1252")
    monkeypatch.setattr(sys, "stdout", out)
    say("queue depth 64 \u2192 8; IOPS \u22128.1 % \u00b1 3 %")
    out.flush()
    assert raw.getvalue().decode("cp1252").splitlines() == ["queue depth 64 -> 8; IOPS -8.1 % +/- 3 %"]
