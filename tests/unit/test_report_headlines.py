"""Headline figures before vs after: disk statistics beside the results with request sizes (from a real fio
run's recorded disk counters), and sweep maxima from stored sweeps."""

from __future__ import annotations

import gzip
import shutil
import sys
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
        run_id = record(
            store, RunSpec([StepSpec("S", 1000, mbps, 1, 5, 2, lines="4096,100,50,100,0,1,0,0")], tags=[tag])
        )
        step_id = store.conn.execute("SELECT id FROM steps WHERE run_id = ?", (run_id,)).fetchone()[0]
        Recorder(store).set_step_output(step_id, "M1", raw_output=raw)
        ids.append(run_id)
    rep = build_report(store, [ids[0]], [[ids[1]]])
    table = next(t for t in rep.headline_tables if t.key == "disk-compare-1")
    cols = [c.title for c in table.columns]
    for want in (
        "Load",
        "IOPS",
        "MB/s",
        "r/s",
        "w/s",
        "rkB/s",
        "wkB/s",
        "rareq-sz KiB",
        "wareq-sz KiB",
        "%util",
    ):
        assert want in cols
    sides = [r.cells[cols.index("Side")].text for r in table.rows]
    assert set(sides) == {"before", "after"}
    first = table.rows[0].cells
    reads = first[cols.index("r/s")].value
    assert reads and reads > 0
    # the disk figures are the disk's own: fio's bytes (doubled after) change none of them, and a request
    # size needs the disk's sectors, which this fio 3.33 output lacks: left empty, never fio's bytes per request
    before = next(r for r in table.rows if r.cells[cols.index("Side")].text == "before").cells
    after = next(r for r in table.rows if r.cells[cols.index("Side")].text == "after").cells
    for col in ("r/s", "w/s"):
        assert after[cols.index(col)].value == before[cols.index(col)].value
    for col in ("rkB/s", "wkB/s", "rareq-sz KiB", "wareq-sz KiB"):
        assert before[cols.index(col)].value is None and after[cols.index(col)].value is None


def test_request_sizes_and_byte_rates_come_from_the_disks_sectors_over_one_window(store):
    """The kernel's counters Fiometer keeps beside a local fio's disk (kernel_window): rareq-sz is sectors
    per request, rkB/s sectors over that window, r/s requests over it."""
    import json

    doc = json.loads(gzip.decompress(FIXTURE.read_bytes()).decode())
    disk = doc["disk_util"][0]
    disk["kernel_window"] = {
        "msec": 4000.0,
        "read_ios": 8000,
        "read_sectors": 8000 * 1024,  # 512 KiB each
        "write_ios": 2000,
        "write_sectors": 2000 * 8,  # 4 KiB each
        "fio_read_bytes": 0,
        "fio_write_bytes": 0,
    }
    run_id = record(store, RunSpec([StepSpec("S", 1000, 40.0, 1, 5, 2, lines="4096,100,50,100,0,1,0,0")]))
    step_id = store.conn.execute("SELECT id FROM steps WHERE run_id = ?", (run_id,)).fetchone()[0]
    Recorder(store).set_step_output(step_id, "M1", raw_output=json.dumps(doc))
    other = record(store, RunSpec([StepSpec("S", 1000, 40.0, 1, 5, 2, lines="4096,100,50,100,0,1,0,0")]))
    rep = build_report(store, [run_id], [[other]])
    table = next(t for t in rep.headline_tables if t.key == "disk-compare-1")
    cols = [c.title for c in table.columns]
    row = table.rows[0].cells  # the baseline side comes first
    assert row[cols.index("r/s")].value == pytest.approx(2000)
    assert row[cols.index("w/s")].value == pytest.approx(500)
    assert row[cols.index("rkB/s")].value == pytest.approx(2000 * 512)
    assert row[cols.index("wkB/s")].value == pytest.approx(500 * 4)
    assert row[cols.index("rareq-sz KiB")].value == pytest.approx(512)
    assert row[cols.index("wareq-sz KiB")].value == pytest.approx(4)


@pytest.mark.skipif(
    shutil.which("pdftotext") is None,
    reason="needs poppler's pdftotext to read the PDF back: "
    + (
        "a Linux tool, not part of the Windows test set-up; the Linux suite reads this PDF back"
        if sys.platform == "win32"
        else "bash bootstrap.sh install-test adds it"
    ),
)
def test_the_pdf_sets_the_wide_disk_table_in_readable_parts_with_every_figure(store, tmp_path):
    """16 columns squeezed across a page wrapped the text columns letter by letter ("Ran dom 4k read",
    "Acc ess spe cifi cati on"): the PDF splits the table, repeating the row keys, and text never breaks
    inside a word; the table itself (HTML, XLSX, CSV) keeps every column."""
    import subprocess

    from app.report.pdf import write_pdf

    raw = gzip.decompress(FIXTURE.read_bytes()).decode()
    ids = []
    for tag, qd in (("before", 64), ("after", 8)):
        run_id = record(
            store,
            RunSpec(
                [
                    StepSpec(
                        "Random 4k read", 71412, 293, 0.9, 7.3, 3.5, qd=qd, lines="4096,100,100,100,0,1,0,0"
                    )
                ],
                tags=[tag],
            ),
        )
        step_id = store.conn.execute("SELECT id FROM steps WHERE run_id = ?", (run_id,)).fetchone()[0]
        Recorder(store).set_step_output(step_id, "M1", raw_output=raw)
        ids.append(run_id)
    rep = build_report(store, [ids[0]], [[ids[1]]])
    table = next(t for t in rep.headline_tables if t.key == "disk-compare-1")
    assert len(table.columns) == 16  # whole for HTML, XLSX and CSV
    pdf = tmp_path / "r.pdf"
    write_pdf(rep, str(pdf))
    pages = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout.split("\f")
    page = next(p for p in pages if "Disk statistics beside the results" in p)
    part = page[page.index("Disk statistics beside the results") :]
    lines = part.splitlines()
    headers = [ln for ln in lines if ln.startswith("Access specification")]
    assert len(headers) == 2, part  # two parts, each headed by the row keys, "Access specification" whole
    rows = [ln for ln in lines if ln.startswith("Random 4k read")]
    assert len(rows) == 2 * len(table.rows), part  # each row in both parts, its spec name whole
    flat = " ".join(part.split())
    for c in table.columns:  # every column is somewhere in the PDF
        assert c.title in flat, c.title
    for row in table.rows:  # and every figure
        for cell in row.cells:
            assert cell.text in flat, cell.text


def test_every_percentile_group_and_per_step_chart_title_carries_its_load(store):
    """A sweep of one spec over QD 1, 8 and of 6 workers at QD 8: without the load its groups were three
    "S" alike (the issue's 12 pairs of rows without a QD, the second unlabelled "bs=2k" group)."""
    steps = [
        StepSpec("S", 1000, 4.0, 1, 5, 2, qd=1),
        StepSpec("S", 4000, 16.0, 2, 9, 4, qd=8),
        StepSpec("S", 9000, 36.0, 5, 20, 9, qd=8, workers=6),
    ]
    a = record(store, RunSpec(steps, tags=["before"]))
    b = record(store, RunSpec(steps, tags=["after"]))
    for rep in (build_report(store, [a], []), build_report(store, [a], [[b]])):
        groups = list(dict.fromkeys(r.group for r in rep.percentiles.rows))
        assert groups == ["S, QD 1", "S, QD 8", "S, QD 8, 6 workers"], groups
        titles = [d.title for d in rep.distributions]
        assert titles == [f"Response time distribution: {g}" for g in groups], titles
