"""Test Setup (step preview follows the test type) and Disk Targets (targets, disks, worker settings)."""

from __future__ import annotations

import os
from pathlib import Path

from app.engine.devices.disks import Disk
from app.ui.main_window import MainWindow
from app.ui.plan.setup_tab import TEST_TYPE_TITLES
from app.ui.plan.targets_tab import AddTestFileDialog
from app.ui.plan.topology import Selection
from tests.gui.conftest import local_plan, plan_file


def preview_rows(window: MainWindow) -> list[list[str]]:
    t = window.setup_tab.table
    return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]


def test_preview_follows_the_test_type(window: MainWindow, tmp_path: Path) -> None:
    window.files.open_path(plan_file(tmp_path, local_plan(tmp_path, workers=2, targets=2)))
    tab = window.setup_tab
    rows = preview_rows(window)
    assert len(rows) == 1 and rows[0][:5] == ["1", "S", "2", "4", "4"]
    assert "1 step" in tab.summary.text()

    tab.test_type.setCurrentIndex(tab.test_type.findData("CYCLE_OUTSTANDING_IOS"))
    assert window.doc.plan.setup.test_type == "CYCLE_OUTSTANDING_IOS"
    assert [r[4] for r in preview_rows(window)] == ["1", "2", "4", "8", "16", "32"]
    assert tab.qd_box.isEnabled() and not tab.targets_box.isEnabled()
    assert TEST_TYPE_TITLES["CYCLE_OUTSTANDING_IOS"] in tab.summary.text()

    tab.qd_box.end.setValue(4)
    assert [r[4] for r in preview_rows(window)] == ["1", "2", "4"]
    tab.qd_box.kind.setCurrentIndex(tab.qd_box.kind.findData("LINEAR"))
    assert [r[4] for r in preview_rows(window)] == ["1", "3"]

    tab.test_type.setCurrentIndex(tab.test_type.findData("CYCLE_TARGETS"))
    assert [r[3] for r in preview_rows(window)] == ["2", "4"]  # 1 then 2 targets per worker
    assert tab.targets_box.isEnabled() and not tab.qd_box.isEnabled()

    tab.seconds.setValue(30)
    tab.ramp.setValue(5)
    assert window.doc.plan.setup.run_time == 30 and window.doc.plan.setup.ramp_up == 5
    assert "about 0:01:10" in tab.summary.text()


def test_preview_reacts_to_assignments_and_explains_emptiness(window: MainWindow) -> None:
    tab = window.setup_tab
    assert tab.preview_stack.is_empty
    assert "no worker has both" in tab.preview_stack.empty.text()


def test_targets_tab_edits_the_selected_worker(window: MainWindow, tmp_path: Path) -> None:
    plan = local_plan(tmp_path, workers=2, targets=2)
    existing = Path(plan.managers[0].workers[0].targets[0].name)
    existing.write_bytes(b"\0" * 8192)
    window.files.open_path(plan_file(tmp_path, plan))
    tab = window.targets_tab
    window.topology.select(Selection(0))
    assert tab.stack.is_empty and "Select a worker" in tab.stack.empty.text()
    window.topology.select(Selection(0, 0))
    assert not tab.stack.is_empty
    assert tab.table.rowCount() == 2
    # Maximum Disk Size 0 is an existing file's own size, as in Iometer's Dynamo (was: extended to 1 GiB)
    assert tab.table.item(0, 2).text().startswith("exists, 8 KiB — ")
    assert tab.table.item(1, 2).text().startswith("created when the run starts")
    tab.table.selectRow(1)
    tab.move(-1)
    w = window.doc.plan.managers[0].workers[0]
    assert w.targets[0].name.endswith("w1-t2.tst")
    tab.max_size.setText("2048")
    tab.max_size.textEdited.emit("2048")
    assert w.max_size == 2048 and tab.max_size_note.text() == "= 8 MiB per target (4096-byte sectors)"
    tab.remove()
    assert len(w.targets) == 1
    tab.remove()
    assert tab.table_stack.is_empty and "No targets assigned" in tab.table_stack.empty.text()


