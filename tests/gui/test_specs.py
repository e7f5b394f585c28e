"""Access Specifications tab and the spec editor dialog."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from app.model.plan import IDLE, AccessSpec, SpecLine
from app.ui.main_window import MainWindow
from app.ui.plan.library import BUILTIN, PLAN, USER
from app.ui.plan.plan_document import Change
from app.ui.plan.spec_editor import SpecEditor
from app.ui.plan.topology import Selection
from tests.gui.conftest import local_plan, plan_file


def select_library(window: MainWindow, origin: str, name: str) -> None:
    tree = window.specs_tab.tree
    for i in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(i)
        for j in range(group.childCount()):
            it = group.child(j)
            if it.data(0, Qt.ItemDataRole.UserRole) == (origin, name):
                tree.setCurrentItem(it)
                return
    raise AssertionError(f"{name!r} not in the {origin} group")


def assigned_texts(window: MainWindow) -> list[str]:
    lst = window.specs_tab.assigned
    return [lst.item(i).text() for i in range(lst.count())]


def test_assign_builtin_spec_to_the_selected_worker(window: MainWindow) -> None:
    tab = window.specs_tab
    window.topology.select(Selection(0, 0))
    assert tab.assigned_stack.is_empty
    name = "4 KiB aligned; 100% Read; 100% random"
    select_library(window, BUILTIN, name)
    tab.assign()
    worker = window.doc.plan.managers[0].workers[0]
    assert worker.specs == [name]
    assert window.doc.plan.spec(name) is not None  # copied into the plan
    assert assigned_texts(window) == [f"1. {name}"]
    assert window.isWindowModified()
    # Idle, then reorder
    tab.assign(idle=True)
    tab.assigned.setCurrentRow(1)
    tab.move(-1)
    assert worker.specs == [IDLE, name]
    # the plan's own group now lists it; assigning again reuses the plan copy
    select_library(window, PLAN, name)
    tab.assign()
    assert worker.specs == [IDLE, name, name] and len(window.doc.plan.specs) == 1
    tab.assigned.setCurrentRow(0)
    tab.unassign()
    assert worker.specs == [name, name]


def test_manager_selection_assigns_to_all_its_workers(window: MainWindow, tmp_path: Path) -> None:
    window.files.open_path(plan_file(tmp_path, local_plan(tmp_path, workers=3, specs=())))
    window.topology.select(Selection(0))
    assert "every one of its workers" in window.specs_tab.assigned_stack.empty.text()
    select_library(window, BUILTIN, "Default")
    window.specs_tab.assign()
    assert [w.specs for w in window.doc.plan.managers[0].workers] == [["Default"]] * 3


def test_my_library_keeps_specs_in_the_settings(window: MainWindow) -> None:
    window.doc.edit(
        "New spec",
        Change.SPECS,
        lambda plan: plan.specs.append(AccessSpec("Mine", [SpecLine(65536, 100, 0, 0, 0, 1, 0, 0)])),
    )
    select_library(window, PLAN, "Mine")
    window.specs_tab.save_to_library()
    from app.ui.plan.library import SpecLibrary
    from app.ui.settings import app_settings

    again = SpecLibrary(app_settings())
    assert [s.name for s in again.user] == ["Mine"] and again.user[0].lines[0].size == 65536
    select_library(window, USER, "Mine")


def test_editor_shows_inline_errors_and_disables_ok(qtbot) -> None:
    spec = AccessSpec("Mix", [SpecLine(65536, 30, 100, 0, 0, 1, 0, 0), SpecLine(512, 70, 0, 100, 0, 1, 0, 0)])
    dlg = SpecEditor(spec, {"Taken"})
    qtbot.addWidget(dlg)
    dlg.show()
    ok = dlg.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert ok.isEnabled()
    assert not dlg.errors["reads"].isVisible()

    reads = dlg.edits["reads"]
    reads.selectAll()
    qtbot.keyClicks(reads, "150")
    assert not ok.isEnabled()
    assert dlg.errors["reads"].isVisible()
    assert "0 to 100" in dlg.errors["reads"].text()
    assert dlg.table.item(0, 2).text() == "150"

    reads.selectAll()
    qtbot.keyClicks(reads, "80")
    assert ok.isEnabled() and not dlg.errors["reads"].isVisible()

    size = dlg.edits["size"]
    size.selectAll()
    qtbot.keyClicks(size, "4 KB?")
    assert not ok.isEnabled() and "size" in dlg.errors["size"].text()
    size.selectAll()
    qtbot.keyClicks(size, "4k")
    assert ok.isEnabled()

    # % of size must add up to 100 over all lines
    of_size = dlg.edits["of_size"]
    of_size.selectAll()
    qtbot.keyClicks(of_size, "20")
    assert not ok.isEnabled()
    assert "adds up to 90" in dlg.errors["of_size"].text()
    dlg.table.selectRow(1)
    assert "adds up to 90" in dlg.errors["of_size"].text()  # shown next to the field on every line
    dlg.edits["of_size"].selectAll()
    qtbot.keyClicks(dlg.edits["of_size"], "80")
    assert ok.isEnabled()

    dlg.name.selectAll()
    qtbot.keyClicks(dlg.name, "Taken")
    assert not ok.isEnabled() and "already exists" in dlg.name_error.text()
    dlg.name.selectAll()
    qtbot.keyClicks(dlg.name, "Mix, 2")
    assert not ok.isEnabled() and "comma" in dlg.name_error.text()
    dlg.name.selectAll()
    qtbot.keyClicks(dlg.name, "Mix 2")
    assert ok.isEnabled()

    result = dlg.result_spec()
    assert result.name == "Mix 2"
    assert [(ln.size, ln.of_size, ln.reads) for ln in result.lines] == [(4096, 20, 80), (512, 80, 0)]


def test_every_field_explains_itself(qtbot) -> None:
    dlg = SpecEditor(AccessSpec("S"), set())
    qtbot.addWidget(dlg)
    for key, edit in dlg.edits.items():
        assert len(edit.toolTip()) > 40, key
    assert "sector" in dlg.edits["align"].toolTip()
    assert "burst" in dlg.edits["delay"].toolTip()


def test_editor_lines_insert_delete(qtbot) -> None:
    dlg = SpecEditor(AccessSpec("S", [SpecLine()]), set())
    qtbot.addWidget(dlg)
    dlg.insert_line()
    assert dlg.table.rowCount() == 2 and dlg.current == 1
    assert dlg.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()  # new line has 0 %
    dlg.delete_line()
    assert dlg.table.rowCount() == 1
