"""The window's life cycle as an admin goes through it, on every OS (also run by `bash bootstrap.sh
test-windows` under Windows Python with fio.exe and a real display): open the bundled Iometer example, Start,
Stop (one step), Stop all, a run to its end, History, Compare, a report, and closing the window mid-run.
Actions are triggered as the menu and toolbar do (keyboard shortcuts have their own tests)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from PySide6.QtCore import Qt

from app.engine.run.runner import RunOptions
from app.paths import resources_dir
from app.store import open_store
from app.store.queries import get_run, list_runs
from app.ui.history.compare_view import CompareView
from app.ui.main_window import MainWindow

VMWARE = resources_dir() / "examples" / "vmware-unofficial-storage-performance.icf"
STEPS = 4  # the VMware template's access specifications, one step each


def stored(run_id: int):
    with open_store(Path(os.environ["FIOMETER_DB"])) as store:
        return get_run(store, run_id)


def finished(window: MainWindow, qtbot, timeout: int = 90000) -> str:
    with qtbot.waitSignal(window.controller.finished, timeout=timeout) as sig:
        pass
    return str(sig.args[0])


def start(window: MainWindow, tmp_path: Path, run_time: int, **extra) -> None:
    window.run_control.run_options = RunOptions(
        engine="null", run_time=run_time, ramp_up=0, file_size=1 << 20, **extra
    )
    assert window.run_control.start_run()


def running_step(window: MainWindow) -> str:
    return window.status_step.text()


def test_open_start_stop_stop_all_history_compare_report_and_close(
    window: MainWindow, tmp_path: Path, qtbot
) -> None:
    assert window.files.open_path(str(VMWARE), ask_discard=False)
    assert window.doc.place_targets({"C:": str(tmp_path / "iobw.tst")}) > 0
    trigger = window.action_map

    # Start, then Stop (Iometer's: this step ends with its numbers, the next one starts), then Stop all
    start(window, tmp_path, run_time=30)
    qtbot.waitUntil(
        lambda: "Step 1/" in running_step(window) and "Running" in window.status_state.text(), timeout=60000
    )
    qtbot.waitUntil(lambda: window.results_tab.table.item(0, 0).text() not in ("", "—"), timeout=30000)
    trigger["stop"].trigger()
    qtbot.waitUntil(lambda: "Step 2/" in running_step(window), timeout=45000)
    trigger["stop_all"].trigger()
    assert finished(window, qtbot) == "stopped"
    first = window.controller.run_end.run_id
    run = stored(first)
    assert [s.status for s in run.steps[:2]] == ["stopped", "stopped"], [
        m.text for s in run.steps for m in s.messages
    ]
    assert len(run.steps) == 2  # Stop all ran no further step
    assert all(r.metrics.ios > 0 for r in run.steps[0].results if r.level == "manager")

    # a run to its end
    start(window, tmp_path, run_time=1)
    assert finished(window, qtbot) == "complete"
    second = window.controller.run_end.run_id
    assert [s.status for s in stored(second).steps] == ["complete"] * STEPS

    # History lists both; Compare them; a report of the comparison
    ui = window.history
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        trigger["history"].trigger()
    ui.list.select_runs([first, second])
    assert ui.list.compare_button.isEnabled()
    qtbot.mouseClick(ui.list.compare_button, Qt.MouseButton.LeftButton)
    view = ui.workspace.currentWidget()
    assert isinstance(view, CompareView)
    qtbot.waitUntil(lambda: view.data is not None, timeout=30000)
    assert view.sections and view.sections[0].table.rowCount() > 0
    qtbot.mouseClick(view.report_button, Qt.MouseButton.LeftButton)
    dlg = ui.dialogs[-1]
    for key, box in dlg.formats.items():
        box.setChecked(key in ("html", "xlsx"))
    (tmp_path / "report").mkdir()
    dlg.folder.setText(str(tmp_path / "report"))
    assert dlg.problem() is None
    with qtbot.waitSignal(dlg.written, timeout=120000) as sig:
        qtbot.mouseClick(dlg.write_button, Qt.MouseButton.LeftButton)
    written = [Path(p) for p in sig.args[0]]
    assert sorted(p.suffix for p in written) == [".html", ".xlsx"]
    assert all(p.stat().st_size > 1000 for p in written)
    dlg.close()

    # closing the window mid-run: it closes once fio has ended, the run stored as stopped by the user
    running = threading.Event()
    start(window, tmp_path, run_time=30, before_fio_start=lambda step: running.set())
    qtbot.waitUntil(running.is_set, timeout=60000)
    qtbot.waitUntil(lambda: window.results_tab.table.item(0, 0).text() not in ("", "—"), timeout=30000)
    window.close()  # the fixture answers the close question with "discard"
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=30000)
    with open_store(Path(os.environ["FIOMETER_DB"])) as store:
        last = max(list_runs(store), key=lambda r: r.id)
    assert last.status == "stopped"
    third = stored(last.id)
    assert third.steps[0].status == "stopped" and any(r.level == "manager" for r in third.steps[0].results)
    assert not any("killed" in m.text or "failed" in m.text for s in third.steps for m in s.messages)
