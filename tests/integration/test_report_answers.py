"""Reports answer first and compare only like with like (issue 37.5, 37.6), on runs of real fio: a one-run
report has a summary with its curve answer, which is also in the contents on the first page; preconditioning
steps are not results in any per-run table or sheet; a step the other side planned but never ran says so; a
stopped step feeds no headline figure."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from app.model import planfile
from app.model.plan import SpecLine
from app.report.document import build_report
from app.store.database import open_store
from tests.helpers import grid, spec
from tests.integration.test_report import Workbook, page_texts

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")]


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def null_plan(tmp_path, names: tuple[str, ...] = ("8k random 70 % read",), run_time: int = 1):
    p = grid(1, 1, 1)
    sizes = (8192, 4096, 65536)
    p.specs = [spec(n, SpecLine(sizes[i], 100, 70, 100, 0, 1, 0, 0)) for i, n in enumerate(names)]
    p.managers[0].workers[0].specs = list(names)
    p.managers[0].workers[0].targets[0].name = "T"
    p.managers[0].workers[0].data_pattern = 2
    p.setup.run_time = run_time
    path = tmp_path / "plan.json"
    planfile.save(p, path)
    return path


def test_a_one_run_curve_report_has_a_summary_and_its_answer_in_the_contents(tmp_path):
    db = tmp_path / "r.db"
    done = cli(
        "curve",
        null_plan(tmp_path),
        "--p99-max",
        50,
        "--max-load",
        16,
        "--engine",
        "null",
        "--map",
        f"T={tmp_path / 'n.dat'}",
        "--test-file-size",
        "8M",
        "--db",
        db,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    with open_store(db) as store:
        report = build_report(store, [1], [])
    (block,) = report.summary
    (figure,) = block.sentences  # one workload: its highest IOPS at its load
    assert figure.startswith("8k random 70 % read: ") and " IOPS at QD " in figure and "p99 " in figure
    (answer,) = [h for h in block.headlines if h.startswith("Curve: ")]
    assert "with p99 " in answer and "\u2264 50 ms" in answer
    html, pdf = tmp_path / "r.html", tmp_path / "r.pdf"
    assert cli("report", 1, "--html", html, "--pdf", pdf, "--db", db).returncode == 0
    page = html.read_text(encoding="utf-8")
    assert 'id="summary"' in page and page.index('id="summary"') < page.index('id="environment"')
    assert 'href="#curve-1"' in page and "Curve answer, run 1: " in page
    pages = page_texts(pdf)
    cover = pages[0]  # page_texts drops the blanks
    assert "Curveanswer,run1:" in cover and "\u226450ms" in cover  # on the first page, in the contents
    assert "Summary" in cover and any("Headlinefigures" in p for p in pages[1:3])


def test_preconditioning_steps_are_apart_from_the_results_in_every_table_and_sheet(tmp_path):
    assert cli("examples", "--save", tmp_path).returncode == 0
    doc = json.loads((tmp_path / "oltp.json").read_text())
    doc["plan"]["setup"].update(
        run_time=2,
        ramp_up=0,
        precondition={
            "fill_passes": 1,
            "steady_state": True,
            "round_s": 1,
            "window_rounds": 3,
            "tolerance_pct": 50,
            "slope_pct": 50,
            "max_s": 6,
        },
    )
    plan = tmp_path / "pc.json"
    plan.write_text(json.dumps(doc))
    db = tmp_path / "r.db"
    out = cli("--db", db, "run", plan, "--map", f"TESTFILE={tmp_path / 't.tst'}", "--test-file-size", "8M")
    assert out.returncode == 0, out.stderr + out.stdout
    with open_store(db) as store:
        report = build_report(store, [1], [])
    (section,) = report.runs
    steps = [r.cells[0].text for r in section.summary.rows]
    assert "1" not in steps and "2" not in steps and steps  # the fill and steady-state steps are not results
    assert any("preconditioning" in n and "not a result" in n for n in section.summary.notes)
    (pre,) = [t for t in section.workloads if t.key == "precondition-1"]
    phases = [r.cells[0].text for r in pre.rows]
    assert (
        "Step 1: fill (preconditioning)" in phases and "Step 2: steady-state step (preconditioning)" in phases
    )
    measured = {r.cells[1].text for r in section.summary.rows}
    assert not any(p in measured for p in phases)  # never named like the measured step
    xlsx = tmp_path / "r.xlsx"
    assert cli("report", 1, "--xlsx", xlsx, "--db", db).returncode == 0
    rows = Workbook(xlsx).rows("Run 1 results")
    firsts = [row[0] for row in rows if row and isinstance(row[0], float)]
    assert firsts and 1.0 not in firsts and 2.0 not in firsts, rows


def test_a_step_planned_but_not_run_says_so_and_a_stopped_step_gives_no_figure(tmp_path):
    """The candidate's run stopped after its first step: its second spec is 'not compared' because it did
    not run, not because 'the candidate has no step with this definition'."""
    db = tmp_path / "r.db"
    plan = null_plan(tmp_path, ("8k random 70 % read", "4k random 70 % read"))
    for tag in ("before", "after"):
        out = cli(
            "--db", db, "run", plan, "--engine", "null", "--map", f"T={tmp_path / 'n.dat'}", "--tag", tag
        )
        assert out.returncode == 0, out.stdout + out.stderr
    with open_store(db) as store:  # the run as a stop after its first step leaves it
        store.conn.execute("DELETE FROM steps WHERE run_id = 2 AND idx = 1")
        store.conn.execute("UPDATE runs SET status = 'stopped' WHERE id = 2")
        store.conn.execute("UPDATE steps SET status = 'stopped' WHERE run_id = 1 AND idx = 1")
        store.conn.commit()
        report = build_report(store, [1], [[2]])
        (c,) = report.comparisons
        (only,) = c.only_baseline
        why = c.why_not_compared(only)
        assert why == "planned in the candidate too, but its run 2 was stopped after 1 step, before this one"
        alone = build_report(store, [1], [])
    (block,) = alone.summary
    assert [s.split(":")[0] for s in block.sentences] == ["8k random 70 % read"]
    (out_,) = block.left_out
    assert out_.startswith("step 2 (4k random 70 % read at QD 1): stopped")


def test_a_stopped_step_is_no_point_of_a_sweep_nor_its_maximum(tmp_path):
    """An Orion-style sweep (QD 1..8), run twice; the step with the highest IOPS of each run marked as a Stop leaves it:
    neither sweep has that point, so no maximum, knee or headline of the report is taken from it."""
    from app.analysis.sweep import find_sweeps
    from app.store.queries import get_run

    assert cli("examples", "--save", tmp_path).returncode == 0
    doc = json.loads((tmp_path / "orion.json").read_text())
    plan = doc.get("plan", doc)  # QD 1..8 of its small random reads: four points
    plan["setup"]["queue_depth_cycling"]["end"] = 8
    plan["specs"] = plan["specs"][:1]
    plan["managers"][0]["workers"][0]["specs"] = [plan["specs"][0]["name"]]
    (tmp_path / "orion.json").write_text(json.dumps(doc))
    db = tmp_path / "r.db"
    for tag in ("before", "after"):
        out = cli(
            "--db", db, "run", tmp_path / "orion.json", "--engine", "null", "--map",
            f"TESTFILE={tmp_path / 'n.dat'}", "--test-file-size", "8M", "--run-time", "1", "--tag", tag,
        )  # fmt: skip
        assert out.returncode == 0, out.stdout + out.stderr
    with open_store(db) as store:
        tops = {}
        for run_id in (1, 2):
            sweep = find_sweeps(get_run(store, run_id))[0]
            tops[run_id] = sweep.max_iops
            store.conn.execute(
                "UPDATE steps SET status = 'stopped' WHERE run_id = ? AND idx = ?",
                (run_id, sweep.max_iops.step),
            )
        store.conn.commit()
        for run_id, top in tops.items():
            sweep = find_sweeps(get_run(store, run_id))[0]
            assert top.step not in [p.step for p in sweep.points]
            assert sweep.max_iops.iops <= top.iops and sweep.max_iops.step != top.step
        report = build_report(store, [1], [[2]])
    (line,) = [h for h in report.summary[0].headlines if h.startswith(sweep.label)]
    for top in tops.values():
        assert f"{top.iops:,.0f} @ " not in line, line
