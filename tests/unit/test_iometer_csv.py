"""Iometer results.csv layout: the header is byte-identical to the fixture written in Iometer 1.1.0's layout."""

from datetime import datetime

from app.analysis.iometer_csv import COLUMNS, HEADER, CsvRow, CsvStep, iometer_bins, write_results_csv
from app.model.metrics import Metrics
from app.model.plan import AccessSpec, SpecLine
from tests.helpers import shared_dir


def fixture_lines():
    path = shared_dir() / "iometer-results" / "bench_results-1.1.0.csv"
    return path.read_bytes().decode("cp1252").split("\r\n")


def test_header_matches_iometer_1_1_0_layout():
    assert HEADER in fixture_lines()
    assert len(COLUMNS) == 80


def test_bins_use_iometer_edges():
    bins = iometer_bins({40_000: 2, 50_000: 1, 999_999: 4, 3_000_000_000: 5, 20_000_000_000: 1})
    assert bins[0] == 2 and bins[1] == 1 and bins[4] == 4  # 0-50us, 50-100us, 0.5-1ms
    assert bins[17] == 5 and bins[20] == 1  # "2 to 4.7 s" (really 2-4 s) and ">= 10 s"
    assert sum(bins) == 13


def test_block_layout_and_numbers():
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
    spec = AccessSpec("RealLife", [SpecLine(8192, 100, 65, 60, 0, 1, 0, 0)], "ALL")
    t = datetime(2026, 11, 21, 10, 0, 0, 123000)
    step = CsvStep(
        [spec],
        t,
        t,
        [
            CsvRow("ALL", "All", m, "RealLife", 1, 1, 1),
            CsvRow("MANAGER", "host", m, "RealLife", None, 1, 1, 0, 8000000, 64),
        ],
    )
    text = write_results_csv("NORMAL", "IO-Test", t, [step], completed=True)
    lines = text.split("\r\n")
    assert lines[:6] == [
        "'Test Type,Test Description",
        "0,IO-Test",
        "'Version",
        "1.1.0",
        "'Time Stamp",
        "2026-11-21 10:00:00:123",
    ]
    assert "RealLife,1" in lines and "8192,100,65,60,0,1,0,0," in lines
    all_row = dict(zip(COLUMNS, lines[lines.index(HEADER) + 1].split(","), strict=True))
    assert all_row["IOps"] == "100.000000" and all_row["MBps (Decimal)"] == "0.819200"
    assert all_row["Average Response Time"] == "2.000000" and all_row["Maximum Response Time"] == "9.000000"
    assert all_row["Total Raw Run Time"] == ""  # Iometer leaves raw columns empty on ALL rows
    assert all_row["100 to 200 uS"] == "1000"
    mgr = dict(zip(COLUMNS, lines[lines.index(HEADER) + 2].split(","), strict=True))
    assert mgr["Total Raw Run Time"] == "10000000000" and mgr["Processor Speed"] == "1000000000.000000"
    assert (mgr["Maximum Size"], mgr["Queue Depth"]) == ("8000000", "64")
    assert lines[-2] == "'End Test"
