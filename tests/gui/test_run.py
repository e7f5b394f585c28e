"""Real runs from the window: local fio with the null engine, live charts, Stop, closing mid-run."""

from __future__ import annotations

import gc
import os
import statistics
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer

from app.engine.run.runner import RunOptions
from app.live.data import ALL_KEY, WHOLE
from app.model.plan import Target
from app.store import get_run, list_runs, open_store, step_samples
from app.ui.main_window import MainWindow
from app.ui.plan.plan_document import Change
from app.ui.run import live_gc
from tests.gui.conftest import local_plan
from tests.platform_marks import KEYS_UNDER_WINE, posix_only, wine_limit

pytestmark = pytest.mark.fio


def unsaved_change(window: MainWindow) -> None:
    """A real edit (undoable), so the plan has unsaved changes."""
    window.doc.edit("Rename", Change.SETUP, lambda plan: setattr(plan, "name", "changed"))


def mapped_plan(tmp_path: Path):
    """One worker whose target is Iometer's 'C:', placed with a mapping onto a temp file."""
    plan = local_plan(tmp_path, workers=2)
    for w in plan.managers[0].workers:
        w.targets = [Target("C:")]
    return plan, {"C:": str(tmp_path / "iobw.tst")}


@wine_limit(KEYS_UNDER_WINE)
def test_run_updates_charts_live_and_stops(window: MainWindow, tmp_path: Path, qtbot) -> None:
    plan, mapping = mapped_plan(tmp_path)
    window.doc.replace(plan)
    window.run_control.run_options = RunOptions(engine="null", run_time=20, mapping=mapping)
    redraws = []
    original = window.results_tab.charts.redraw

    def counting(live, kind, force=False):
        changed = original(live, kind, force)
        if changed and live.series.get(ALL_KEY) is not None and live.series[ALL_KEY].n:
            redraws.append(live.series[ALL_KEY].n)
        return changed

    window.results_tab.charts.redraw = counting  # type: ignore[method-assign]
    thresholds = gc.get_threshold()
    assert window.run_control.start_run()
    assert window.tabs.currentWidget() is window.results_tab
    assert not window.action_map["start"].isEnabled() and window.action_map["stop"].isEnabled()
    assert not window.targets_tab.isEnabled()  # the plan cannot change under a running test
    qtbot.waitUntil(lambda: len(redraws) >= 3, timeout=20000)
    assert redraws == sorted(redraws) and redraws[-1] > redraws[0]
    assert "Step 1/1" in window.status_step.text() and "Running" in window.status_state.text()
    assert "Remaining" in window.status_time.text()
    assert gc.get_freeze_count() > 10_000  # the window's objects are left out of collections during the run
    assert gc.get_threshold() == (
        live_gc.RUN_THRESHOLD,
        *thresholds[1:],
    )  # and the young ones collected less often

    # the charts hold real numbers, and the table shows them with Iometer's names
    s = window.live.series[ALL_KEY]
    assert s.ys(WHOLE, "iops")[-1] > 0
    curve_x, _curve_y = window.results_tab.charts.charts[0].curves[0].getData()
    assert curve_x is not None and len(curve_x) >= 3
    assert window.results_tab.table.verticalHeaderItem(0).text() == "Total I/Os per Second (IOPS)"
    assert window.results_tab.table.item(0, 0).text() not in ("", "—")

    # the event loop stays responsive while fio runs
    lags = []
    for _ in range(5):
        t0 = time.monotonic()
        fired: list[float] = []
        QTimer.singleShot(0, lambda f=fired: f.append(time.monotonic()))
        qtbot.waitUntil(lambda f=fired: bool(f), timeout=10000)
        lags.append(fired[0] - t0)
    # a loop blocked on fio would lag by up to the status interval every time; one slow event on a busy
    # machine is not that
    assert statistics.median(lags) < 0.25

    qtbot.keyClick(window, Qt.Key.Key_Escape)  # Stop: like Iometer, ends this step; it was the last one
    with qtbot.waitSignal(window.controller.finished, timeout=20000) as finished:
        pass
    assert finished.args == ["stopped"]  # not complete: its only step was ended early
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == thresholds  # given back after it
    assert window.action_map["start"].isEnabled() and window.targets_tab.isEnabled()
    messages = [window.messages.item(i).text() for i in range(window.messages.count())]
    assert "Step 1 (S): stopped" in messages and "Run stopped: 1 of 1 step ran (1 stopped)" in messages
    assert window.status_state.text() == "Last run: stopped"
    assert window.status_step.text() == "1 of 1 step ran (1 stopped)"

    # the run is in the results database, like a CLI run: steps, per-interval samples, final results
    with open_store(os.environ["FIOMETER_DB"]) as store:
        (summary,) = list_runs(store)
        assert summary.status == "stopped" and summary.plan_name == "GUI test plan"
        run = get_run(store, summary.id)
        (step,) = run.steps
        assert step.status == "stopped"
        stored = step_samples(store, step.id, "all", "ALL")
        assert len(stored) >= 3 and stored[-1][1].iops > 0
        assert any(r.level == "all" and r.metrics.iops > 0 for r in step.results)
    assert f"Stored as run {summary.id} in" in " ".join(messages)


