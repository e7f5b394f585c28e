"""Iometer's per-update log (inst<results>.csv, a TimeStamp column first) imports as a run with samples over
time, so old Iometer runs chart over time beside new fio runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.analysis.iometer_import import import_results_file
from app.analysis.iometer_results_reader import read_results_file
from app.store.database import open_store
from app.store.queries import get_run, step_samples, step_series

LOG = Path(__file__).resolve().parents[1] / "fixtures" / "iometer-results" / "inst-two-specs-1.1.0.csv"


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "h.db") as s:
        yield s


def test_the_log_reads_as_updates_and_final_rows():
    (series,) = read_results_file(LOG)
    assert [len(t.updates) for t in series.tests] == [10, 10]  # 5 updates x 2 workers (one target each)
    first = series.tests[0]
    assert [r.kind for r in first.rows] == ["WORKER", "WORKER", "ALL"]  # the averages and ALL
    assert first.updates[0].at.isoformat() == "2024-03-11T10:00:01.122000"
    assert first.updates[0].text("read mibps (binary)") == "3.72302"  # "MBps (Binary)" in this file


def test_imported_with_per_second_samples_that_add_up_to_the_final_numbers(store):
    (imported,) = import_results_file(store, LOG)
    run = get_run(store, imported.run_id)
    assert run.host["tool"] == "Iometer" and [s.spec_name for s in run.steps] == [
        "4 KiB; 100% Read; 100% random",
        "64 KiB; 0% Read; 0% random",
    ]
    step = run.steps[0]
    assert {(lvl, key) for lvl, _, key in step_series(store, step.id)} == {
        ("target", "w1.t1"),
        ("target", "w2.t1"),
        ("worker", "w1"),
        ("worker", "w2"),
        ("manager", "Manager 1"),
        ("all", "ALL"),
    }
    interval = step_samples(store, step.id, "all", "ALL")
    times = [t for t, _ in interval]
    assert len(times) == 5 and times == sorted(times)
    assert times[0] == pytest.approx(1.003, abs=0.002)  # 10:00:01:123 - 10:00:00:120
    assert times[2] - times[1] == pytest.approx(1.896, abs=0.002)  # a late update keeps its real length
    # each update: the sum of the workers' rows written at it (Worker 1 953.094 + Worker 2 773.453 IOps)
    assert interval[0][1].iops == pytest.approx(953.094 + 773.453, rel=1e-5)
    final = next(r.metrics for r in step.results if r.level == "all")
    assert final.iops == pytest.approx(1742.072207, rel=1e-6)  # the file's ALL row
    whole = step_samples(store, step.id, "all", "ALL", "whole")
    assert whole[-1][1].ios == final.ios  # the updates cover every I/O of the test
    assert whole[-1][1].iops == pytest.approx(final.iops, rel=1e-3)
    # the second test's times count from the first test's end
    second = step_samples(store, run.steps[1].id, "worker", "w1")
    assert second[0][0] == pytest.approx(1.014, abs=0.002)


def test_old_and_new_runs_overlay_over_time(store, tmp_path):
    """A comparison of the imported Iometer run with a run that has samples draws both over time."""
    from app.ui.history.compare_data import CompareRequest, load_comparison
    from tests.gui.history_support import add_samples
    from tests.stored_runs import RunSpec, StepSpec, record

    (imported,) = import_results_file(store, LOG)
    new = record(
        store,
        RunSpec(
            [
                StepSpec(
                    "4k",
                    1800,
                    7.4,
                    0.4,
                    1.0,
                    0.6,
                    qd=1,
                    workers=2,
                    targets=2,
                    lines="4096,100,100,100,0,1,0,0",
                )
            ]
        ),
    )
    add_samples(store, new, seconds=6)
    data = load_comparison(store, CompareRequest([imported.run_id], [[new]]))
    (row,) = data.report.comparisons[0].rows
    assert row.differs == ["named '4k' in the candidate"]  # paired by definition, the names differ
    (segment,) = data.segments
    old_part, new_part = segment[1]
    assert len(old_part.samples) == 5 and len(new_part.samples) == 6
