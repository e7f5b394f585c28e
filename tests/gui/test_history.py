"""The History tab on real store files: listing with status, filters, edits, deletion, import, the empty and
damaged states, opening a stored run (replayed charts and its results table), and a run finishing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app.engine.run.runner import RunOptions
from app.store import get_run, list_runs, open_store, step_samples
from app.ui.history.history_model import COLUMNS, STATUS_COLORS
from app.ui.history.history_tab import EMPTY_TEXT
from app.ui.history.run_view import RunView
from app.ui.main_window import MainWindow
from tests.gui.conftest import local_plan, plan_file
from tests.gui.history_support import before_after_store, status_run
from tests.helpers import shared_dir
from tests.platform_marks import KEYS_UNDER_WINE, wine_limit

RESULTS = shared_dir() / "iometer-results" / "bench_results-1.1.0.csv"


def db_path() -> Path:
    return Path(os.environ["FIOMETER_DB"])


def show_history(window: MainWindow, qtbot):
    ui = window.history
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.show_history()
    return ui


def refreshed(ui, qtbot) -> None:
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.list.refresh()


def rows(ui) -> list[dict[str, str]]:
    p = ui.list.proxy
    return [{c: p.index(r, i).data() for i, c in enumerate(COLUMNS)} for r in range(p.rowCount())]


def idle(ui, qtbot) -> None:
    qtbot.waitUntil(lambda: not ui.tasks.busy, timeout=15000)


@pytest.fixture
def five_runs() -> dict[str, int]:
    """before (1), after (2), and runs that were stopped, interrupted and failed."""
    before, after = before_after_store(db_path())
    with open_store(db_path()) as store:
        stopped = status_run(store, "Firmware 2.1", "stopped", tags=("client-x",))
        interrupted = status_run(store, "Power cut", "interrupted")
        failed = status_run(store, "Target offline", "failed")
    return {
        "before": before,
        "after": after,
        "stopped": stopped,
        "interrupted": interrupted,
        "failed": failed,
    }


# --- the list ---------------------------------------------------------------------------------------
def test_empty_history_says_how_to_fill_it_and_creates_no_database(window: MainWindow, qtbot) -> None:
    ui = show_history(window, qtbot)
    assert ui.list.pages.currentWidget() is ui.list.empty
    assert ui.list.empty.message.text() == EMPTY_TEXT
    assert ui.list.empty.import_button.isVisibleTo(ui.list) and not ui.list.empty.retry_button.isVisibleTo(
        ui.list
    )
    assert not db_path().exists()  # looking at an empty history writes nothing
    file_menu = window.menus["file"]
    assert window.action_map["import_results"] in file_menu.actions()
    assert file_menu.actions().index(window.action_map["import_results"]) < file_menu.actions().index(
        window.action_map["quit"]
    )
    assert window.action_map["history"] in window.menus["view"].actions()


def test_import_from_the_empty_state_stores_iometer_runs(window: MainWindow, qtbot, monkeypatch) -> None:
    ui = show_history(window, qtbot)
    monkeypatch.setattr(
        "app.ui.history.history_hook.QFileDialog.getOpenFileName",
        lambda *a, **k: (str(RESULTS), "Iometer results (*.csv)"),
    )
    with qtbot.waitSignal(ui.list.loaded, timeout=20000):
        qtbot.mouseClick(ui.list.empty.import_button, Qt.MouseButton.LeftButton)
    with open_store(db_path()) as store:
        stored = list_runs(store)
    assert len(stored) == 12 and all("iometer" in r.tags for r in stored)
    assert ui.list.pages.currentIndex() == 0 and len(rows(ui)) == 12
    assert ui.list.count.text() == "12 runs"
    assert sorted(ui.list.selected_ids()) == sorted(r.id for r in stored)  # the imported runs are selected
    assert "12 runs imported from bench_results-1.1.0.csv" in window.statusBar().currentMessage()


def test_import_of_a_file_that_is_not_iometer_results_says_why(
    window: MainWindow, qtbot, dialogs, tmp_path: Path
) -> None:
    ui = show_history(window, qtbot)
    bad = tmp_path / "notes.csv"
    bad.write_text("hello,world\n1,2\n")
    ui.import_results(bad)
    idle(ui, qtbot)
    assert dialogs.problems and dialogs.problems[-1][0] == "Cannot import the results"
    assert "Nothing was imported." in dialogs.problems[-1][1] and "Traceback" not in dialogs.problems[-1][1]


def test_lists_every_stored_run_with_its_status(window: MainWindow, qtbot, five_runs) -> None:
    ui = show_history(window, qtbot)
    shown = {int(r["Run"]): r for r in rows(ui)}
    assert set(shown) == set(five_runs.values())
    for status, run_id in five_runs.items():
        expected = "complete" if status in ("before", "after") else status
        assert shown[run_id]["Status"] == expected
    before = shown[five_runs["before"]]
    assert before["Name"] == "EVA 4400 32 disks Vraid5" and before["Plan"] == "IO-Test"
    assert (
        before["Steps"] == "4" and before["Tags"] == "before" and before["Managers / hosts"] == "M1 on lab1"
    )
    assert before["Started"][:4].isdigit() and len(before["Started"]) == 16  # local time, minutes
    assert shown[five_runs["stopped"]]["Tags"] == "client-x"
    # failed and interrupted stand out, with what the status means
    p = ui.list.proxy
    failed_row = next(r for r in range(p.rowCount()) if p.index(r, 0).data() == str(five_runs["failed"]))
    status_idx = p.index(failed_row, COLUMNS.index("Status"))
    assert status_idx.data(Qt.ItemDataRole.ForegroundRole).color().name() == STATUS_COLORS["failed"]
    assert "failed" in status_idx.data(Qt.ItemDataRole.ToolTipRole)
    assert ui.list.count.text() == "5 runs"


def test_filter_by_text_tag_and_status(window: MainWindow, qtbot, five_runs) -> None:
    ui = show_history(window, qtbot)
    with qtbot.waitSignal(ui.list.loaded, timeout=5000):
        qtbot.keyClicks(ui.list.search, "vraid1")
    assert [int(r["Run"]) for r in rows(ui)] == [five_runs["after"]]
    assert ui.list.count.text() == "1 of 5 runs" and ui.list.clear_filter.isVisibleTo(ui.list)

    with qtbot.waitSignal(ui.list.loaded, timeout=5000):
        ui.list.clear_filters()
    assert len(rows(ui)) == 5
    tags = [ui.list.tag_filter.itemText(i) for i in range(ui.list.tag_filter.count())]
    assert tags == ["Any tag", "after", "before", "client-x"]
    with qtbot.waitSignal(ui.list.loaded, timeout=5000):
        ui.list.tag_filter.setCurrentIndex(tags.index("before"))
    assert [int(r["Run"]) for r in rows(ui)] == [five_runs["before"]]

    with qtbot.waitSignal(ui.list.loaded, timeout=5000):
        ui.list.clear_filters()
    with qtbot.waitSignal(ui.list.loaded, timeout=5000):
        ui.list.status_filter.setCurrentIndex(ui.list.status_filter.findData("interrupted"))
    assert [int(r["Run"]) for r in rows(ui)] == [five_runs["interrupted"]]
    with qtbot.waitSignal(ui.list.loaded, timeout=5000):
        ui.list.search.setText("no such run")
    assert rows(ui) == [] and ui.list.count.text() == "0 of 5 runs"
    assert ui.list.pages.currentIndex() == 0  # a filter that matches nothing is not "no runs yet"


# --- edits --------------------------------------------------------------------------------------------
def test_rename_tag_and_annotate_change_the_store(window: MainWindow, qtbot, five_runs) -> None:
    ui = show_history(window, qtbot)
    run_id = five_runs["after"]
    ui.list.select_runs([run_id])
    ed = ui.list.editor
    assert ed.name.text() == "EVA 4400 36 disks Vraid1" and ed.tags.text() == "after"
    assert not ed.save_button.isEnabled()
    ed.name.setText("EVA 4400 36 disks Vraid1 (FW 2.1)")
    ed.tags.setText("after, client-x, After")  # a tag once, whatever its case
    ed.description.setText("36 HDDs, Vraid1")
    ed.notes.setPlainText("Disk group grown from 32 to 36 disks.")
    assert ed.save_button.isEnabled()
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        qtbot.mouseClick(ed.save_button, Qt.MouseButton.LeftButton)
    with open_store(db_path()) as store:
        run = get_run(store, run_id)
    assert run.name == "EVA 4400 36 disks Vraid1 (FW 2.1)"
    assert run.tags == ["after", "client-x"]
    assert run.description == "36 HDDs, Vraid1" and run.notes == "Disk group grown from 32 to 36 disks."
    shown = {int(r["Run"]): r for r in rows(ui)}[run_id]
    assert shown["Tags"] == "after, client-x" and shown["Notes"] == "Disk group grown from 32 to 36 disks."
    assert ui.list.selected_ids() == [run_id] and not ed.save_button.isEnabled()

    # removing a tag, and a name cannot be emptied
    ed.tags.setText("client-x")
    ed.name.setText("  ")
    qtbot.mouseClick(ed.save_button, Qt.MouseButton.LeftButton)
    assert ed.error.isVisibleTo(ed) and "name" in ed.error.text()
    idle(ui, qtbot)
    with open_store(db_path()) as store:
        assert get_run(store, run_id).tags == ["after", "client-x"]  # nothing saved
    ed.name.setText("Vraid1")
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        qtbot.mouseClick(ed.save_button, Qt.MouseButton.LeftButton)
    with open_store(db_path()) as store:
        run = get_run(store, run_id)
    assert run.name == "Vraid1" and run.tags == ["client-x"]


def test_saving_a_run_deleted_meanwhile_says_so(window: MainWindow, qtbot, dialogs, five_runs) -> None:
    ui = show_history(window, qtbot)
    run_id = five_runs["stopped"]
    ui.list.select_runs([run_id])
    with open_store(db_path()) as store:  # another Fiometer deletes it
        from app.store import delete_run

        delete_run(store, run_id)
    ui.list.editor.notes.setPlainText("too late")
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.list.editor.save()
    assert dialogs.problems[-1][0] == "Cannot save the run"
    assert f"There is no run {run_id}" in dialogs.problems[-1][1] and "deleted" in dialogs.problems[-1][1]
    assert run_id not in [int(r["Run"]) for r in rows(ui)]


def test_delete_asks_first_and_says_what_goes(window: MainWindow, qtbot, dialogs, five_runs) -> None:
    ui = show_history(window, qtbot)
    target = five_runs["before"]
    view = ui.open_run(target)
    qtbot.waitUntil(lambda: view.data is not None, timeout=10000)
    ui.show_history()
    ui.list.select_runs([target, five_runs["failed"]])

    dialogs.answer = False
    qtbot.mouseClick(ui.list.delete_button, Qt.MouseButton.LeftButton)
    title, text = dialogs.questions[-1]
    assert title == "Delete 2 runs"
    assert f"Run {target} \u201cEVA 4400 32 disks Vraid5\u201d (complete, 4 steps" in text
    assert "tags before" in text and "Target offline" in text and "cannot be undone" in text
    idle(ui, qtbot)
    with open_store(db_path()) as store:
        assert len(list_runs(store)) == 5  # declined: nothing deleted

    dialogs.answer = True
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        qtbot.mouseClick(ui.list.delete_button, Qt.MouseButton.LeftButton)
    with open_store(db_path()) as store:
        left = {r.id for r in list_runs(store)}
    assert left == set(five_runs.values()) - {target, five_runs["failed"]}
    assert {int(r["Run"]) for r in rows(ui)} == left
    assert view not in ui.workspace.views()  # the deleted run's tab is closed


def test_damaged_database_is_explained_not_a_crash(window: MainWindow, qtbot) -> None:
    db_path().parent.mkdir(parents=True, exist_ok=True)
    db_path().write_bytes(b"this is not a database, just text " * 200)
    ui = show_history(window, qtbot)
    assert ui.list.pages.currentWidget() is ui.list.empty
    text = ui.list.empty.message.text()
    assert text.startswith("The results database cannot be read.") and str(db_path()) in text
    assert ui.list.empty.retry_button.isVisibleTo(ui.list) and not ui.list.empty.import_button.isVisibleTo(
        ui.list
    )


# --- a stored run ---------------------------------------------------------------------------------------
def test_open_a_stored_run_shows_its_numbers_and_replays_its_samples(
    window: MainWindow, qtbot, five_runs
) -> None:
    ui = show_history(window, qtbot)
    ui.list.select_runs([five_runs["before"]])
    qtbot.mouseClick(ui.list.open_button, Qt.MouseButton.LeftButton)
    view = ui.workspace.currentWidget()
    assert isinstance(view, RunView) and ui.workspace.tabText(ui.workspace.currentIndex()) == "Run 1 (stored)"
    qtbot.waitUntil(lambda: view.data is not None, timeout=10000)
    banner = view.banner_text.text()
    assert (
        banner.startswith("Stored run 1 \u201cEVA 4400 32 disks Vraid5\u201d") and "Not a live test" in banner
    )
    table = view.table.row_texts()
    head = [view.table.horizontalHeaderItem(c).text() for c in range(view.table.columnCount())]
    assert head[:2] == ["Step", "Access specification"] and {"IOPS", "MB/s", "Avg ms", "p99 ms"} <= set(head)
    row = dict(zip(head, table[2], strict=True))
    assert row["Access specification"] == "Max Throughput-50%Read"
    assert (row["IOPS"], row["MB/s"], row["Avg ms"], row["QD"]) == (
        "1,530",
        "47.8",
        "34.0",
        "64",
    )  # three significant digits

    # the charts: every step's samples on the run's time axis, steps one after another
    iops = view.charts.charts[0].curves[0]
    x, y = iops.getData()
    finite = np.isfinite(y)
    assert finite.sum() == 4 * 10  # 4 steps x 10 samples
    assert np.all(np.diff(x[finite]) > 0)
    with open_store(db_path()) as store:
        run = get_run(store, five_runs["before"])
        third = [m.iops for _t, m in step_samples(store, run.steps[2].id, "all", "ALL")]
    # one step from its own start
    view.step.setCurrentIndex(3)
    x, y = view.charts.charts[0].curves[0].getData()
    assert list(np.round(y, 3)) == list(np.round(np.array(third, dtype=np.float32), 3))
    assert x[0] == pytest.approx(1.0)
    assert view.charts.charts[0].plot.getAxis("bottom").labelText == "time since the step started (s)"
    # opening it again shows the same tab
    assert ui.open_run(five_runs["before"]) is view


def test_open_a_run_deleted_meanwhile_says_so(window: MainWindow, qtbot, dialogs, five_runs) -> None:
    ui = show_history(window, qtbot)
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.open_run(4242)
    assert dialogs.problems[-1] == (
        "Cannot open the run",
        f"There is no run 4242 in {db_path()}; it may have been deleted.",
    )
    assert ui.workspace.views() == []


@pytest.fixture(scope="module")
def cli_db(tmp_path_factory) -> Path:
    """A two-step null-engine run made with the real CLI (samples every second), as a store file."""
    tmp = tmp_path_factory.mktemp("cli-run")
    plan = plan_file(tmp, local_plan(tmp, workers=2, specs=("Seq read", "Rand read")))
    db = tmp / "cli.db"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(db),
            "run",
            str(plan),
            "--run-time",
            "2",
            "--engine",
            "null",
            "--tag",
            "cli",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert out.returncode == 0, out.stderr
    return db


@pytest.mark.fio
def test_open_a_run_made_by_the_cli(window: MainWindow, qtbot, cli_db: Path) -> None:
    db_path().parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(cli_db, db_path())
    ui = show_history(window, qtbot)
    (row,) = rows(ui)
    assert row["Status"] == "complete" and row["Tags"] == "cli" and row["Steps"] == "2"
    view = ui.open_run(int(row["Run"]))
    qtbot.waitUntil(lambda: view.data is not None, timeout=10000)
    with open_store(db_path()) as store:
        run = get_run(store, int(row["Run"]))
        samples = [len(step_samples(store, s.id, "all", "ALL")) for s in run.steps]
    iops = next(r.metrics.iops for r in run.steps[0].results if r.level == "all")
    assert view.table.row_texts()[0][1] == "Seq read" and view.table.row_texts()[1][1] == "Rand read"
    shown = float(view.table.item(0, 5).text().replace(",", ""))
    assert shown == pytest.approx(iops, abs=1.0)
    # replayed under the live rules (a point per update period, 1 s): each step's last point "since step
    # start" is the step's stored result
    x, y = view.charts.charts[0].curves[0].getData()
    assert 2 <= np.isfinite(y).sum() <= sum(samples)
    view.since_start.setChecked(True)
    x, y = view.charts.charts[0].curves[0].getData()
    starts = [m.x for m in view.live.steps][1:] + [
        np.inf
    ]  # one line through the steps: cut it at their starts
    last = [y[(x < end) & np.isfinite(y)][-1] for end in starts]
    results = [next(r.metrics.iops for r in s.results if r.level == "all") for s in run.steps]
    assert last == pytest.approx(results, rel=0.01)
    # each worker: one curve per worker, named as the run named them
    titles = [view.scope.itemText(i) for i in range(view.scope.count())]
    assert "Each worker" in titles
    view.scope.setCurrentIndex(titles.index("Each worker"))
    assert len(view.charts.charts[0].curves) == 2
    assert "Worker 1" in view.charts.legend.text() or "W1" in view.charts.legend.text()


@pytest.mark.fio
def test_a_run_finishing_in_this_window_appears_in_history(window: MainWindow, qtbot, tmp_path: Path) -> None:
    ui = show_history(window, qtbot)
    assert ui.list.pages.currentWidget() is ui.list.empty
    window.doc.replace(local_plan(tmp_path, workers=1))
    window.run_control.run_options = RunOptions(engine="null", run_time=1, ramp_up=0)
    with qtbot.waitSignal(window.controller.finished, timeout=30000):
        assert window.run_control.start_run()
    qtbot.waitUntil(lambda: len(rows(ui)) == 1, timeout=10000)  # refreshed while Results Display is shown
    (row,) = rows(ui)
    assert row["Status"] == "complete" and row["Plan"] == "GUI test plan"
    assert ui.list.selected_ids() == [int(row["Run"])]


@wine_limit(KEYS_UNDER_WINE)
def test_keys_and_context_menu_on_the_list(window: MainWindow, qtbot, dialogs, five_runs) -> None:
    ui = show_history(window, qtbot)
    ui.list.select_runs([five_runs["after"]])
    ui.list.view.setFocus()
    qtbot.keyClick(ui.list.view, Qt.Key.Key_Return)
    view = ui.workspace.currentWidget()
    assert isinstance(view, RunView) and view.run_id == five_runs["after"]
    ui.show_history()
    ui.list.view.setFocus()
    dialogs.answer = False
    qtbot.keyClick(ui.list.view, Qt.Key.Key_Delete)
    assert dialogs.questions and dialogs.questions[-1][0] == "Delete run"
    menu = {a.text(): a.isEnabled() for a in ui.list.view.actions()}
    assert menu == {"Open": True, "Compare\u2026": False, "Report\u2026": True, "Delete\u2026": True}


def test_saving_in_the_unsaved_edits_question_keeps_the_click_on_the_other_run(
    window: MainWindow, qtbot, five_runs
) -> None:
    ui = show_history(window, qtbot)
    first, other = five_runs["after"], five_runs["stopped"]
    ui.list.select_runs([first])
    ui.list.editor.notes.setPlainText("checked the cabling")
    ui.list.unsaved_edit_question = lambda _label: "save"
    view, proxy = ui.list.view, ui.list.proxy
    row = next(r for r in range(proxy.rowCount()) if int(proxy.index(r, 0).data()) == other)
    where = view.visualRect(proxy.index(row, 0)).center()
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):  # a click on another run, answered with Save
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=where)
    idle(ui, qtbot)
    with open_store(db_path()) as store:
        assert get_run(store, first).notes == "checked the cabling"
    assert ui.list.selected_ids() == [other]
    assert ui.list.editor.row is not None and ui.list.editor.row.id == other
