"""Every CSV Fiometer writes (report, Iometer results.csv export) neutralises cells that start like a
formula, and writes real negative numbers as numbers."""

from __future__ import annotations

from datetime import datetime

import pytest

from app.analysis.csv_safe import safe_cell
from app.analysis.iometer_csv import AMBIGUOUS, COLUMNS, HEADER, CsvRow, CsvStep, write_results_csv
from app.model.metrics import Metrics
from app.model.plan import AccessSpec, SpecLine


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+2", "'=1+2"),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-", "'-"),
        ("--x", "'--x"),
        ("-1", "-1"),
        ("-2.5", "-2.5"),
        ("+3", "+3"),
        ("-3e-05", "-3e-05"),
        ("-.5", "-.5"),
        (-1, "-1"),
        (-2.5, "-2.5"),
        (0.1, "0.1"),
        (None, ""),
        ("Worker 1", "Worker 1"),
        ("a=b", "a=b"),
    ],
)
def test_formula_cells_are_neutralised_numbers_are_not(value, cell):
    assert safe_cell(value) == cell


def test_the_iometer_export_neutralises_names_and_keeps_its_negative_numbers():
    m = Metrics(
        seconds=10,
        read_ios=1000,
        read_bytes=8192000,
        read_iops=100.0,
        read_bps=819200.0,
        read_lat_sum_ns=2e9,
        read_lat_n=1000,
        read_lat_max_ns=9e6,
        read_hist={150_000: 1000},
    )
    spec = AccessSpec('=HYPERLINK("http://x")', [SpecLine(8192, 100, 65, 60, 0, 1, 0, 0)], "ALL")
    t = datetime(2026, 11, 21, 10, 0, 0)
    step = CsvStep(
        [spec],
        t,
        t,
        [CsvRow("ALL", "All", m, spec.name, 1, 1, 1), CsvRow("WORKER", "@evil", m, spec.name, None, None, 1)],
    )
    lines = write_results_csv("NORMAL", "+desc", t, [step], completed=True).split("\r\n")
    assert lines[1] == "0,'+desc"
    assert '\'=HYPERLINK("http://x"),1' in lines
    all_row = dict(zip(COLUMNS, lines[lines.index(HEADER) + 1].split(","), strict=True))
    assert all_row["Access Specification Name"] == '\'=HYPERLINK("http://x")'
    assert all_row["Starting Sector"] == str(AMBIGUOUS) == "-1"  # a real negative number stays a number
    worker = dict(zip(COLUMNS, lines[lines.index(HEADER) + 2].split(","), strict=True))
    assert worker["Target Name"] == "'@evil"
