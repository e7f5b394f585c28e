"""`fiometer show` summarises a queue-depth sweep from a real (null-engine) run of the bundled example."""

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.fio


def cli(*args):
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def test_show_gives_the_sweep_maximum_and_its_load(tmp_path):
    assert cli("examples", "--save", tmp_path).returncode == 0
    db = tmp_path / "r.db"
    out = cli("--db", db, "run", tmp_path / "qd1qd32.json", "--map", f"TESTFILE={tmp_path / 't.tst'}",
              "--run-time", "1", "--ramp-up", "0", "--engine", "null", "--test-file-size", "1M")
    assert out.returncode == 0, out.stderr + out.stdout
    shown = json.loads(cli("--db", db, "show", "1", "--json").stdout)
    (sweep,) = shown["sweeps"]
    assert sweep["dimension"] == "queue_depth" and [p["load"] for p in sweep["points"]] == [1, 32]
    all_iops = {s["queue_depth"]: next(r["iops"] for r in s["results"] if r["level"] == "all")
                for s in shown["steps"]}
    best = max(all_iops, key=all_iops.get)
    assert sweep["max_iops"]["load"] == best and sweep["max_iops"]["iops"] == pytest.approx(all_iops[best])
    text = cli("--db", db, "show", "1").stdout
    assert f"4k random read: maximum IOPS {all_iops[best]:,.0f} at QD {best}" in text


def test_the_report_carries_the_sweep_table(tmp_path):
    from app.report.document import build_report
    from app.store.database import open_store

    assert cli("examples", "--save", tmp_path).returncode == 0
    db = tmp_path / "r.db"
    out = cli("--db", db, "run", tmp_path / "qd1qd32.json", "--map", f"TESTFILE={tmp_path / 't.tst'}",
              "--run-time", "1", "--ramp-up", "0", "--engine", "null", "--test-file-size", "1M")
    assert out.returncode == 0, out.stderr + out.stdout
    with open_store(db) as store:
        report = build_report(store, [1], [])
    (table,) = [t for t in report.runs[0].workloads if t.key == "sweep-1"]
    assert [r.cells[0].text for r in table.rows] == ["QD 1", "QD 32"]
    best = max(table.rows, key=lambda r: r.cells[2].value)
    assert "max IOPS" in best.cells[-1].text and table in report.tables
