"""Before/after workflows end to end on real fio (null engine, small files): the CLI's compare and every
report format say what changed and what it did.

Queue-depth change: the same two access specifications at QD 64, then at QD 8. They pair by default, "What
changed: queue depth 64 → 8" leads the terminal output and the PDF's summary page, every finding and table
row names its load, and the CSV's rows say their load and what the row is."""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys

import pytest

from app.model import planfile
from app.model.plan import LOCAL, AccessSpec, SpecLine, Target
from app.paths import resources_dir
from tests.helpers import grid

pytestmark = pytest.mark.fio
ARROW = "\u2192"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True)


def plan_at(tmp, qd: int):
    plan = grid(1, 1, 1, specs=("Random 4k read", "Sequential 1M read"), qd=qd)
    plan.specs = [
        AccessSpec("Random 4k read", [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]),
        AccessSpec("Sequential 1M read", [SpecLine(1 << 20, 100, 100, 0, 0, 1, 4096, 0)]),
    ]
    plan.managers[0].host = LOCAL
    target = tmp / "iobw.tst"
    if not target.exists():
        target.write_bytes(b"\0" * (8 << 20))  # reads only: an existing file is fine
    plan.managers[0].workers[0].targets = [Target(str(target))]
    path = tmp / f"plan-qd{qd}.json"
    planfile.save(plan, path)
    return path


@pytest.fixture(scope="module")
def qd_change(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("qd-change")
    db = tmp / "r.db"
    for qd, tag in ((64, "qd64"), (8, "qd8")):
        out = cli(
            "--db",
            db,
            "run",
            plan_at(tmp, qd),
            "--run-time",
            "1",
            "--engine",
            "null",
            "--tag",
            tag,
            "--test-file-size",
            "8M",
        )
        assert out.returncode == 0, out.stderr
    return db, tmp


def test_compare_in_the_terminal_leads_with_the_queue_depth_change(qd_change):
    db, _ = qd_change
    out = cli("--db", db, "compare", "1", "2")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "qd8 (run 2) compared with qd64 (run 1):"
    assert lines[1].startswith(f"  What changed: queue depth 64 {ARROW} 8")
    assert "No steps in common" not in out.stdout and "Not compared" not in out.stdout
    # every finding or within-noise line names its load
    said = [
        ln for ln in lines[2 : lines.index("Validity:")] if ln.startswith("  - ")
    ]  # validity notes follow
    assert said and all(f"QD 64 {ARROW} 8" in ln or ln.startswith("  - Nothing changed") for ln in said)
    rows = [ln for ln in lines if ln.startswith(("Random 4k read", "Sequential 1M read"))]
    assert len(rows) == 2 * 5 and all(f"QD 64 {ARROW} 8" in ln for ln in rows)  # 2 specs x 5 metrics


def test_pdf_summary_page_states_what_changed_and_findings_with_load(qd_change):
    db, tmp = qd_change
    pdf = tmp / "r.pdf"
    res = cli(
        "--db",
        db,
        "report",
        "1",
        "--compare",
        "2",
        "--pdf",
        pdf,
        "--csv",
        tmp / "r.csv",
        "--html",
        tmp / "r.html",
        "--xlsx",
        tmp / "r.xlsx",
    )
    assert res.returncode == 0, res.stderr
    pages = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True
    ).stdout.split("\f")
    summary = next(p for p in pages[1:] if "Summary" in p)
    flat = " ".join(summary.split())
    assert f"What changed: queue depth 64 {ARROW} 8" in flat
    # every finding and the within-noise line name their load (which of them a run gives depends on the
    # machine's speed: on a loaded one both specifications may stay within noise)
    said = flat.split(f"What changed: queue depth 64 {ARROW} 8", 1)[1].split("A change counts", 1)[0]
    parts = [p.removeprefix("\u2022 ") for p in re.split(r" (?=\u2022 |Within noise: )", said) if p.strip()]
    assert parts and all(f"QD 64 {ARROW} 8" in p or p.startswith("Nothing changed") for p in parts), parts
    assert "No access specification was measured on both sides" not in " ".join(pages)
    html = (tmp / "r.html").read_text(encoding="utf-8")
    assert f"<strong>What changed:</strong> queue depth 64 {ARROW} 8" in html
    rows = list(csv.DictReader(io.StringIO((tmp / "r.csv").read_text(encoding="utf-8-sig"))))
    assert {(r["run"], r["queue_depth"]) for r in rows} == {("1", "64"), ("2", "8")}
    assert {(r["workers"], r["targets"], r["phase"]) for r in rows} == {("1", "1", "measure")}