def test_disk_list_greys_out_disks_in_use(window: MainWindow) -> None:
    tab = window.targets_tab
    tab.disk_os = "Linux"
    tab.local_disks = [
        Disk("sda", "/dev/sda", 500 << 30, "SSD A", ("sda1",), ("/",)),
        Disk("sdb", "/dev/sdb", 1 << 40, "Blank B"),
    ]
    window.topology.select(Selection(0, 0))
    tab.refresh()
    items = [tab.disks.topLevelItem(i) for i in range(tab.disks.topLevelItemCount())]
    assert [it.text(0) for it in items] == ["/dev/sda", "/dev/sdb"]
    assert items[0].isDisabled() and items[0].text(3) == "mounted at /"
    assert not items[1].isDisabled() and items[1].text(1) == "1 TiB"
    assert tab.add_disk_button.isEnabled()


def test_windows_disk_list_is_explained(window: MainWindow) -> None:
    tab = window.targets_tab
    tab.disk_os = "Windows"
    tab.refresh_disks()
    assert tab.disks_stack.is_empty and "PhysicalDrive" in tab.disks_stack.empty.text()


def test_test_file_dialog_validates(qtbot, window: MainWindow, tmp_path: Path) -> None:
    dlg = AddTestFileDialog(window.doc.plan.managers[0].workers[0])
    qtbot.addWidget(dlg)
    ok = dlg.buttons.button(dlg.buttons.StandardButton.Ok)
    dlg.path.setText(str(tmp_path))
    assert not ok.isEnabled() and "folder" in dlg.error.text()
    dlg.path.setText(str(tmp_path / "t.tst"))
    dlg.size.setText("1000")
    assert not ok.isEnabled() and "multiple of 4096" in dlg.error.text()
    dlg.size.setText("256M")
    assert ok.isEnabled() and dlg.size_bytes() == 256 << 20


def test_a_remote_managers_test_file_is_typed_for_its_host(qtbot, window: MainWindow) -> None:
    from tests.helpers import grid

    plan = grid(1, 1, 0)
    plan.managers[0].host = "10.1.2.3"  # (never contacted: the dialog only names it)
    window.doc.replace(plan)
    window.topology.select(Selection(0, 0))
    tab = window.targets_tab
    tab.os_by_manager = {plan.managers[0].name: "Linux"}
    dlg = tab.test_file_dialog(plan.managers[0].workers[0])
    qtbot.addWidget(dlg)
    ok = dlg.buttons.button(dlg.buttons.StandardButton.Ok)
    assert dlg.path.text() == "" and "10.1.2.3" in dlg.path.placeholderText()
    assert str(Path.home()) not in dlg.path.placeholderText()
    assert not dlg.browse.isVisibleTo(dlg) and not ok.isEnabled()
    dlg.path.setText("/data/iobw.tst")
    assert ok.isEnabled()
    local = AddTestFileDialog(plan.managers[0].workers[0])
    qtbot.addWidget(local)
    assert local.browse.isVisibleTo(local) and local.path.text()


def test_a_test_files_size_is_the_size_fio_gets_on_every_manager(qtbot, window: MainWindow) -> None:
    """Maximum Disk Size is in sectors (Iometer): a file on a Linux file system counts 4096-byte sectors, a file on a
    Windows volume 512-byte ones, on local and remote managers alike. The size typed in Add test file is the size
    the note, the table and the job file say, whatever the manager's OS (it was 1/8 of it on Windows managers)."""
    from app.engine.jobs.targets import resolve
    from app.model.plan import Target
    from tests.helpers import grid

    plan = grid(2, 1, 0)
    plan.managers[0].host = "10.1.2.3"  # (never contacted: the tab only shows what it would be)
    plan.managers[1].host = "10.1.2.4"
    window.doc.replace(plan)
    tab = window.targets_tab
    tab.os_by_manager = {plan.managers[0].name: "Windows", plan.managers[1].name: "Linux"}
    for mi, path, sector in ((0, "D:\\iobw.tst", 512), (1, "/data/iobw.tst", 4096)):
        window.topology.select(Selection(mi, 0))
        worker = plan.managers[mi].workers[0]
        dlg = tab.test_file_dialog(worker)
        qtbot.addWidget(dlg)
        dlg.path.setText(path)
        dlg.size.setText("1 GiB")
        assert dlg.sector_size() == sector
        assert (
            dlg.sectors.text()
            == f"Kept as Maximum Disk Size = {(1 << 30) // sector:,} sectors of {sector} bytes "
            "(for every target of this worker)"
        )
        worker.max_size = dlg.max_size_sectors()
        worker.targets.append(Target(path, path))
        assert (
            worker.max_size
            * resolve(worker.targets[0], tab.os_by_manager[plan.managers[mi].name]).sector_size
            == 1 << 30
        )  # what the engine writes as fio's size=
        tab._update_size_note(worker)
        assert tab.max_size_note.text() == f"= 1 GiB per target ({sector}-byte sectors)"
        assert "local and remote managers" in tab.max_size_note.toolTip()
    local = AddTestFileDialog(plan.managers[0].workers[0])  # this machine (Linux here): its own rule
    qtbot.addWidget(local)
    local.path.setText("/tmp/iobw.tst" if os.name != "nt" else "C:\\iobw.tst")
    assert local.sector_size() == (4096 if os.name != "nt" else 512)


