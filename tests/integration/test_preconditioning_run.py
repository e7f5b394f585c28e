"""A preconditioned run on a real file with real fio: two fills, the workload until steady (ended by the
runner when the rule is met), then the measured step; stored and shown apart from the results."""

import json
import subprocess
import sys
from datetime import datetime

import pytest

pytestmark = pytest.mark.fio


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def test_fill_steady_state_then_measure(tmp_path):
    assert cli("examples", "--save", tmp_path).returncode == 0
    doc = json.loads((tmp_path / "oltp.json").read_text())
    setup = doc["plan"]["setup"]
    setup.update(
        run_time=2,
        ramp_up=0,
        precondition={
            "fill_passes": 2,
            "steady_state": True,
            "round_s": 1,
            "window_rounds": 3,
            "tolerance_pct": 30,
            "slope_pct": 30,
            "max_s": 20,
        },
    )
    plan = tmp_path / "pc.json"
    plan.write_text(json.dumps(doc))
    db = tmp_path / "r.db"
    out = cli("--db", db, "run", plan, "--map", f"TESTFILE={tmp_path / 't.tst'}", "--test-file-size", "16M")
    assert out.returncode == 0, out.stderr + out.stdout
    shown = json.loads(cli("--db", db, "show", "1", "--json").stdout)
    pre = shown["preconditioning"]
    assert pre["phases"] == {"0": "fill", "1": "steady", "2": "measure"}
    fill = shown["steps"][0]
    written = next(r for r in fill["results"] if r["level"] == "all")
    assert fill["status"] == "complete" and written["mbps"] > 0
    assert "32 MiB written" in pre["fill"]  # two passes over the 16 MiB file
    steady = pre["steady_state"]
    assert steady["window"] is not None, steady["rounds"]
    step = shown["steps"][1]
    took = (datetime.fromisoformat(step["ended"]) - datetime.fromisoformat(step["started"])).total_seconds()
    assert step["status"] == "complete" and took < 20  # ended by the rule, well before max_s
    assert steady["at_s"] == steady["window"]["last"] + 1
    text = cli("--db", db, "show", "1").stdout
    assert f"Steady state reached after round {steady['window']['last'] + 1}" in text

    from app.report.document import build_report
    from app.store.database import open_store

    with open_store(db) as store:
        report = build_report(store, [1], [])
    tables = {t.key: t for t in report.runs[0].workloads}
    phases = [r.cells[0].text for r in tables["precondition-1"].rows]
    assert phases == [
        "Step 1: fill (preconditioning)",
        "Step 2: steady-state step (preconditioning)",
        "Fill",
        "Steady state",
        "IOPS per round",
    ]
    assert tables["precondition-1"].rows[3].cells[1].text.startswith("Steady state reached after round")
    assert [r.cells[0].text for r in report.runs[0].summary.rows] == ["3"]  # the results: the measured step
    assert [s.index for s in report.baseline.steps] == [2]  # the measured step only: preconditioning is apart
