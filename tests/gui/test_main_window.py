"""Opening plans (file, .icf, drag and drop), the Topology, recent files and remembered layout."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from app.model.plan import Manager, Worker
from app.paths import example_plan
from app.ui.main_window import MainWindow, droppable_paths
from app.ui.plan.plan_document import Change
from app.ui.plan.topology import DETAIL_ROLE, Selection
from app.ui.settings import app_settings, recent_files
from tests.gui.conftest import local_plan, plan_file


def topology_texts(win: MainWindow) -> list[str]:
    out = []
    stack = [win.topology.topLevelItem(0)]
    while stack:
        it = stack.pop(0)
        out.append(it.text(0))
        stack.extend(it.child(i) for i in range(it.childCount()))
    return out


def test_new_window_shows_this_machine_and_an_empty_worker(window: MainWindow) -> None:
    texts = topology_texts(window)
    assert texts[0] == "All Managers" and texts[-1] == "Worker 1"
    manager_item = window.topology.topLevelItem(0).child(0)
    assert manager_item.data(0, DETAIL_ROLE).startswith("this machine")
    assert window.topology.selection == Selection(0, 0)
    assert window.targets_tab.table_stack.is_empty
    assert "No targets assigned" in window.targets_tab.table_stack.empty.text()


def test_open_plan_file_fills_topology_tabs_and_recent_files(
    window: MainWindow, tmp_path: Path, qtbot
) -> None:
    plan = local_plan(tmp_path, managers=2, workers=2)
    path = plan_file(tmp_path, plan)
    assert window.files.open_path(path)
    assert topology_texts(window) == ["All Managers", "M1", "M2", "W1", "W2", "W1", "W2"]
    assert window.windowTitle().startswith("plan.fiometer.json")
    assert not window.isWindowModified()
    assert window.doc.plan.managers[1].workers[0].targets[0].name.endswith("M2-w1-t1.tst")
    assert recent_files(app_settings())[0] == str(path.resolve())
    # The selected worker's targets are listed with their state
    window.topology.select(Selection(1, 0))
    assert window.targets_tab.table.rowCount() == 1
    assert "created when the run starts" in window.targets_tab.table.item(0, 2).text()
    # An edit marks the window modified; Save writes the plan back
    window.targets_tab.qd.setValue(16)
    assert window.doc.plan.managers[1].workers[0].queue_depth == 16
    assert window.isWindowModified()
    assert window.files.save()
    assert not window.isWindowModified()
    assert '"queue_depth": 16' in path.read_text()


def test_open_icf_shows_fidelity_notes_and_unmapped_targets(window: MainWindow) -> None:
    assert window.files.open_path(example_plan())
    plan = window.doc.plan
    assert [s.name for s in plan.specs][:2] == ["Max Throughput-100%Read", "RealLife-60%Rand-65%Read"]
    messages = [window.messages.item(i).text() for i in range(window.messages.count())]
    assert any("test connection rate" in m for m in messages)
    assert not window.messages_dock.isHidden()
    assert "193.27.20.145" in window.topology.topLevelItem(0).child(0).toolTip(0)
    window.topology.select(Selection(0, 0))
    assert window.targets_tab.table.item(0, 0).text() == "C:"
    assert "not placed" in window.targets_tab.table.item(0, 2).text()
    assert window.setup_tab.table.rowCount() == 4


def test_broken_file_is_reported_not_raised(window: MainWindow, dialogs, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert not window.files.open_path(bad)
    assert dialogs.problems and "bad.json" in dialogs.problems[0][1]


def test_drag_and_drop_opens_the_file(window: MainWindow, tmp_path: Path, qtbot) -> None:
    path = plan_file(tmp_path, local_plan(tmp_path, workers=3), "dropped.json")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    assert droppable_paths(mime) == [path]
    enter = QDragEnterEvent(
        QPoint(100, 100),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    drop = QDropEvent(
        QPointF(100, 100),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(window, drop)
    qtbot.waitUntil(lambda: window.doc.path == path, timeout=3000)
    assert [w.name for w in window.doc.plan.managers[0].workers] == ["W1", "W2", "W3"]


def test_drag_of_other_files_is_refused(window: MainWindow, tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("x")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(other))])
    enter = QDragEnterEvent(
        QPoint(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    enter.setAccepted(False)
    QApplication.sendEvent(window, enter)
    assert not enter.isAccepted()


def test_add_duplicate_remove_worker(window: MainWindow, tmp_path: Path) -> None:
    window.files.open_path(plan_file(tmp_path))
    window.topology.select(Selection(0, 0))
    window.action_map["duplicate_worker"].trigger()
    workers = window.doc.plan.managers[0].workers
    assert [w.name for w in workers] == ["W1", "Worker 3", "W2"]
    assert workers[1].targets == workers[0].targets and workers[1].targets is not workers[0].targets
    assert window.topology.selection == Selection(0, 1)
    window.action_map["remove"].trigger()
    assert [w.name for w in window.doc.plan.managers[0].workers] == ["W1", "W2"]
    window.topology.select(Selection(0))
    window.action_map["add_worker"].trigger()
    assert [w.name for w in window.doc.plan.managers[0].workers] == ["W1", "W2", "Worker 3"]
    assert window.topology.selection == Selection(0, 2)


def test_shortcuts(window: MainWindow) -> None:
    keys = {
        a.text().replace("&", ""): a.shortcut().toString()
        for a in (
            window.action_map["new"],
            window.action_map["open"],
            window.action_map["save"],
            window.action_map["start"],
            window.action_map["stop"],
        )
    }
    assert keys == {"New": "Ctrl+N", "Open…": "Ctrl+O", "Save": "Ctrl+S", "Start": "F5", "Stop": "Esc"}
    assert not window.action_map["stop"].isEnabled() and window.action_map["start"].isEnabled()


def test_layout_and_theme_are_remembered_in_private_settings(qtbot, private_settings: Path) -> None:
    win = MainWindow(app_settings())
    qtbot.addWidget(win)
    win.resize(790, 640)  # inside the offscreen screen (800 x 800), so nothing is clamped
    win.show()
    win.splitter.setSizes([190, 600])
    win.messages_dock.show()
    win.set_theme("dark")
    split = win.splitter.sizes()
    win.close()
    assert Path(app_settings().fileName()).is_relative_to(private_settings)
    again = MainWindow(app_settings())
    qtbot.addWidget(again)
    assert again.theme_mode == "dark"
    again.show()
    assert again.size() == win.size()
    assert again.splitter.sizes() == split and split[0] != 230  # not the default
    assert not again.messages_dock.isHidden()
    assert again.theme_actions["dark"].isChecked()
    again.set_theme("light")


def test_dark_theme_reaches_the_charts(window: MainWindow, qtbot) -> None:
    window.set_theme("dark")
    qtbot.waitUntil(
        lambda: window.results_tab.charts.charts[0].widget.backgroundBrush().color().lightness() < 80
    )
    window.set_theme("light")
    qtbot.waitUntil(
        lambda: window.results_tab.charts.charts[0].widget.backgroundBrush().color().lightness() > 200
    )


def test_manager_details_show_host(window: MainWindow) -> None:
    window.doc.edit(
        "Add manager DB01",
        Change.TOPOLOGY,
        lambda plan: plan.managers.append(Manager("DB01", "10.0.0.5:8765", workers=[Worker("Worker 1")])),
    )
    item = window.topology.topLevelItem(0).child(1)
    assert item.text(0) == "DB01"
    assert item.data(0, DETAIL_ROLE).startswith("10.0.0.5:8765")


def test_export_as_icf_writes_a_file_iometer_and_fiometer_read(window: MainWindow, tmp_path: Path) -> None:
    from app.model.opening import open_plan

    plan = local_plan(tmp_path, workers=2)
    window.doc.replace(plan)
    assert window.action_map["export_icf"].isEnabled()
    out = tmp_path / "exported.icf"
    assert window.files.export_icf_to(out)
    assert out.read_bytes().startswith(b"Version 1.1.0 \r\n")
    again = open_plan(out).plan
    assert [w.name for w in again.managers[0].workers] == ["W1", "W2"]
    assert again.managers[0].workers[0].targets[0].name == plan.managers[0].workers[0].targets[0].name


def test_export_as_icf_refuses_what_iometer_would_read_otherwise(
    window: MainWindow, tmp_path: Path, dialogs
) -> None:
    plan = local_plan(tmp_path, workers=1)
    plan.specs[0].name = "Lecture aléatoire"
    plan.managers[0].workers[0].specs = ["Lecture aléatoire"]
    window.doc.replace(plan)
    out = tmp_path / "exported.icf"
    assert not window.files.export_icf_to(out)
    assert not out.exists()  # nothing half right is written
    ((title, text),) = dialogs.problems
    assert title == "Cannot export as .icf" and "reads the name only up to 'é', as 'Lecture al'" in text


def test_first_run_banner_explains_fio(window: MainWindow, qtbot) -> None:
    from app.first_run import FioStatus

    missing = FioStatus(
        os_name="Linux",
        found=False,
        path=None,
        version=None,
        source=None,
        problem="fio not found",
        install_hint="apt-get install fio",
        setting=None,
        settings_file="/x/settings.json",
    )
    window.show_fio_status(missing)
    assert not window.banner.isHidden()
    assert (
        "fio was not found" in window.banner.label.text() and "apt-get install fio" in window.banner.details
    )
    assert "\n" not in window.banner.label.text()  # one compact line; the rest behind Details…
    assert window.banner.sizeHint().height() < 3 * window.fontMetrics().height()
    window.banner.close_button.click()
    assert window.banner.isHidden()
    found = FioStatus(
        os_name="Linux",
        found=True,
        path="/usr/bin/fio",
        version="3.33",
        source="PATH",
        problem=None,
        install_hint="",
        setting=None,
        settings_file="/x/settings.json",
    )
    window.show_fio_status(found)  # dismissed once: the welcome is not shown again
    assert window.banner.isHidden()


def test_file_examples_opens_each_bundled_plan(window):
    from app.engine.jobs.sequence import expand
    from app.model.examples import EXAMPLES
    from app.ui.window.files import VMWARE_TITLE

    actions = [a for a in window.files.examples_menu.actions() if not a.isSeparator()]
    assert [a.text() for a in actions] == [VMWARE_TITLE] + [e.title for e in EXAMPLES]
    assert all(a.toolTip() for a in actions)
    crystal = next(a for a in actions if a.text() == "CrystalDiskMark-like")
    crystal.trigger()
    plan = window.doc.plan
    assert plan.name == "CrystalDiskMark-like"
    assert [s.queue_depths for s in expand(plan)] == [[8], [8], [32], [32]]
    assert "TESTFILE" in window.statusBar().currentMessage()