def test_the_add_test_file_button_stays_put(qtbot, window: MainWindow, monkeypatch) -> None:
    """Issue 28: the button moved when the list was empty. On a fresh plan at 1366x768 with a remote manager, it
    stays at one place: local and remote worker, empty list, one target, removed again, Messages open or not."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtWidgets import QPushButton

    window.resize(1366, 705)  # 1366x768 less the title bar and task bar
    window.show()
    qtbot.waitExposed(window)
    window.files.new_plan()
    tab = window.targets_tab
    window.tabs.setCurrentWidget(tab)
    add = next(b for b in tab.findChildren(QPushButton) if b.text().startswith("Add test file"))
    remove = next(b for b in tab.findChildren(QPushButton) if b.text() == "Remove")
    places: dict[str, QPoint] = {}

    def place(label: str) -> None:
        qtbot.wait(50)
        places[label] = add.mapTo(window, QPoint(0, 0))

    window.topology.select(Selection(0, 0))
    place("local worker, empty list")
    window.edits.add_manager_to_plan("Remote", "127.0.0.9:9")  # nothing listens there (loopback)
    window.edits.add_worker()
    worker = tab.worker()
    assert worker is window.doc.plan.managers[1].workers[-1] and not worker.targets
    place("remote worker, empty list")
    from PySide6.QtWidgets import QDialog

    monkeypatch.setattr(
        AddTestFileDialog,
        "exec",  # the user types a path and presses OK
        lambda dlg: (dlg.path.setText("/data/iobw.tst"), QDialog.DialogCode.Accepted)[1],
    )
    qtbot.mouseClick(add, Qt.MouseButton.LeftButton)
    assert len(worker.targets) == 1
    place("remote worker, one target")
    tab.table.selectRow(0)
    qtbot.mouseClick(remove, Qt.MouseButton.LeftButton)
    assert not worker.targets
    place("remote worker, removed")
    window.messages_dock.show()
    place("Messages open")
    assert len(set(places.values())) == 1, places


def test_the_io_engine_and_its_options_are_plan_edits_that_undo(window: MainWindow, tmp_path: Path) -> None:
    window.files.open_path(plan_file(tmp_path, local_plan(tmp_path)))
    row = window.setup_tab.engine
    setup = lambda: (window.doc.plan.setup.engine, window.doc.plan.setup.engine_options)  # noqa: E731
    assert setup() == ("auto", []) and row.options["fixedbufs"].isEnabled()
    row.engine.setCurrentIndex(row.engine.findData("io_uring"))
    row.options["fixedbufs"].setChecked(True)
    row.options["hipri"].setChecked(True)
    assert setup() == ("io_uring", ["fixedbufs", "hipri"])
    # libaio has no io_uring options: they are cleared and greyed out, in one edit
    row.engine.setCurrentIndex(row.engine.findData("libaio"))
    assert setup() == ("libaio", []) and not row.options["fixedbufs"].isEnabled()
    window.doc.undo_stack.undo()
    assert setup() == ("io_uring", ["fixedbufs", "hipri"])  # the window shows the plan again
    assert row.engine.currentData() == "io_uring" and row.options["hipri"].isChecked()
    saved = window.doc.save(tmp_path / "saved.json")
    from app.model import planfile

    again = planfile.load(saved)[0].setup
    assert (again.engine, again.engine_options) == ("io_uring", ["fixedbufs", "hipri"])
