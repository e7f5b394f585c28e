""" "Record Last Update Results: ENABLED" makes `fiometer run --results-file FILE.csv` write Iometer's per-update
file instFILE.csv as the run goes (real fio, null engine, 1-s updates), laid out as Iometer 1.1.0 lays out its
own (compared line shape by line shape with tests/fixtures/iometer-results/inst-two-specs-1.1.0.csv), and append
the run to FILE.csv as Iometer's results.csv when it ends."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.analysis.iometer_results_reader import read_results_file
from app.model import planfile
from app.model.plan import LOCAL, AccessSpec, SpecLine, Target
from app.store.database import open_store
from app.store.queries import get_run
from tests.helpers import grid, shared_dir
from tests.platform_marks import posix_only

pytestmark = pytest.mark.fio

IOMETER_LOG = shared_dir() / "iometer-results" / "inst-two-specs-1.1.0.csv"
STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}$")


def cli(*args) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True)


def shape(path: Path) -> list[str]:
    """Each line as what it is ('Results, a time stamp, a WORKER update, a WORKER average, ALL...), runs of
    the same kind counted once: two files of one layout have the same shape whatever their numbers."""
    out: list[str] = []
    for line in path.read_bytes().decode("cp1252").split("\r\n"):
        cells = line.split(",")
        if line.startswith("'"):
            kind = cells[0]
        elif STAMP.match(cells[0]) and len(cells) > 1:
            kind = f"row {cells[1]}" + (" with spec" if cells[3] else "")
        elif STAMP.match(line):
            kind = "time"
        else:
            kind = "value" if line else "end"
        if not out or out[-1] != kind:
            out.append(kind)
    return out


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("updatelog")
    plan = grid(1, 2, 1, specs=("4 KiB random read",), qd=2)
    plan.specs.append(AccessSpec("64 KiB write", [SpecLine(65536, 100, 0, 0, 0, 1, 0, 0)]))
    plan.setup.iometer.record_last_update = True
    plan.setup.description = "update log, two specs"
    plan.managers[0].host = LOCAL
    for i, w in enumerate(plan.managers[0].workers):
        w.specs = ["4 KiB random read", "64 KiB write"]
        w.targets = [Target(str(tmp / f"t{i}.tst"))]
    planfile.save(plan, tmp / "plan.json")
    results = tmp / "out" / "results.csv"
    results.parent.mkdir()
    out = cli(
        "--db",
        tmp / "r.db",
        "run",
        tmp / "plan.json",
        "--run-time",
        "3",
        "--ramp-up",
        "0",
        "--engine",
        "null",
        "--test-file-size",
        "1M",
        "--results-file",
        results,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return tmp, results, out


def test_the_log_is_written_beside_the_results_file_in_iometers_layout(ran):
    _tmp, results, out = ran
    log = results.with_name("instresults.csv")
    assert f"Iometer per-update results: {log}" in out.stdout
    data = log.read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") > 0  # CRLF, as Iometer writes on Windows
    ours, theirs = (
        data.decode("cp1252").split("\r\n"),
        IOMETER_LOG.read_bytes().decode("cp1252").split("\r\n"),
    )
    header = next(ln for ln in theirs if ln.startswith("TimeStamp,"))
    assert [ln for ln in ours if ln.startswith("TimeStamp,")] == [
        header,
        header,
    ]  # one per test, Iometer's text
    rows = [ln.split(",") for ln in ours if ln[:1].isdigit() and "," in ln and STAMP.match(ln.split(",")[0])]
    assert rows and {len(r) for r in rows} == {81}  # Iometer's 80 columns after the time stamp
    assert shape(log) == shape(
        IOMETER_LOG
    )  # head, per test: specs, header, updates, averages, ALL, stamp; End
    stamps = [ln.split(",")[0] for ln in ours if STAMP.match(ln.split(",")[0])]
    assert stamps == sorted(stamps)  # times never go back, though fio's reports arrive in bursts
    updates = {ln.split(",")[0] for ln in ours if ln.split(",")[1:2] == ["WORKER"] and STAMP.match(ln[:23])}
    said = re.search(r"Iometer per-update results: .* \((\d+) update\(s\)\)", out.stdout)
    assert said and int(said[1]) == len(updates)  # one per time stamp, not per batch of reports handled


def test_the_log_reads_back_with_every_update_and_the_final_numbers(ran):
    tmp, results, _out = ran
    (series,) = read_results_file(results.with_name("instresults.csv"))
    assert series.description == "update log- two specs"  # Iometer writes a comma in the description as '-'
    assert [t.specs[0].name for t in series.tests] == ["4 KiB random read", "64 KiB write"]
    with open_store(tmp / "r.db") as store:
        run = get_run(store, 1)
    for test, step in zip(series.tests, run.steps, strict=True):
        assert [r.kind for r in test.rows] == ["WORKER", "WORKER", "ALL"]
        assert [r.name for r in test.rows[:2]] == ["W1", "W2"]
        assert len(test.updates) >= 2 * 2  # two workers (one target each), at least two 1-s updates each
        assert {u.name for u in test.updates} == {"W1", "W2"} and all(
            u.kind == "WORKER" for u in test.updates
        )
        times = [u.at for u in test.updates]
        assert times == sorted(times)
        stored = next(r.metrics for r in step.results if r.level == "all")
        final = test.rows[-1]
        assert int(final.text("read i/os")) + int(final.text("write i/os")) == stored.ios
        # the updates are the intervals fio reported, so together they hold every I/O of the test
        assert sum(int(u.text("read i/os")) + int(u.text("write i/os")) for u in test.updates) == stored.ios
        assert float(final.text("iops")) == pytest.approx(stored.iops, rel=1e-6)


def test_the_run_is_appended_to_the_results_file_as_iometers_results_csv(ran):
    _tmp, results, out = ran
    assert f"Iometer results appended to {results}" in out.stdout
    (series,) = read_results_file(results)
    assert len(series.tests) == 2 and series.tests[0].rows[0].kind == "ALL"
    assert results.read_bytes().endswith(b"'End Test\r\n")


def test_without_a_results_file_the_run_says_how_to_get_the_log(tmp_path):
    plan = grid(1, 1, 1)
    plan.setup.iometer.record_last_update = True
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "t.tst"))]
    planfile.save(plan, tmp_path / "plan.json")
    out = cli(
        "--db",
        tmp_path / "r.db",
        "run",
        tmp_path / "plan.json",
        "--run-time",
        "1",
        "--engine",
        "null",
        "--test-file-size",
        "1M",
    )
    assert out.returncode == 0, out.stderr
    assert "Record Last Update Results is ENABLED" in out.stdout and "--results-file" in out.stdout
    assert not list(tmp_path.glob("inst*"))


def test_a_log_that_cannot_be_written_refuses_the_run_before_fio_starts(tmp_path):
    plan = grid(1, 1, 1)
    plan.setup.iometer.record_last_update = True
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "t.tst"))]
    planfile.save(plan, tmp_path / "plan.json")
    out = cli(
        "--db",
        tmp_path / "r.db",
        "run",
        tmp_path / "plan.json",
        "--run-time",
        "1",
        "--engine",
        "null",
        "--test-file-size",
        "1M",
        "--results-file",
        tmp_path / "missing" / "results.csv",
    )
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "instresults.csv" in out.stderr and "cannot be written" in out.stderr
    assert not (tmp_path / "t.tst").exists()  # nothing ran


@posix_only("a Windows drive letter is placed on a Windows manager; the refusal needs a POSIX one")
def test_a_run_that_cannot_start_leaves_no_empty_log_behind(tmp_path):
    plan = grid(1, 1, 1)
    plan.setup.iometer.record_last_update = True
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target("C:")]  # a Windows drive, not placed on this Linux manager
    planfile.save(plan, tmp_path / "plan.json")
    out = cli(
        "--db",
        tmp_path / "r.db",
        "run",
        tmp_path / "plan.json",
        "--run-time",
        "1",
        "--engine",
        "null",
        "--results-file",
        tmp_path / "results.csv",
    )
    assert out.returncode != 0 and "cannot start" in out.stderr, out.stdout + out.stderr
    assert not list(tmp_path.glob("*results.csv"))
