"""Comparing stored runs in the window: the example's before/after table (change %, verdicts and their
colours), the threshold, the baseline, match modes with unmatched steps, the "what differs" flags, charts."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette

from app.report.html import CSS
from app.store import open_store
from app.ui.history.compare_view import CompareView
from app.ui.history.report_table import MARK_ROLE
from app.ui.main_window import MainWindow
from tests.gui.history_support import before_after_store
from tests.stored_runs import AFTER, BEFORE, RunSpec, StepSpec, record


def db_path() -> Path:
    return Path(os.environ["FIOMETER_DB"])


def open_comparison(window: MainWindow, qtbot, ids: list[int]) -> CompareView:
    ui = window.history
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.show_history()
    ui.list.select_runs(ids)
    assert ui.list.compare_button.isEnabled()
    qtbot.mouseClick(ui.list.compare_button, Qt.MouseButton.LeftButton)
    view = ui.workspace.currentWidget()
    assert isinstance(view, CompareView)
    qtbot.waitUntil(lambda: view.data is not None, timeout=10000)
    return view


def reload(view: CompareView, qtbot, change) -> None:
    with qtbot.waitSignal(view.loaded, timeout=10000):
        change()


def compared(view: CompareView) -> list:
    """The comparison and not-compared sections (headline figures and disk statistics aside)."""
    return [
        s for s in view.sections if not s.title.text().startswith(("Headline figures", "Disk statistics"))
    ]


def metric_rows(view: CompareView, section: int = 0) -> dict[str, dict[str, list]]:
    """{metric heading: {spec: [(text, mark, foreground) per cell]}} of a comparison table."""
    t = view.sections[section].table
    out: dict[str, dict[str, list]] = {}
    group = ""
    for r in range(t.rowCount()):
        first = t.item(r, 0)
        if t.columnSpan(r, 0) > 1:
            group = first.text()
            out[group] = {}
            continue
        out[group][first.text()] = [
            (t.item(r, c).text(), t.item(r, c).data(MARK_ROLE), t.item(r, c).foreground().color().name())
            for c in range(t.columnCount())
        ]
    return out


def test_compare_two_runs_gives_the_examples_table(window: MainWindow, qtbot) -> None:
    before, after = before_after_store(db_path())
    view = open_comparison(
        window, qtbot, [after, before]
    )  # selection order does not matter: oldest = baseline
    assert view.baseline.currentData() == before
    t = view.sections[0]
    assert t.title.text() == f"after (run {after}) compared with before (run {before})"  # the runs' tags
    head = [t.table.horizontalHeaderItem(c).text() for c in range(t.table.columnCount())]
    assert head == ["Access specification", "Load", "before", "after", "Change", "Change %", "Verdict"]
    rows = metric_rows(view)
    assert list(rows) == [
        "IOPS (higher is better)",
        "MB/s (higher is better)",
        "Average response time, ms (lower is better)",
        "Maximum response time, ms (lower is better)",
        "99th percentile response time, ms (lower is better)",
    ]
    assert list(rows["IOPS (higher is better)"]) == [s.spec for s in BEFORE]  # a row per access spec
    # coloured as the HTML report colours them: green better, red worse
    css = dict(re.findall(r"--(better|worse):(#[0-9a-f]{6});", CSS))
    better_fg, worse_fg = css["better"], css["worse"]
    assert (
        QColor(better_fg).green() > QColor(better_fg).red()
        and QColor(worse_fg).red() > QColor(worse_fg).green()
    )
    normal_fg = t.table.palette().color(QPalette.ColorRole.Text).name()

    iops = rows["IOPS (higher is better)"]["Max Throughput-50%Read"]
    assert [c[0] for c in iops] == [
        "Max Throughput-50%Read",
        "QD 64",
        "1,530",
        "5,113",
        "+3,583",
        "+234.2 %",
        "better",
    ]
    iops = iops[:1] + iops[2:]  # the load column aside, as below
    assert iops[4][1:] == ("better", better_fg) and iops[5][1:] == ("better", better_fg)
    assert iops[1][1] is None  # only the change and the verdict are marked
    # lower is better for response times: the same direction of change is worse there
    avg = {k: v[:1] + v[2:] for k, v in rows["Average response time, ms (lower is better)"].items()}
    assert [c[0] for c in avg["Max Throughput-100%Read"]][1:] == ["2.67", "5.09", "+2.42", "+90.6 %", "worse"]
    assert avg["Max Throughput-100%Read"][4][1:] == ("worse", worse_fg)
    assert [c[0] for c in avg["Max Throughput-50%Read"]][3:] == ["\u221227.4", "\u221280.5 %", "better"]
    assert avg["Max Throughput-50%Read"][5][1:] == ("better", better_fg)
    # within the 5 % threshold: not marked, normal colours
    mx = rows["Maximum response time, ms (lower is better)"]["RealLife-60%Rand-65%Read"]
    mx = mx[:1] + mx[2:]
    assert [c[0] for c in mx][1:] == ["120", "119", "\u22121.00", "\u22120.8 %", ""]
    assert mx[4][1] is None and mx[5][1] is None and mx[4][2] == normal_fg
    notes = t.notes.text()
    assert "within \u00b15 % are treated as run-to-run noise" in notes
    # what changed and the findings in words lead, as in the reports
    assert view.differs.isVisible()
    assert "<b>What changed:</b> nothing Fiometer records" in view.differs.text()  # the tags are the labels
    assert "Max Throughput-50%Read: IOPS +234.2 % at QD 64" in view.differs.text()
    # charts: one per metric from the report code, and both runs over time
    assert [c.chart.metric.key for c in view.bar_charts] == [
        "iops",
        "mbps",
        "lat_mean_ms",
        "lat_max_ms",
        "p99_ms",
    ]
    assert view.bar_charts[0].chart.categories == [f"{s.spec} (QD 64)" for s in BEFORE]
    assert [s.values for s in view.bar_charts[0].chart.series] == [
        [s.iops for s in BEFORE],
        [s.iops for s in AFTER],
    ]
    assert len(view.over_time.charts[0].curves) == 2
    assert "Run 1 (baseline)" in view.over_time.legend.text() and "Run 2" in view.over_time.legend.text()


def test_threshold_and_baseline_change_the_verdicts(window: MainWindow, qtbot) -> None:
    before, after = before_after_store(db_path(), samples=False)
    view = open_comparison(window, qtbot, [before, after])
    spec = "Max Throughput-100%Read"
    assert metric_rows(view)["IOPS (higher is better)"][spec][6][0] == "better"  # +8.1 %
    reload(view, qtbot, lambda: view.threshold.setValue(10.0))
    row = metric_rows(view)["IOPS (higher is better)"][spec]
    assert row[5][0] == "+8.1 %" and row[5][1] is None and row[6][0] == ""  # now within noise
    assert "\u00b110 %" in view.sections[0].notes.text()

    reload(view, qtbot, lambda: view.threshold.setValue(5.0))
    reload(view, qtbot, lambda: view.baseline.setCurrentIndex(view.baseline.findData(after)))
    assert view.current_request().baseline == [after] and view.current_request().candidates == [[before]]
    row = metric_rows(view)["IOPS (higher is better)"][spec]
    assert [c[0] for c in row][2:] == ["11,686", "10,809", "\u2212877", "\u22127.5 %", "worse"]
    assert row[6][1] == "worse"


def test_match_modes_and_steps_without_a_counterpart(window: MainWindow, qtbot) -> None:
    with open_store(db_path()) as store:
        qd64 = record(store, RunSpec(BEFORE[:2], name="QD 64"))
        qd16 = record(
            store,
            RunSpec(
                [
                    StepSpec(s.spec, s.iops * 0.5, s.mbps * 0.5, s.avg_ms, s.max_ms, s.p99_ms, qd=16)
                    for s in BEFORE[:2]
                ],
                name="QD 16",
                plan_variant=16,
            ),
        )
    view = open_comparison(window, qtbot, [qd64, qd16])
    # by default the steps pair by definition and place, the queue depth change said first
    assert view.match.currentData() == "auto" and len(compared(view)) == 1
    assert "<b>What changed:</b> queue depth 64 \u2192 16" in view.differs.text()
    row = metric_rows(view)["IOPS (higher is better)"]["Max Throughput-100%Read"]
    assert row[1][0] == "QD 64 \u2192 16" and row[5][0] == "\u221250.0 %" and row[6][0] == "worse"
    if os.environ.get("FIOMETER_SHOTS"):
        qtbot.wait(300)
        window.grab().save(os.path.join(os.environ["FIOMETER_SHOTS"], "compare-qd-change.png"))
    # exact: same spec at another queue depth is not the same step
    reload(view, qtbot, lambda: view.match.setCurrentIndex(view.match.findData("exact")))
    titles = [s.title.text() for s in compared(view)]
    assert titles[1] == f"Not compared: QD 16 (run {qd16}) and QD 64 (run {qd64})"  # untagged: the run names
    unmatched = compared(view)[1].table.row_texts()
    assert [r[0] for r in unmatched] == ["QD 64"] * 2 + ["QD 16"] * 2
    assert unmatched[0][3] == "QD 64, 1 worker, 1 target" and unmatched[2][3] == "QD 16, 1 worker, 1 target"
    assert "No steps in common" in view.sections[0].notes.text()
    assert "Match \u201cBy spec and place\u201d (above)" in compared(view)[1].notes.text()
    assert "--match" not in compared(view)[1].notes.text()

    reload(view, qtbot, lambda: view.match.setCurrentIndex(view.match.findData("spec")))
    assert len(compared(view)) == 1  # everything paired now
    head = [
        view.sections[0].table.horizontalHeaderItem(c).text()
        for c in range(view.sections[0].table.columnCount())
    ]
    assert head[1] == "Load"
    row = metric_rows(view)["IOPS (higher is better)"]["Max Throughput-100%Read"]
    assert row[1][0] == "QD 64 \u2192 16" and row[5][0] == "\u221250.0 %" and row[6][0] == "worse"


def test_what_differs_is_flagged(window: MainWindow, qtbot) -> None:
    with open_store(db_path()) as store:
        a = record(store, RunSpec(BEFORE, name="old server"))
        b = record(store, RunSpec(AFTER, name="new server", fio_version="3.41", hostname="lab2"))
    view = open_comparison(window, qtbot, [a, b])
    assert view.differs.isVisible()
    text = view.differs.text()
    assert f"new server (run {b}) compared with old server (run {a})" in text
    assert "<b>What changed:</b> measured with fio 3.33 \u2192 fio 3.41; hosts lab1 \u2192 lab2" in text


def test_three_runs_one_table_per_candidate(window: MainWindow, qtbot) -> None:
    with open_store(db_path()) as store:
        ids = [
            record(store, RunSpec(BEFORE, name="a")),
            record(store, RunSpec(AFTER, name="b")),
            record(store, RunSpec(AFTER, name="c")),
        ]
    view = open_comparison(window, qtbot, ids)
    assert [s.title.text().split(" compared with ")[0] for s in compared(view)] == [
        f"b (run {ids[1]})",
        f"c (run {ids[2]})",
    ]
    assert view.baseline.count() == 3


@pytest.mark.parametrize("deleted", ["baseline", "candidate"])
def test_compare_with_a_run_deleted_meanwhile(window: MainWindow, qtbot, dialogs, deleted: str) -> None:
    before, after = before_after_store(db_path(), samples=False)
    ui = window.history
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.show_history()
    ui.list.select_runs([before, after])
    gone = before if deleted == "baseline" else after
    with open_store(db_path()) as store:
        from app.store import delete_run

        delete_run(store, gone)
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.list._compare_selected()
    assert dialogs.problems[-1][0] == "Cannot compare the runs"
    assert f"There is no run {gone}" in dialogs.problems[-1][1]
    assert ui.workspace.views() == []


def test_repeats_tagged_alike_are_one_side(window: MainWindow, qtbot) -> None:
    """Three runs tagged "before" and two tagged "after" (one plan): Compare takes each group as a side, its
    spread as the noise, as `fiometer compare 1,2,3 4,5` does; unticking the box compares run by run."""
    with open_store(db_path()) as store:
        ids = [
            record(store, RunSpec([StepSpec("S", iops, 10, 1.0, 5, 2)], tags=[tag]))
            for iops, tag in (
                (980, "before"),
                (1000, "before"),
                (1020, "before"),
                (1300, "after"),
                (1310, "after"),
            )
        ]
    view = open_comparison(window, qtbot, ids)
    assert view.grouped.isVisible() and view.grouped.isChecked()
    assert [view.baseline.itemText(i) for i in range(view.baseline.count())] == [
        "Runs 1, 2, 3 (repeats, tagged before)",
        "Runs 4, 5 (repeats, tagged after)",
    ]
    req = view.current_request()
    assert (req.baseline, req.candidates) == (ids[:3], [ids[3:]])
    assert view.title() == "Compare 1,2,3 vs 4,5"
    rep = view.data.report
    assert (
        rep.baseline.label == "Mean of runs 1, 2, 3"
        and rep.comparisons[0].candidate.label == "Mean of runs 4, 5"
    )
    head = [
        view.sections[0].table.horizontalHeaderItem(c).text()
        for c in range(view.sections[0].table.columnCount())
    ]
    assert "Noise \u00b1" in head
    iops = metric_rows(view)["IOPS (higher is better)"]["S"]
    assert [c[0] for c in iops][1:4] == ["QD 64", "1,000", "1,305"] and iops[-1][0] == "better"
    if os.environ.get("FIOMETER_SHOTS"):
        qtbot.wait(300)
        window.grab().save(os.path.join(os.environ["FIOMETER_SHOTS"], "compare-groups.png"))

    reload(view, qtbot, lambda: view.grouped.setChecked(False))
    assert view.baseline.count() == 5 and view.current_request().candidates == [[i] for i in ids[1:]]


def test_same_name_different_definition_is_not_compared_and_says_why(window: MainWindow, qtbot) -> None:
    """The results fixture names every test's spec alike (as Iometer users often do): 4 KiB and 8 KiB are never
    paired."""
    from app.analysis.iometer_import import import_results_file
    from tests.helpers import shared_dir

    with open_store(db_path()) as store:
        runs = import_results_file(store, shared_dir() / "iometer-results" / "bench_results-1.1.0.csv")
    view = open_comparison(window, qtbot, [runs[0].run_id, runs[4].run_id])
    assert "No steps in common" in view.sections[0].notes.text()
    table = view.sections[1].table
    head = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert head[-1] == "Why"
    why = table.row_texts()[0][-1]
    assert table.item(0, table.columnCount() - 1).toolTip() == why
    assert why.startswith("same name, different definition: 4 KiB, 100% read, 100% random")
    if os.environ.get("FIOMETER_SHOTS"):
        qtbot.wait(300)
        window.grab().save(os.path.join(os.environ["FIOMETER_SHOTS"], "compare-not-compared.png"))


def test_an_imported_iometer_update_log_charts_over_time(window: MainWindow, qtbot) -> None:
    from app.analysis.iometer_import import import_results_file

    log = Path(__file__).resolve().parents[1] / "fixtures" / "iometer-results" / "inst-two-specs-1.1.0.csv"
    with open_store(db_path()) as store:
        (run,) = import_results_file(store, log)
    ui = window.history
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.show_history()
    view = ui.open_run(run.run_id)
    qtbot.waitUntil(lambda: view.data is not None, timeout=10000)
    assert view.data.has_samples and view.charts.isVisible()
    if os.environ.get("FIOMETER_SHOTS"):
        qtbot.wait(300)
        window.grab().save(os.path.join(os.environ["FIOMETER_SHOTS"], "iometer-log-over-time.png"))


def test_each_run_has_one_colour_in_every_tab_and_the_report(window: MainWindow, qtbot) -> None:
    from app.report.charts import run_color

    before, after = before_after_store(db_path())
    view = open_comparison(window, qtbot, [before, after])
    rep = view.data.report
    # the bar charts (Charts per metric), side by side: baseline first
    bars = [[QColor(s.color).name() for s in v.chart.series] for v in view.bar_charts]
    assert bars and all(b == [run_color(0), run_color(1)] for b in bars)
    # the report's line charts (distributions, per-second timelines) draw each side in the same colour
    lines = {s.label: s.color for ch in rep.line_charts for s in ch.series if s.label}
    assert lines and lines == {rep.labels[0]: run_color(0), rep.labels[1]: run_color(1)}
    # Over time: each run's line and legend square in its colour (they were the live palette's before)
    over = view.over_time
    names = [name for name, _members in over.groups]
    assert names == [f"Run {before} (baseline)", f"Run {after}"]
    for chart in over.charts:
        assert [c.opts["pen"].color().name() for c in chart.curves] == [run_color(0), run_color(1)]
    assert f"color:{run_color(0)}" in over.legend.text() and f"color:{run_color(1)}" in over.legend.text()
    # the baseline menu swaps the sides: the colours follow the side, bars and lines alike
    reload(view, qtbot, lambda: view.baseline.setCurrentIndex(view.baseline.findData(after)))
    assert [QColor(s.color).name() for s in view.bar_charts[0].chart.series] == [run_color(0), run_color(1)]
    assert [name for name, _m in view.over_time.groups] == [f"Run {after} (baseline)", f"Run {before}"]
    assert [c.opts["pen"].color().name() for c in view.over_time.charts[0].curves] == [
        run_color(0),
        run_color(1),
    ]
