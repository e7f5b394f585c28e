"""Edit > Undo / Redo: every plan editor's edits are steps on the plan document's undo stack; undoing and
redoing one puts the model and the widgets back; saving marks the stack clean; opening a plan clears it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication

from app.ui.main_window import MainWindow
from app.ui.plan.library import BUILTIN
from app.ui.plan.plan_document import Change
from app.ui.plan.topology import Selection
from tests.gui.conftest import local_plan, plan_file
from tests.gui.test_specs import select_library


def opened(window: MainWindow, tmp_path: Path, workers: int = 2) -> MainWindow:
    assert window.files.open_path(plan_file(tmp_path, local_plan(tmp_path, workers=workers, targets=2)))
    return window


def undo(window: MainWindow) -> None:
    assert window.undo_action.isEnabled()
    window.undo_action.trigger()


def redo(window: MainWindow) -> None:
    assert window.redo_action.isEnabled()
    window.redo_action.trigger()


def undo_text(window: MainWindow) -> str:
    return window.undo_action.text().replace("&", "")


def test_edit_menu_has_undo_and_redo_with_their_shortcuts(window: MainWindow) -> None:
    entries = [a for a in window.menus["edit"].actions() if not a.isSeparator()]
    assert entries[:2] == [window.undo_action, window.redo_action]
    assert window.undo_action.shortcuts() == [QKeySequence("Ctrl+Z")]
    assert window.redo_action.shortcuts() == [QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")]
    assert not window.undo_action.isEnabled() and not window.redo_action.isEnabled()  # nothing done yet


def test_topology_add_and_remove_worker_undo_and_redo(window: MainWindow, tmp_path: Path) -> None:
    opened(window, tmp_path)
    window.topology.select(Selection(0))
    window.action_map["add_worker"].trigger()
    assert [w.name for w in window.doc.plan.managers[0].workers] == ["W1", "W2", "Worker 3"]
    assert undo_text(window) == "Undo Add worker"
    undo(window)
    assert len(window.doc.plan.managers[0].workers) == 2
    assert window.topology.topLevelItem(0).child(0).childCount() == 2  # the tree follows
    redo(window)
    assert window.topology.topLevelItem(0).child(0).childCount() == 3
    window.topology.select(Selection(0, 0))
    window.action_map["remove"].trigger()
    assert [w.name for w in window.doc.plan.managers[0].workers] == ["W2", "Worker 3"]
    undo(window)
    assert [w.name for w in window.doc.plan.managers[0].workers] == ["W1", "W2", "Worker 3"]
    assert [t.name for t in window.doc.plan.managers[0].workers[0].targets] == [
        str(tmp_path / f"M1-w1-t{i}.tst") for i in (1, 2)
    ]  # removed with its targets, back with them


def test_disk_targets_edits_undo_and_redo(window: MainWindow, tmp_path: Path, qtbot) -> None:
    opened(window, tmp_path)
    window.show_tab(window.targets_tab)
    window.topology.select(Selection(0, 0))
    tab = window.targets_tab
    worker = lambda: window.doc.plan.managers[0].workers[0]  # noqa: E731 (a fresh object after each undo)
    assert worker().queue_depth == 4
    tab.qd.setValue(5)
    tab.qd.setValue(8)  # two clicks in one field: one step
    assert worker().queue_depth == 8 and window.doc.undo_stack.count() == 1
    assert undo_text(window) == "Undo Change # of outstanding I/Os"
    undo(window)
    assert worker().queue_depth == 4 and tab.qd.value() == 4
    redo(window)
    assert worker().queue_depth == 8 and tab.qd.value() == 8

    tab.max_size.clear()
    qtbot.keyClicks(tab.max_size, "2048")  # keystrokes in one field: one step
    assert worker().max_size == 2048 and undo_text(window) == "Undo Change maximum disk size"
    undo(window)
    assert worker().max_size == 0 and tab.max_size.text() == "0"
    redo(window)
    assert worker().max_size == 2048 and tab.max_size.text() == "2048"

    tab.table.selectRow(0)
    qtbot.mouseClick(
        next(b for b in tab.findChildren(type(tab.add_disk_button)) if b.text() == "Remove"),
        Qt.MouseButton.LeftButton,
    )
    assert len(worker().targets) == 1 and tab.table.rowCount() == 1
    undo(window)
    assert len(worker().targets) == 2 and tab.table.rowCount() == 2
    assert tab.table.item(0, 0).text() == str(tmp_path / "M1-w1-t1.tst")
    redo(window)
    assert tab.table.rowCount() == 1 and tab.table.item(0, 0).text() == str(tmp_path / "M1-w1-t2.tst")


def test_network_targets_edits_undo_and_redo(window: MainWindow, tmp_path: Path) -> None:
    opened(window, tmp_path)
    window.topology.select(Selection(0))
    window.action_map["add_network_worker"].trigger()
    assert undo_text(window) == "Undo Add network worker"
    tab = window.network_tab
    sel = window.topology.selection
    assert sel == Selection(0, 2) and window.doc.plan.managers[0].workers[2].kind == "network_tcp"
    other = next(i for i in range(tab.protocol.count()) if tab.protocol.itemData(i) != "network_tcp")
    kind = tab.protocol.itemData(other)
    tab.protocol.setCurrentIndex(other)
    assert window.doc.plan.managers[0].workers[2].kind == kind
    undo(window)
    assert window.doc.plan.managers[0].workers[2].kind == "network_tcp"
    assert tab.protocol.currentData() == "network_tcp"
    redo(window)
    assert tab.protocol.currentData() == kind
    undo(window)
    undo(window)  # the network worker itself
    assert [w.kind for w in window.doc.plan.managers[0].workers] == ["disk", "disk"]
    assert not window.undo_action.isEnabled()


def test_access_specifications_assign_undo_and_redo(window: MainWindow, tmp_path: Path) -> None:
    opened(window, tmp_path)
    window.show_tab(window.specs_tab)
    window.topology.select(Selection(0, 1))
    tab = window.specs_tab
    select_library(window, BUILTIN, "Default")
    tab.assign()
    plan = lambda: window.doc.plan  # noqa: E731
    assert plan().managers[0].workers[1].specs == ["S", "Default"] and plan().spec("Default") is not None
    assert undo_text(window) == "Undo Assign Default"
    assert tab.assigned.count() == 2
    undo(window)
    assert plan().managers[0].workers[1].specs == ["S"] and plan().spec("Default") is None  # copied in: gone
    assert [tab.assigned.item(i).text() for i in range(tab.assigned.count())] == ["1. S"]
    redo(window)
    assert [tab.assigned.item(i).text() for i in range(tab.assigned.count())] == ["1. S", "2. Default"]
    tab.assigned.setCurrentRow(1)
    tab.move(-1)
    assert plan().managers[0].workers[1].specs == ["Default", "S"]
    undo(window)
    assert plan().managers[0].workers[1].specs == ["S", "Default"]
    assert tab.assigned.item(0).text() == "1. S"


def test_test_setup_edits_undo_and_redo(window: MainWindow, tmp_path: Path, qtbot) -> None:
    opened(window, tmp_path)
    window.show_tab(window.setup_tab)
    tab = window.setup_tab
    setup = lambda: window.doc.plan.setup  # noqa: E731
    tab.description.clear()
    before = setup().description
    qtbot.keyClicks(tab.description, "nightly")
    assert setup().description == "nightly" and undo_text(window) == "Undo Change test description"
    tab.seconds.setValue(30)
    assert setup().run_time == 30 and undo_text(window) == "Undo Change run time"
    undo(window)
    assert setup().run_time == 0 and tab.seconds.value() == 0 and setup().description == "nightly"
    assert "until Stop" in tab.summary.text()  # the preview follows
    undo(window)
    assert setup().description == before and tab.description.text() == before
    redo(window)
    redo(window)
    assert (setup().description, setup().run_time) == ("nightly", 30)
    assert (tab.description.text(), tab.seconds.value()) == ("nightly", 30)
    tab.test_type.setCurrentIndex(tab.test_type.findData("CYCLE_OUTSTANDING_IOS"))
    assert tab.qd_box.isEnabled()
    undo(window)
    assert (
        setup().test_type == "NORMAL"
        and tab.test_type.currentData() == "NORMAL"
        and not tab.qd_box.isEnabled()
    )


def test_results_display_settings_undo_and_redo(window: MainWindow, tmp_path: Path) -> None:
    opened(window, tmp_path)
    tab = window.results_tab
    start = window.doc.plan.setup.update_frequency
    other = next(i for i in range(tab.frequency.count()) if tab.frequency.itemData(i) not in (start, 0))
    tab.frequency.setCurrentIndex(other)
    sec = tab.frequency.itemData(other)
    assert window.doc.plan.setup.update_frequency == sec and window.live.update_seconds == sec
    undo(window)
    assert window.doc.plan.setup.update_frequency == start and tab.frequency.currentData() == start
    assert window.live.update_seconds == start
    redo(window)
    assert tab.frequency.currentData() == sec


def test_saving_marks_clean_and_undoing_past_the_save_marks_dirty(window: MainWindow, tmp_path: Path) -> None:
    opened(window, tmp_path)
    assert not window.doc.dirty and not window.isWindowModified()
    window.topology.select(Selection(0, 0))
    window.targets_tab.qd.setValue(9)
    assert window.doc.dirty and window.isWindowModified()
    assert window.files.save()  # to its own file
    assert not window.doc.dirty and not window.isWindowModified()
    undo(window)  # back past the save: unsaved again
    assert window.doc.dirty and window.isWindowModified()
    redo(window)  # at the saved state again
    assert not window.doc.dirty and not window.isWindowModified()
    window.setup_tab.seconds.setValue(7)
    undo(window)  # undoing back to the saved state is clean
    assert not window.doc.dirty


def test_opening_a_plan_clears_the_undo_stack(window: MainWindow, tmp_path: Path) -> None:
    opened(window, tmp_path)
    window.topology.select(Selection(0, 0))
    window.targets_tab.qd.setValue(9)
    window.action_map["add_worker"].trigger()
    assert window.doc.undo_stack.count() == 2
    assert window.files.open_path(plan_file(tmp_path, local_plan(tmp_path, workers=1), "other.fiometer.json"))
    assert window.doc.undo_stack.count() == 0 and not window.undo_action.isEnabled()
    assert not window.doc.dirty
    window.action_map["new"].trigger()
    assert window.doc.undo_stack.count() == 0


def test_an_edit_that_changes_nothing_leaves_no_step(window: MainWindow, tmp_path: Path) -> None:
    opened(window, tmp_path)
    seen: list[Change] = []
    window.doc.changed.connect(seen.append)
    window.doc.edit("Nothing", Change.SETUP, lambda plan: None)
    assert window.doc.undo_stack.count() == 0 and seen == [] and not window.doc.dirty
    window.doc.edit("Rename", Change.SETUP, lambda plan: setattr(plan, "name", "x"))
    assert seen == [Change.SETUP]  # a typed change, not a string


def test_ctrl_z_and_ctrl_y_keys_undo_and_redo(window: MainWindow, tmp_path: Path, qtbot) -> None:
    opened(window, tmp_path)
    window.topology.select(Selection(0))
    window.action_map["add_worker"].trigger()
    window.activateWindow()
    window.topology.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.topology)
    qtbot.keyClick(window.topology, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert len(window.doc.plan.managers[0].workers) == 2
    qtbot.keyClick(window.topology, Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier)
    assert len(window.doc.plan.managers[0].workers) == 3
    qtbot.keyClick(window.topology, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(
        window.topology, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    assert len(window.doc.plan.managers[0].workers) == 3


def test_ctrl_z_in_a_spin_box_undoes_the_field_last_edited_and_redo_brings_it_back(
    window: MainWindow, tmp_path: Path, qtbot
) -> None:
    """Issue 38.2: Ramp up 5 -> 0, later 7 typed into the run time's seconds, Tab, Ctrl+Z: the run time goes
    back (not the ramp up, by the spin box's own undo of its text), and Ctrl+Y brings it again."""
    opened(window, tmp_path)
    tab = window.setup_tab
    window.show_tab(tab)
    window.activateWindow()
    window.doc.edit("ramp", Change.SETUP, lambda p: setattr(p.setup, "ramp_up", 5))
    window.doc.mark_saved()
    tab.load()
    run_before = window.doc.plan.setup.run_time

    def type_into(spin, text: str) -> None:
        spin.setFocus()
        qtbot.waitUntil(lambda: spin.hasFocus())
        qtbot.keyClick(spin, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(spin, text)

    type_into(tab.ramp, "0")
    assert window.doc.plan.setup.ramp_up == 0
    type_into(tab.seconds, "7")
    assert window.doc.plan.setup.run_time % 60 == 7
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    focus = QApplication.focusWidget()
    qtbot.keyClick(focus, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.doc.plan.setup.run_time == run_before  # the field edited last
    assert window.doc.plan.setup.ramp_up == 0
    assert tab.seconds.value() == run_before % 60 and tab.ramp.value() == 0  # the fields show the plan
    assert window.redo_action.isEnabled()
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier)
    assert window.doc.plan.setup.run_time % 60 == 7 and tab.seconds.value() == 7
    # in the spin box being typed in, too: Ctrl+Z there is the document's undo (the field's own text
    # history would otherwise put back a value the plan no longer has, as a new edit that ends Redo)
    type_into(tab.ramp, "3")
    qtbot.keyClick(tab.ramp, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.doc.plan.setup.ramp_up == 0 and tab.ramp.value() == 0
    qtbot.keyClick(tab.ramp, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.doc.plan.setup.run_time % 60 == run_before % 60  # then the edit before
    assert window.doc.plan.setup.ramp_up == 0
    qtbot.keyClick(
        tab.ramp, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    assert window.doc.plan.setup.run_time % 60 == 7


def test_ctrl_z_in_history_search_is_the_fields_own(window: MainWindow, tmp_path: Path, qtbot) -> None:
    opened(window, tmp_path)
    window.doc.edit("ramp", Change.SETUP, lambda p: setattr(p.setup, "ramp_up", 9))
    window.history.show_history()
    search = window.history.list.search
    search.setFocus()
    qtbot.waitUntil(lambda: search.hasFocus())
    qtbot.keyClicks(search, "abc")
    qtbot.keyClick(search, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.doc.plan.setup.ramp_up == 9  # the plan is not what the search box undoes
    assert search.text() != "abc"


@pytest.fixture
def filtered() -> Iterator[list[int]]:
    """The type of every event the window's Undo-keys filter is called for (requested before ``window``)."""
    import app.ui.window.undo_keys as undo_keys

    seen: list[int] = []

    class Counted(undo_keys.PlanUndoKeys):
        def eventFilter(self, watched, event) -> bool:  # noqa: ANN001, N802 (Qt's name)
            seen.append(int(event.type()))
            return super().eventFilter(watched, event)

    real = undo_keys.PlanUndoKeys
    undo_keys.PlanUndoKeys = Counted  # type: ignore[misc]
    yield seen
    undo_keys.PlanUndoKeys = real  # type: ignore[misc]


def test_the_undo_keys_cost_no_python_call_on_other_events(
    filtered: list[int], window: MainWindow, tmp_path: Path, qtbot
) -> None:
    """The fields' Undo keys are caught by a filter on the focused plan field, not on the whole application:
    there it was a Python call for every event of every object, each waiting for the GIL when another thread held
    it (a run's start: posted events queued 0.6 s behind them)."""
    opened(window, tmp_path)
    other = QObject()
    for _ in range(200):
        QApplication.postEvent(other, QEvent(QEvent.Type.User))
    QApplication.processEvents()
    window.history.show_history()
    search = window.history.list.search  # a field outside the plan's panels
    search.setFocus()
    qtbot.waitUntil(lambda: search.hasFocus())
    qtbot.keyClicks(search, "abc")
    assert filtered == []
    tab = window.setup_tab
    window.show_tab(tab)
    tab.ramp.setFocus()  # a plan field: its events only
    qtbot.waitUntil(lambda: tab.ramp.hasFocus())
    qtbot.keyClick(tab.ramp, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert int(QEvent.Type.ShortcutOverride) in filtered
    assert len(filtered) < 100, len(filtered)
