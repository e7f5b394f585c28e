"""GUI Start with "Record Last Update Results" ENABLED asks for Iometer's results file, as Iometer does, and
writes the per-update file inst<results file> beside it during a real fio run (null engine); cancelling the
question does not start the run."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog

from app.analysis.iometer_results_reader import read_results_file
from app.engine.run.runner import RunOptions
from app.ui.main_window import MainWindow
from tests.gui.conftest import local_plan


class SaveDialog:
    """Answers QFileDialog.getSaveFileName as the user would, and records what was asked."""

    def __init__(self, answer: str):
        self.answer = answer
        self.asked: list[tuple[str, str]] = []

    def __call__(self, parent, title, start, *args, **kwargs):
        self.asked.append((title, start))
        return self.answer, ""


@pytest.mark.fio
def test_start_asks_for_the_results_file_and_writes_every_update_beside_it(
    window: MainWindow, qtbot, tmp_path: Path, monkeypatch
) -> None:
    plan = local_plan(tmp_path, workers=2)
    plan.setup.iometer.record_last_update = True
    window.doc.replace(plan)
    window.run_control.run_options = RunOptions(engine="null", run_time=2, ramp_up=0, file_size=1 << 20)
    dialog = SaveDialog(str(tmp_path / "results.csv"))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", dialog)
    with qtbot.waitSignal(window.controller.finished, timeout=60000):
        assert window.run_control.start_run()
    assert dialog.asked and "Record Last Update Results" in dialog.asked[0][0]
    assert dialog.asked[0][1].endswith("results.csv")  # Iometer's default name
    (series,) = read_results_file(tmp_path / "instresults.csv")
    (test,) = series.tests
    assert len(test.updates) >= 2 * 1 and {u.name for u in test.updates} == {"W1", "W2"}
    assert [r.kind for r in test.rows] == ["WORKER", "WORKER", "ALL"]
    assert (tmp_path / "instresults.csv").read_bytes().endswith(b"'End Test\r\n")
    (whole,) = read_results_file(tmp_path / "results.csv")
    assert whole.tests[0].rows[0].kind == "ALL"
    said = [window.messages.item(i).text() for i in range(window.messages.count())]
    qtbot.waitUntil(
        lambda: any(
            "Iometer results appended to" in t
            for t in [window.messages.item(i).text() for i in range(window.messages.count())]
        )
    )
    assert any(f"every update goes to {tmp_path / 'instresults.csv'}" in t for t in said)
    # the next Start proposes the same file (Iometer appends a series to it)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", cancel := SaveDialog(""))
    assert not window.run_control.start_run()  # cancelled: no run, as in Iometer
    assert cancel.asked[0][1] == str(tmp_path / "results.csv")
    assert not window.controller.running


def test_a_plan_without_the_setting_starts_without_asking(
    window: MainWindow, tmp_path: Path, monkeypatch
) -> None:
    from app.ui.run.results_file_prompt import ask_results_file

    asked = SaveDialog(str(tmp_path / "results.csv"))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", asked)
    assert ask_results_file(window, local_plan(tmp_path), None) is None and not asked.asked


def test_a_results_file_that_cannot_be_written_refuses_the_start(
    window: MainWindow, dialogs, tmp_path: Path, monkeypatch
) -> None:
    plan = local_plan(tmp_path, workers=1)
    plan.setup.iometer.record_last_update = True
    window.doc.replace(plan)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", SaveDialog(str(tmp_path / "gone" / "results.csv")))
    assert not window.run_control.start_run()
    assert not window.controller.running
    ((title, text),) = dialogs.problems
    assert title == "Cannot start the test" and "instresults.csv" in text and "cannot be written" in text
