"""`fiometer show` summarises a queue-depth sweep from a real (null-engine) run of the bundled example."""

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.fio


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def test_show_gives_the_sweep_maximum_and_its_load(tmp_path):
    assert cli("examples", "--save", tmp_path).returncode == 0
    db = tmp_path / "r.db"
    out = cli(
        "--db",
        db,
        "run",
        tmp_path / "qd1qd32.json",
        "--map",
        f"TESTFILE={tmp_path / 't.tst'}",
        "--run-time",
        "1",
        "--ramp-up",
        "0",
        "--engine",
        "null",
        "--test-file-size",
        "1M",
    )
    assert out.returncode == 0, out.stderr + out.stdout
    shown = json.loads(cli("--db", db, "show", "1", "--json").stdout)
    (sweep,) = shown["sweeps"]
    assert sweep["dimension"] == "queue_depth" and [p["load"] for p in sweep["points"]] == [1, 32]
    all_iops = {
        s["queue_depth"]: next(r["iops"] for r in s["results"] if r["level"] == "all") for s in shown["steps"]
    }
    best = max(all_iops, key=all_iops.get)
    assert sweep["max_iops"]["load"] == best and sweep["max_iops"]["iops"] == pytest.approx(all_iops[best])
    text = cli("--db", db, "show", "1").stdout
    assert f"4k random read: maximum IOPS {all_iops[best]:,.0f} at QD {best}" in text


def test_the_report_carries_the_sweep_table(tmp_path):
    from app.report.document import build_report
    from app.store.database import open_store

    assert cli("examples", "--save", tmp_path).returncode == 0
    db = tmp_path / "r.db"
    out = cli(
        "--db",
        db,
        "run",
        tmp_path / "qd1qd32.json",
        "--map",
        f"TESTFILE={tmp_path / 't.tst'}",
        "--run-time",
        "1",
        "--ramp-up",
        "0",
        "--engine",
        "null",
        "--test-file-size",
        "1M",
    )
    assert out.returncode == 0, out.stderr + out.stdout
    with open_store(db) as store:
        report = build_report(store, [1], [])
    (table,) = [t for t in report.runs[0].workloads if t.key == "sweep-1"]
    assert [r.cells[0].text for r in table.rows] == ["QD 1", "QD 32"]
    best = max(table.rows, key=lambda r: r.cells[2].value)
    assert "max IOPS" in best.cells[-1].text and table in report.tables


@pytest.fixture(scope="module")
def orion_db(tmp_path_factory):
    """The bundled Orion-style example (two specifications, QD 1..64) run for real, 1 s a step."""
    tmp = tmp_path_factory.mktemp("orion")
    assert cli("examples", "--save", tmp).returncode == 0
    db = tmp / "r.db"
    out = cli(
        "--db",
        db,
        "run",
        tmp / "orion.json",
        "--map",
        f"TESTFILE={tmp / 't.tst'}",
        "--run-time",
        "1",
        "--ramp-up",
        "0",
        "--engine",
        "null",
        "--test-file-size",
        "1M",
    )
    assert out.returncode == 0, out.stderr + out.stdout
    return db


def test_the_report_draws_the_curves_of_a_recorded_sweep(orion_db, tmp_path):
    from app.report.document import build_report
    from app.report.html import render_html
    from app.report.pdf import write_pdf
    from app.store.database import open_store

    with open_store(orion_db) as store:
        report = build_report(store, [1], [])
    section = report.runs[0]
    (table,) = [t for t in section.workloads if t.key == "sweep-1"]
    charts = {c.key: c for c in section.sweep_charts}
    assert list(charts) == [f"sweep-1-{f}-{k}" for f in (1, 2) for k in ("iops", "mbps", "lat", "knee")]
    # the curves are the sweep table's numbers: IOPS over QD 1..64 on a log2 axis, per specification
    rows = {(r.group, r.cells[0].text): r for r in table.rows}
    for f, spec in ((1, "Small random 8k read"), (2, "Large sequential 1M read")):
        iops = charts[f"sweep-1-{f}-iops"]
        assert iops.x_log2 and [t for _v, t in iops.x_ticks] == ["1", "2", "4", "8", "16", "32", "64"]
        (line,) = iops.series
        assert line.points == [
            (qd, pytest.approx(rows[(f"{spec} (over queue depth)", f"QD {qd}")].cells[2].value))
            for qd in (1, 2, 4, 8, 16, 32, 64)
        ]
        knee = charts[f"sweep-1-{f}-knee"]
        marked = [
            r.cells[0].text for (g, _), r in rows.items() if g.startswith(spec) and "knee" in r.cells[-1].text
        ]
        assert [m.caption for m in knee.marks] == [f"knee: {t}" for t in marked]
    assert any("highest throughput per unit of response time" in n for n in table.notes)
    html = render_html(report)
    at = html.index('id="sweep-1"')
    assert at < html.index('id="sweep-1-1-iops"') < html.index('id="sweep-1-2-knee"')
    assert "IOPS: Small random 8k read over queue depth" in html
    pdf = tmp_path / "r.pdf"
    write_pdf(report, str(pdf))
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout
    for title in (
        "IOPS: Small random 8k read over queue depth",
        "MB/s: Large sequential 1M read over queue depth",
        "Average response time against IOPS, knee marked",
    ):
        assert title in " ".join(text.split())
