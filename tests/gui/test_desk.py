"""Issue 14 on a real desk: the window fits and never grows by itself, destructive questions default
to the safe answer, --db reaches the window, and a manager lost mid-run is marked at once."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from app.engine.run.runner import RunOptions
from app.model.plan import LOCAL, Manager, Target, Worker
from app.ui.confirm import confirm, confirm_box
from app.ui.main_window import MainWindow
from app.ui.plan.plan_document import Change
from app.ui.plan.topology import Selection
from app.ui.window.layout import SMALLEST
from tests.gui.conftest import local_plan


# --- 1: fits --------------------------------------------------------------------------------------
def test_window_minimum_is_small_and_never_grows(window: MainWindow, qtbot) -> None:
    w, h = SMALLEST
    assert window.minimumSize().width() <= w and window.minimumSize().height() <= h
    window.resize(w, h)
    qtbot.waitUntil(lambda: window.size().width() == w and window.size().height() == h)
    window.banner.show_text("Welcome to Fiometer. " + "a long line " * 40, "details " * 200)
    window.messages_dock.show()
    for i in range(window.tabs.count()):  # every tab, History's stored-run list included
        window.tabs.setCurrentIndex(i)
        qtbot.wait(50)
        assert (window.width(), window.height()) == (w, h), window.tabs.tabText(i)
    assert window.minimumSize().height() <= h


def test_first_show_fits_the_screen(qtbot) -> None:
    from app.ui.settings import app_settings

    win = MainWindow(app_settings())
    qtbot.addWidget(win)
    win.resize(3000, 2000)  # e.g. remembered from a larger monitor
    win.show()
    qtbot.waitExposed(win)
    avail = win.screen().availableGeometry()
    assert win.frameGeometry().height() <= avail.height() and win.width() <= avail.width()
    assert avail.contains(win.geometry().topLeft())


def test_welcome_is_one_line(window: MainWindow) -> None:
    from app.first_run import FioStatus

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
    window.settings.setValue("firstRun/seen", False)
    window.show_fio_status(found)
    assert window.banner.label.text().count("\n") == 0 and "File > Examples" in window.banner.label.text()
    assert "fiometer " not in window.banner.details.lower()  # no command lines in the window


# --- 4: safe defaults -----------------------------------------------------------------------------
def press_enter_on_the_dialog(qtbot, seen: list[str]) -> None:
    def press() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        seen.append(box.defaultButton().text())
        qtbot.keyClick(box, Qt.Key.Key_Return)

    QTimer.singleShot(150, press)


def test_enter_on_a_destructive_question_does_nothing(qtbot) -> None:
    seen: list[str] = []
    press_enter_on_the_dialog(qtbot, seen)
    assert confirm(None, "Targets would be written", "…", "Overwrite and start") is False
    assert seen == ["Cancel"]
    box, yes = confirm_box(None, "t", "x", "Overwrite and start")
    assert yes.text() == "Overwrite and start" and box.escapeButton() is box.defaultButton()


def test_arming_names_what_is_written_with_its_size(window: MainWindow, dialogs, tmp_path: Path) -> None:
    plan = local_plan(tmp_path, workers=1)
    target = Path(plan.managers[0].workers[0].targets[0].name)
    target.write_bytes(b"precious" * (3 << 17))  # 3 MiB
    window.doc.replace(plan)
    window.run_control.run_options = RunOptions(run_time=1, file_size=1 << 20)
    dialogs.answer = False
    assert not window.run_control.start_run()
    title, text = dialogs.questions[-1]
    assert title == "Targets would be written" and f"{target} (3 MiB file, device " in text
    assert f"inode {target.stat().st_ino})" in text  # the object the answer arms
    assert target.read_bytes().startswith(b"precious")


def test_unsaved_changes_default_to_save_and_escape_cancels(window: MainWindow) -> None:
    window.doc.edit("Rename", Change.SETUP, lambda plan: setattr(plan, "name", "changed"))
    box = window.files.unsaved_question()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Save)
    assert box.escapeButton() is box.button(QMessageBox.StandardButton.Cancel)


# --- 2: --db --------------------------------------------------------------------------------------
def test_db_option_reaches_the_window(monkeypatch, tmp_path: Path) -> None:
    from app.cli.entry import main

    got = {}
    import app.ui.launch

    monkeypatch.setattr(app.ui.launch, "run_gui", lambda *a, **k: got.update(k) or 0)
    assert main(["--db", str(tmp_path / "x.db"), "gui"]) == 0
    assert got["db"] == str(tmp_path / "x.db")


def test_window_stores_in_and_shows_its_database(qtbot, tmp_path: Path, monkeypatch) -> None:
    from app.ui.settings import app_settings

    db = tmp_path / "elsewhere.db"
    win = MainWindow(app_settings(), db_path=db)
    qtbot.addWidget(win)
    assert win.db_path == db and win.history.tasks.db_path == db
    assert str(db) in win.statusBar().toolTip()
    shown = []
    monkeypatch.setattr(QMessageBox, "about", lambda _p, _t, text: shown.append(text))
    win.action_map["about"].trigger()
    assert f"Results database: {db}" in shown[0]


# --- 3: a manager lost mid-run ---------------------------------------------------------------------
def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@pytest.mark.fio
def test_a_manager_lost_mid_run_is_marked_at_once(window: MainWindow, tmp_path: Path, qtbot) -> None:
    host = "127.0.0.5"
    port = free_port(host)
    server = subprocess.Popen(
        ["fio", f"--server={host},{port}"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        time.sleep(0.7)
        plan = local_plan(tmp_path, workers=1)
        remote = Manager(
            "lab-server",
            f"{host}:{port}",
            workers=[
                Worker("Worker 1", queue_depth=4, specs=["S"], targets=[Target(str(tmp_path / "remote.tst"))])
            ],
        )
        plan.managers[0].name = "this-pc"
        plan.managers[0].host = LOCAL
        plan.managers.append(remote)
        window.doc.replace(plan)
        window.run_control.run_options = RunOptions(engine="null", run_time=60, ramp_up=0, file_size=1 << 20)
        assert window.run_control.start_run()
        window.topology.select(Selection())
        qtbot.waitUntil(lambda: ("manager", "lab-server", "lab-server") in window.live.series, timeout=20000)
        os.killpg(server.pid, signal.SIGKILL)
        qtbot.waitUntil(lambda: "lab-server" in window.run_control.lost, timeout=20000)
        assert window.controller.state == "running"  # the other manager goes on
        texts = [window.messages.item(i).text() for i in range(window.messages.count())]
        assert any(
            t.startswith("Error: Manager lab-server failed in step 1: ") and "lab-server" in t for t in texts
        )
        item = window.topology.topLevelItem(0).child(1)
        assert (
            item.text(0) == "lab-server — lost"
            and item.foreground(0).color() != window.palette().text().color()
        )
        rt = window.results_tab
        rt.scope.setCurrentIndex(rt.scope.findText("Each manager"))
        headers = [rt.table.horizontalHeaderItem(c).text() for c in range(rt.table.columnCount())]
        assert headers == ["this-pc", "lab-server (lost)"]
        grey = [rt.table.item(0, c).foreground().color() for c in range(2)]
        assert grey[0] != grey[1]
        window.controller.stop()
        qtbot.waitUntil(lambda: not window.controller.running, timeout=60000)
        texts = [window.messages.item(i).text() for i in range(window.messages.count())]
        summary = next(t for t in texts if t.startswith("Error: What failed in this run (1)"))
        assert "manager lab-server failed" in summary
    finally:
        with __import__("contextlib").suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)


# --- 6: keyboard ----------------------------------------------------------------------------------
def focus_chain(window: MainWindow, start, qtbot, limit: int = 40) -> list:
    from PySide6.QtWidgets import QApplication

    start.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is start)
    chain = [start]
    for _ in range(limit):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        w = QApplication.focusWidget()
        if w is start:
            return chain
        chain.append(w)
    raise AssertionError(f"Tab never came back: {[type(w).__name__ for w in chain]}")


def test_tab_walks_the_disk_targets_tab_in_layout_order(window: MainWindow, tmp_path: Path, qtbot) -> None:
    window.doc.replace(local_plan(tmp_path, workers=2, targets=2))
    window.activateWindow()
    window.tabs.setCurrentIndex(0)
    chain = focus_chain(window, window.topology, qtbot)
    assert all(w.isVisible() for w in chain)  # never an invisible stop
    page = [w for w in chain if window.targets_tab.isAncestorOf(w)]
    texts = [w.text() for w in page if hasattr(w, "text") and callable(w.text)]
    assert "Add test file…" in texts and "Move down" in texts and "Refresh" in texts  # past the table
    ys = [w.mapTo(window, w.rect().topLeft()).y() for w in page]
    rows = [(y, w.mapTo(window, w.rect().topLeft()).x()) for y, w in zip(ys, page, strict=True)]
    assert rows == sorted(rows, key=lambda r: (r[0] // 10, r[1]))  # top to bottom, left to right


def test_focused_buttons_show_a_ring() -> None:
    from app.ui import theme

    app = QApplication.instance()
    theme.apply_theme(app, theme.LIGHT)
    assert "QPushButton:focus" in app.styleSheet()


def test_shortcuts_for_topology_edits(window: MainWindow, tmp_path: Path, qtbot) -> None:
    window.doc.replace(local_plan(tmp_path, workers=1))
    window.activateWindow()
    window.topology.setFocus()
    window.topology.select(Selection(0, 0))
    keys = {
        k: window.action_map[k].shortcut().toString()
        for k in ("add_manager", "add_worker", "add_target", "duplicate_worker", "remove")
    }
    assert keys == {
        "add_manager": "Ctrl+Shift+M",
        "add_worker": "Ctrl+Shift+W",
        "add_target": "Ctrl+Shift+T",
        "duplicate_worker": "Ctrl+D",
        "remove": "Ctrl+Del",
    }
    qtbot.keyClick(
        window.topology, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    assert len(window.doc.plan.managers[0].workers) == 2 and window.topology.selection == Selection(0, 1)
    qtbot.keyClick(window.topology, Qt.Key.Key_Delete, Qt.KeyboardModifier.ControlModifier)
    assert len(window.doc.plan.managers[0].workers) == 1


# --- 5: a file that is not a plan; unsaved History edits ------------------------------------------
def test_a_file_of_random_bytes_leaves_the_plan_untouched(
    window: MainWindow, dialogs, tmp_path: Path
) -> None:
    window.doc.replace(local_plan(tmp_path, workers=2))
    before = window.doc.plan
    for name in ("noise.icf", "noise.json"):
        path = tmp_path / name
        path.write_bytes(bytes(range(256)) * 20)
        assert not window.files.open_path(path)
        title, text = dialogs.problems[-1]
        assert title == "Cannot open the plan" and name in text
    assert window.doc.plan is before and [w.name for w in before.managers[0].workers] == ["W1", "W2"]


# --- 8 and 10: examples run as shipped; Place target --------------------------------------------------
def test_an_example_opens_with_its_targets_placed(window: MainWindow) -> None:
    from app.store.db_location import default_test_file

    assert window.files.open_example("crystal")
    placed = {t.path for m in window.doc.plan.managers for w in m.workers for t in w.targets}
    assert placed == {str(default_test_file())} and not window.doc.dirty
    texts = [window.messages.item(i).text() for i in range(window.messages.count())]
    assert any(str(default_test_file()) in t for t in texts)
    assert not any("fiometer " in t.lower() or "--map" in t for t in texts)


def test_place_target_browses_here_suggests_there_and_places_every_worker(
    window: MainWindow, tmp_path: Path, qtbot
) -> None:
    from app.ui.plan.place_target import PlaceTargetDialog

    plan = local_plan(tmp_path, workers=2)
    for w in plan.managers[0].workers:
        w.targets = [Target("D:")]
    remote = Manager("win-box", "10.0.0.9:8765", workers=[Worker("W", targets=[Target("D:")])])
    plan.managers.append(remote)
    window.doc.replace(plan)
    here = PlaceTargetDialog(plan.managers[0], plan.managers[0].workers[0].targets[0], "Linux")
    there = PlaceTargetDialog(remote, remote.workers[0].targets[0], "Windows")
    qtbot.addWidget(here)
    qtbot.addWidget(there)
    assert here.browse.isEnabled() and not there.browse.isEnabled()
    assert there.path.text() == "C:\\fiometer-test.tst" and "D:" in there.windowTitle()
    assert window.doc.place_target(0, 0, 0, str(tmp_path / "d.tst")) == 2  # both workers of the manager
    assert [w.targets[0].path for w in plan.managers[0].workers] == [str(tmp_path / "d.tst")] * 2
    assert remote.workers[0].targets[0].path is None  # another machine keeps its own placement


# --- 7: the probed OS decides a remote target's rule ------------------------------------------------
def test_a_remote_target_follows_the_probed_os(window: MainWindow) -> None:
    from app.ui.plan.hosts import HostFacts

    window.edits.add_manager_to_plan(
        "win-box", "10.0.0.9:8765", HostFacts(os="Windows 10", fio_version="3.33")
    )
    mi = len(window.doc.plan.managers) - 1
    window.doc.set_worker_field(mi, 0, "targets", [Target("D:")], "Set targets")
    window.doc.set_worker_field(mi, 0, "max_size", 2048, "Set size")
    window.topology.select(Selection(mi, 0))
    tab = window.targets_tab
    state = tab.table.item(0, 2).text()
    assert "unknown" not in state and "D:" in state  # placed by the Windows rule, not "until probed"
    assert tab.max_size_note.text() == "= 1 MiB per target (512-byte sectors)"


def test_many_lines_at_once_scroll_the_messages_once_and_show_the_newest(window: MainWindow, qtbot) -> None:
    """A Start with 128 remote managers adds 512 notes at once: each line scrolled the list (0.22 ms each, 0.12 s
    of the GUI thread); now the lines added together scroll it once, to the newest."""
    window.messages_dock.show()
    scrolled: list[int] = []
    real = window.messages.scrollToBottom
    window.messages.scrollToBottom = lambda: (scrolled.append(1), real())[1]  # type: ignore[method-assign]
    for i in range(500):
        window.add_message(f"note {i}")
    assert scrolled == []  # not yet: once the window's loop runs again
    qtbot.waitUntil(lambda: scrolled == [1], timeout=5000)
    last = window.messages.item(window.messages.count() - 1)
    assert last.text() == "note 499"
    view = window.messages.viewport().rect()
    qtbot.waitUntil(
        lambda: view.contains(window.messages.visualItemRect(last)), timeout=5000
    )  # laid out, shown
    bar = window.messages.verticalScrollBar()
    assert bar.value() == bar.maximum() > 0
    window.add_message("one more")
    qtbot.waitUntil(lambda: scrolled == [1, 1], timeout=5000)