# --- the workflows, each run twice (before, after) -------------------------------------------
def examples(tmp):
    assert cli("examples", "--save", tmp).returncode == 0
    return tmp


def run_twice(db, plan, tmp, name, target="TESTFILE"):
    for tag in ("before", "after"):
        out = cli(
            "--db",
            db,
            "run",
            plan,
            "--map",
            f"{target}={tmp / (name + '.tst')}",
            "--run-time",
            "1",
            "--ramp-up",
            "0",
            "--engine",
            "null",
            "--test-file-size",
            "8M",
            "--tag",
            tag,
        )
        assert out.returncode == 0, out.stderr + out.stdout


@pytest.fixture(scope="module")
def workflows(tmp_path_factory):
    """name -> (database, folder): Orion-style sweep, dd-style timed transfer, the same transfer read at four
    block sizes (dd + iostat at 64 KiB .. 4 MiB), preconditioned flash (short rounds), the Iometer template
    .icf; each before and after."""
    import json
    import os
    from pathlib import Path

    tmp = tmp_path_factory.mktemp("workflows")
    ex = examples(tmp / "ex")
    flash = json.loads((ex / "flash.json").read_text())
    setup = flash.get("plan", flash)["setup"]
    setup["precondition"].update(
        round_s=1, window_rounds=3, max_s=6
    )  # seconds, not the 5 x 60 s of a real SSD
    (ex / "flash-short.json").write_text(json.dumps(flash))
    dd = json.loads((ex / "timed.json").read_text())
    dd_plan = dd.get("plan", dd)
    dd_plan["name"] = "dd at four block sizes"
    dd_plan["setup"]["transfer_bytes"] = 64 << 20
    read = dd_plan["specs"][1]
    dd_plan["specs"] = [
        dict(read, name=f"dd read {k}k", lines=[dict(read["lines"][0], size=k << 10)])
        for k in (64, 256, 1024, 4096)
    ]
    dd_plan["managers"][0]["workers"][0]["specs"] = [x["name"] for x in dd_plan["specs"]]
    (ex / "dd4.json").write_text(json.dumps(dd))
    icf = resources_dir() / "examples" / "vmware-unofficial-storage-performance.icf"
    out = {}
    for name, plan in (
        ("orion", ex / "orion.json"),
        ("timed", ex / "timed.json"),
        ("dd4", ex / "dd4.json"),
        ("flash", ex / "flash-short.json"),
        ("icf", icf),
    ):
        db = tmp / f"{name}.db"
        run_twice(db, plan, tmp, name, "C:" if name == "icf" else "TESTFILE")
        out[name] = (db, tmp)
    keep = os.environ.get("FIOMETER_REPORTS")  # to look at every page: write the reports there
    if keep:
        for name, (db, _) in out.items():
            base = Path(keep) / name
            assert (
                cli(
                    "--db",
                    db,
                    "report",
                    "1",
                    "--compare",
                    "2",
                    "--pdf",
                    f"{base}.pdf",
                    "--html",
                    f"{base}.html",
                    "--xlsx",
                    f"{base}.xlsx",
                    "--csv",
                    f"{base}.csv",
                ).returncode
                == 0
            )
    return out


def report_of(db):
    from app.report.document import build_report
    from app.store.database import open_store

    with open_store(db) as store:
        return build_report(store, [1], [[2]])


