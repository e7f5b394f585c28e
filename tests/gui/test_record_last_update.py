"""Iometer's Record Last Update Results switch on the Results Display (issue 38.5a): the GUI sets it, Undo
takes it back, and it is saved with the plan and read back."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from app.model import planfile
from app.ui.main_window import MainWindow
from tests.gui.conftest import local_plan


def test_the_switch_sets_the_plan_and_round_trips_through_the_plan_file(
    window: MainWindow, qtbot, tmp_path: Path
) -> None:
    window.doc.replace(local_plan(tmp_path))
    box = window.results_tab.record_last
    assert not box.isChecked() and not window.doc.plan.setup.iometer.record_last_update
    window.tabs.setCurrentWidget(window.results_tab)
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
    assert window.doc.plan.setup.iometer.record_last_update
    saved = tmp_path / "on.fiometer.json"
    window.doc.save(saved)
    plan, problems = planfile.load(saved)
    assert not problems and plan.setup.iometer.record_last_update
    window.doc.undo_stack.undo()
    assert not window.doc.plan.setup.iometer.record_last_update and not box.isChecked()
    assert window.files.open_path(saved)  # a saved plan with the switch on shows it on
    assert box.isChecked()
