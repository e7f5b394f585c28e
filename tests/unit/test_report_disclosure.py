"""The disclosure appendix says what was run (engine, test-file size and its scaling, fidelity notes, notes,
incomplete steps) and what the numbers mean, in every format."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.report.csv_out import render_tables_csv
from app.report.document import build_report
from app.report.html import render_html
from app.store.database import open_store
from tests.stored_runs import AFTER, BEFORE, RunSpec, record


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "d.db") as s:
        yield s


def test_engine_scaled_size_notes_and_a_stopped_step_are_disclosed(store):
    record(store, RunSpec(BEFORE, tags=["before"], size=8 << 20, notes="old HBA firmware"))
    record(
        store,
        RunSpec(
            [AFTER[0], replace(AFTER[1], status="stopped"), *AFTER[2:]],
            tags=["after"],
            size=8 << 20,
            engine="io_uring",
        ),
    )
    rep = build_report(store, [1], [[2]])
    d = rep.disclosure
    assert "Run 1 (before): measured with fio 3.33 (I/O engine libaio); engine options direct=1." in d
    assert "Run 2 (after): measured with fio 3.33 (I/O engine io_uring); engine options direct=1." in d
    assert any(
        x.startswith("Runs 1 (before), 2 (after): test files of 8 MiB, scaled down from the plan's 1 GiB")
        for x in d
    )
    assert "Run 1 (before): note - old HBA firmware" in d
    assert any(x.startswith("Run 2 (after): step 2 (RealLife-60%Rand-65%Read) stopped") for x in d)
    assert any("no percentile is shown above the maximum" in x for x in d)
    html = render_html(rep)
    assert "Disclosure: what was run and what the numbers mean" in html and "old HBA firmware" in html
    assert "scaled down from the plan" in render_tables_csv(rep)
