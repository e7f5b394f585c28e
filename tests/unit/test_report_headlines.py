"""Headline figures before vs after: disk statistics beside the results with request sizes (from a real fio
run's recorded disk counters), and sweep maxima from stored sweeps."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from app.report.document import build_report
from app.store.database import open_store
from app.store.recorder import Recorder
from tests.stored_runs import RunSpec, StepSpec, record

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "disk-stats" / "fio-3.33-loop-randrw.json.gz"


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "h.db") as s:
        yield s


def test_disk_statistics_sit_beside_the_results_with_request_sizes(store):
    raw = gzip.decompress(FIXTURE.read_bytes()).decode()
    ids = []
    for tag, mbps in (("before", 40.0), ("after", 80.0)):
        run_id = record(store, RunSpec([StepSpec("S", 1000, mbps, 1, 5, 2, lines="4096,100,50,100,0,1,0,0")],
                                       tags=[tag]))
        step_id = store.conn.execute("SELECT id FROM steps WHERE run_id = ?", (run_id,)).fetchone()[0]
        Recorder(store).set_step_output(step_id, "M1", raw_output=raw)
        ids.append(run_id)
    rep = build_report(store, [ids[0]], [[ids[1]]])
    table = next(t for t in rep.headline_tables if t.key == "disk-compare-1")
    cols = [c.title for c in table.columns]
    for want in ("Load", "IOPS", "MB/s", "r/s", "w/s", "rkB/s", "wkB/s", "rareq-sz KiB", "wareq-sz KiB", "%util"):
        assert want in cols
    sides = [r.cells[cols.index("Side")].text for r in table.rows]
    assert set(sides) == {"before", "after"}
    first = table.rows[0].cells
    reads = first[cols.index("r/s")].value
    assert reads and reads > 0
    # the request size is fio's bytes per disk request: doubling the bytes doubles it
    before = next(r for r in table.rows if r.cells[cols.index("Side")].text == "before").cells
    after = next(r for r in table.rows if r.cells[cols.index("Side")].text == "after").cells
    assert after[cols.index("rareq-sz KiB")].value == pytest.approx(2 * before[cols.index("rareq-sz KiB")].value)