def test_orion_sweep_maxima_before_and_after_with_both_sweeps_on_one_chart(workflows):
    rep = report_of(workflows["orion"][0])
    heads = rep.summary[0].headlines
    lat = r"\(average [\d.,]+ ms, p99 [\d.,]+ ms\)"  # Orion's latency at the maximum, on both sides
    assert any(
        re.match(rf".+ sweep: maximum IOPS [\d,]+ @ QD \d+.* {lat} \u2192 [\d,]+ @ QD \d+.* {lat}", h)
        for h in heads
    ), heads
    overlays = [c for c in rep.sweep_overlays if not c.key.endswith("-lat")]  # (dashed p99 lines: 4 series)
    assert overlays and all(len(c.series) >= 2 and c.series[0].label == "before" for c in overlays)
    table = next(t for t in rep.headline_tables if t.key == "headlines-1")
    names = [r.cells[0].text for r in table.rows][:4]
    assert names == ["maximum IOPS", "average ms at the maximum", "p99 ms at the maximum", "knee"]
    # the figures at the maximum are the stored maximum step's own
    from app.analysis.compare import all_metrics
    from app.analysis.sweep import find_sweeps
    from app.store.database import open_store
    from app.store.queries import get_run

    with open_store(workflows["orion"][0]) as store:
        run = get_run(store, 1)
    top = find_sweeps(run)[0].max_iops
    m = all_metrics(next(s for s in run.steps if s.index == top.step))
    assert table.rows[1].cells[1].value == pytest.approx(m.lat_mean_ms)
    assert table.rows[2].cells[1].value == pytest.approx(m.percentile_ms(99))


def test_a_sweeps_report_is_compact_its_steps_drawn_as_curves(workflows, tmp_path):
    """2 specs x 7 queue depths compared: the sweeps overlaid, before and after (IOPS, MB/s, response time, the
    knee chart), two a row; no bars and no per-run curves for their steps; per-step distribution charts only at
    each sweep's key loads (lightest, heaviest, maximum, knee), each titled with its load, two a row."""
    from app.analysis.sweep import find_sweeps
    from app.report.sweep_selection import key_steps
    from app.store.database import open_store
    from app.store.queries import get_run

    db = workflows["orion"][0]
    rep = report_of(db)
    assert not rep.charts  # every compared step is a sweep's point: its bars would repeat the curves
    assert all(not r.sweep_charts for r in rep.runs)  # both runs' curves are the overlays
    sweeps = [c for c in rep.sweep_overlays if c.key.startswith("sweep-compare-")]
    assert len(sweeps) == 8 and set(c.key for c in sweeps) <= rep.small_charts
    assert all([s.label for s in c.series if s.label][:2] == ["before", "after"] for c in sweeps)
    dists = [c for c in rep.line_charts if c.key.startswith("dist-")]
    shares = [c for c in rep.line_charts if c.key.startswith("share-")]
    assert 4 <= len(dists) == len(shares) < 14  # 14 steps, not all of them
    assert all(re.search(r", QD \d+$", c.title) for c in dists + shares)
    with open_store(db) as store:
        runs = [get_run(store, i) for i in (1, 2)]
    keys = {
        f"{s.label}, {p.at(s.dimension)}"
        for r in runs
        for s in find_sweeps(r)
        for p in s.points
        if p.step in key_steps(s)
    }
    shown = {c.title.split(": ", 1)[1] for c in dists}
    assert shown == keys, (shown, keys)  # exactly the key loads of either side
    assert "lightest and heaviest load" in rep.chart_note and f"{len(dists)} of 14 steps" in rep.chart_note
    pdf, html = tmp_path / "o.pdf", tmp_path / "o.html"
    assert cli("--db", db, "report", "1", "--compare", "2", "--pdf", pdf, "--html", html).returncode == 0
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True).stdout
    pages = text.split("\f")
    assert len(pages) <= 21, len(pages)  # was 31: five pages of bars and 16 per-run curves for the sweeps
    kinds = ("Response time distribution: ", "Share of I/Os by response time:")
    side_by_side = [ln for ln in text.splitlines() if sum(ln.count(k) for k in kinds) == 2]
    assert len(side_by_side) >= len(dists) - 2, side_by_side  # two a row
    page = html.read_text()
    assert page.count('<figure class="small"') == len(dists) + len(shares) + len(sweeps)