def test_closing_during_a_run_asks_one_question_and_cancel_changes_nothing(
    window: MainWindow, tmp_path: Path, qtbot
) -> None:
    plan, mapping = mapped_plan(tmp_path)
    window.doc.replace(plan)
    unsaved_change(window)  # unsaved changes as well as a run
    window.run_control.run_options = RunOptions(engine="null", run_time=60, mapping=mapping)
    assert window.run_control.start_run()
    qtbot.waitUntil(lambda: bool(window.live.series), timeout=20000)
    asked: list[str] = []
    answers = iter(["cancel", "discard"])
    window.close_question = lambda: asked.append("run+changes") or next(answers)  # type: ignore[method-assign]
    second_prompt: list[bool] = []
    window.files.maybe_discard = lambda: second_prompt.append(True) or True  # type: ignore[method-assign]
    window.close()
    assert window.isVisible() and window.controller.state == "running" and window.doc.dirty  # nothing changed
    window.close()
    assert window.controller.state == "stopping"
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=20000)
    assert asked == ["run+changes", "run+changes"] and not second_prompt  # one question each time, never two
    assert not window.controller.running and window.controller.last_status == "stopped"
    assert window.controller.thread is None


def test_the_close_question_defaults_to_cancel(window: MainWindow, tmp_path: Path, qtbot) -> None:
    from PySide6.QtWidgets import QApplication, QMessageBox

    plan, mapping = mapped_plan(tmp_path)
    window.doc.replace(plan)
    unsaved_change(window)
    window.run_control.run_options = RunOptions(engine="null", run_time=60, mapping=mapping)
    assert window.run_control.start_run()
    seen: list[str] = []

    def press_enter() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        seen.append(
            box.text()
            + " "
            + box.informativeText()
            + " | "
            + " / ".join(b.text() for b in box.buttons())
            + " | default "
            + box.defaultButton().text()
        )
        qtbot.keyClick(box, Qt.Key.Key_Return)

    QTimer.singleShot(200, press_enter)
    assert MainWindow.close_question(window) == "cancel"  # the real question (the fixture answers others)
    assert "A test is running" in seen[0] and "unsaved changes" in seen[0]
    assert "Stop, save the plan and close" in seen[0] and seen[0].endswith("default Cancel")
    assert window.controller.state == "running"
    window.controller.abort()
    qtbot.waitUntil(lambda: not window.controller.running, timeout=20000)


@posix_only("an unmapped 'C:' target cannot be placed on Linux; on Windows it is this machine's drive C:")
def test_unrunnable_plan_is_refused_with_the_reason(window: MainWindow, dialogs, tmp_path: Path) -> None:
    plan, _mapping = mapped_plan(tmp_path)
    window.doc.replace(plan)  # 'C:' cannot be placed on Linux without a mapping
    window.run_control.run_options = RunOptions(engine="null", run_time=2)
    assert not window.run_control.start_run()
    assert not window.controller.running
    title, text = dialogs.problems[-1]
    assert title == "Cannot start the test" and "'C:'" in text


def test_writing_to_an_existing_file_is_armed_by_asking(
    window: MainWindow, dialogs, tmp_path: Path, qtbot
) -> None:
    plan = local_plan(tmp_path, workers=1)
    target = Path(plan.managers[0].workers[0].targets[0].name)
    target.write_bytes(b"precious" * 1024)
    window.doc.replace(plan)
    window.run_control.run_options = RunOptions(run_time=1, file_size=1 << 20)
    dialogs.answer = False
    assert not window.run_control.start_run()
    assert dialogs.questions and str(target) in dialogs.questions[-1][1]
    assert target.read_bytes().startswith(b"precious")
    dialogs.answer = True
    assert window.run_control.start_run()
    with qtbot.waitSignal(window.controller.finished, timeout=30000) as finished:
        pass
    assert finished.args == ["complete"]