def test_timed_transfer_elapsed_before_and_after(workflows):
    rep = report_of(workflows["timed"][0])
    heads = rep.summary[0].headlines
    assert [
        h for h in heads if re.search(r" transfer of 4 GiB: [\d.,]+ (ms|s)\b.* \u2192 [\d.,]+ (ms|s)\b", h)
    ], heads


def test_dd_at_four_block_sizes_gets_one_before_after_transfer_table(workflows):
    from app.store.database import open_store
    from app.store.queries import get_run

    db = workflows["dd4"][0]
    rep = report_of(db)
    (table,) = [t for t in rep.headline_tables if t.key == "transfers-1"]
    assert [c.title for c in table.columns] == [
        "Transfer",
        "Load",
        "Block size",
        "I/O",
        "Bytes",
        "before elapsed",
        "before MB/s",
        "after elapsed",
        "after MB/s",
        "Elapsed change %",
    ]
    assert [r.cells[2].text for r in table.rows] == ["64 KiB", "256 KiB", "1 MiB", "4 MiB"]
    assert {r.cells[3].text for r in table.rows} == {"read"}
    with open_store(db) as store:
        runs = [get_run(store, i) for i in (1, 2)]
    for row, steps in zip(table.rows, zip(runs[0].steps, runs[1].steps, strict=True), strict=True):
        totals = [next(r.metrics for r in s.results if r.level == "all") for s in steps]
        assert row.cells[4].value == totals[0].bytes == totals[1].bytes == 64 << 20  # the bytes fio moved
        for (elapsed, mbps), m in zip(((5, 6), (7, 8)), totals, strict=True):
            assert row.cells[elapsed].value == pytest.approx(m.seconds / 86400)
            assert row.cells[mbps].value == pytest.approx(m.bytes / m.seconds / 1e6, rel=5e-3)
    heads = rep.summary[0].headlines
    assert [h for h in heads if h.startswith("dd read 4096k transfer of 64 MiB at 4 MiB: ")], heads


def test_preconditioning_is_summarised_compared_and_kept_out_of_the_results(workflows):
    db = workflows["flash"][0]
    rep = report_of(db)
    assert len(rep.comparisons[0].rows) == 4  # the four measured tests; fill and steady state are not results
    assert any(h.startswith("Preconditioning: steady state ") for h in rep.summary[0].headlines)
    table = next(t for t in rep.headline_tables if t.key == "headlines-1")
    assert {r.group for r in table.rows} == {"Preconditioning (not part of the results)"}
    (steady,) = [c for c in rep.sweep_overlays if c.key == "steady-compare-1"]  # both sides' rounds plotted
    assert [x.label for x in steady.series] == ["before", "after"] and all(x.points for x in steady.series)
    from app.report.csv_out import render_csv

    rows = list(csv.DictReader(io.StringIO(render_csv(rep))))
    assert {r["phase"] for r in rows} == {"fill", "steady", "measure"}


def test_the_iometer_template_pairs_its_four_specs(workflows):
    rep = report_of(workflows["icf"][0])
    c = rep.comparisons[0]
    assert len(c.rows) == 4 and not c.only_baseline and not c.only_candidate
    assert all(r.load.startswith("QD ") for r in c.rows)
    assert rep.summary[0].what_changed[0].startswith("nothing Fiometer records")
    fidelity = [
        d for d in rep.disclosure if "fio cannot reproduce exactly" in d
    ]  # once per plan, not per run
    assert fidelity and all(d.startswith("Runs 1 (before), 2 (after): ") for d in fidelity), fidelity
    assert len(set(fidelity)) == len(fidelity)
