"""Managers: host:port parsing, probing a fio server (an unreachable one says why), Topology entries."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from app.model.plan import LOCAL, Manager, Worker
from app.ui.main_window import MainWindow
from app.ui.plan.manager_dialog import AddManagerDialog, parse_host_port
from app.ui.plan.topology import DETAIL_ROLE, Selection
from tests.gui.conftest import local_plan


def closed_loopback_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_parse_host_port() -> None:
    assert parse_host_port("storage-01") == ("storage-01", 8765)
    assert parse_host_port("10.0.0.5:9000") == ("10.0.0.5", 9000)
    assert parse_host_port("[::1]:8765") == ("::1", 8765)
    assert parse_host_port("host:0") is None
    assert parse_host_port("host:99999") is None


def test_dialog_checks_the_host_and_name(qtbot) -> None:
    dlg = AddManagerDialog({"DB01"})
    qtbot.addWidget(dlg)
    ok = dlg.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert not ok.isEnabled()
    qtbot.keyClicks(dlg.host, "db01:70000")
    assert not ok.isEnabled() and "port" in dlg.error.text()
    dlg.host.setText("db01:8765")
    assert ok.isEnabled() and dlg.manager_name() == "db01" and dlg.address() == "db01:8765"
    assert not dlg.exposure.isHidden()  # fio --server has no authentication: say so for remote hosts
    dlg.name.setText("DB01")
    assert not ok.isEnabled() and "already exists" in dlg.error.text()
    dlg.host.setText("127.0.0.1:8765")
    assert dlg.exposure.isHidden()  # a loopback (SSH tunnel) address is fine


def test_tab_goes_from_host_to_name_to_probe_so_a_typed_name_is_kept(qtbot) -> None:
    """Issue 38.7: typed as a user does (keys only), the name after Tab goes into the name field."""
    dlg = AddManagerDialog(set())
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    dlg.activateWindow()
    dlg.host.setFocus()
    qtbot.waitUntil(dlg.host.hasFocus)
    qtbot.keyClicks(dlg.host, "db01:8765")
    qtbot.keyClick(dlg.focusWidget(), Qt.Key.Key_Tab)
    assert dlg.focusWidget() is dlg.name
    qtbot.keyClicks(dlg.focusWidget(), "Primary")
    qtbot.keyClick(dlg.focusWidget(), Qt.Key.Key_Tab)
    assert dlg.focusWidget() is dlg.probe_button
    assert dlg.manager_name() == "Primary" and dlg.address() == "db01:8765"
    qtbot.keyClick(dlg.focusWidget(), Qt.Key.Key_Tab)  # then the dialog's buttons
    assert dlg.buttons.isAncestorOf(dlg.focusWidget())


def test_unreachable_manager_shows_the_reason(qtbot) -> None:
    port = closed_loopback_port()
    dlg = AddManagerDialog(set())
    qtbot.addWidget(dlg)
    dlg.host.setText(f"127.0.0.1:{port}")
    dlg.probe()
    assert dlg.result.text().startswith("Contacting")
    qtbot.waitUntil(lambda: dlg.result.text().startswith("Not reachable"), timeout=10000)
    assert str(port) in dlg.result.text() or "refused" in dlg.result.text().lower()
    assert dlg.facts is None


def test_unreachable_manager_in_the_topology_and_at_start(
    window: MainWindow, dialogs, tmp_path: Path, qtbot
) -> None:
    port = closed_loopback_port()
    plan = local_plan(tmp_path, managers=2, workers=1)
    plan.managers[1].host = f"127.0.0.1:{port}"
    window.doc.replace(plan)
    item = window.topology.topLevelItem(0).child(1)
    assert item.data(0, DETAIL_ROLE).startswith(f"127.0.0.1:{port}")
    qtbot.waitUntil(
        lambda: "\n" in (window.topology.topLevelItem(0).child(1).data(0, DETAIL_ROLE) or ""), timeout=10000
    )
    detail = window.topology.topLevelItem(0).child(1).data(0, DETAIL_ROLE)
    assert str(port) in detail or "refused" in detail.lower()
    assert not window.run_control.start_run()
    title, text = dialogs.problems[-1]
    assert title == "Cannot start the test" and "'M2'" in text


def test_added_manager_appears_in_the_topology(window: MainWindow) -> None:
    window.edits.add_manager_to_plan("db01", "db01:8765")
    plan = window.doc.plan
    assert [m.name for m in plan.managers][-1] == "db01"
    assert plan.managers[-1].host == "db01:8765" and [w.name for w in plan.managers[-1].workers] == [
        "Worker 1"
    ]
    assert window.topology.selection == Selection(1)
    item = window.topology.topLevelItem(0).child(1)
    assert item.data(0, DETAIL_ROLE).startswith("db01:8765")
    assert "Manager db01" in [
        window.results_tab.scope.itemText(i) for i in range(window.results_tab.scope.count())
    ]


def test_an_imported_manager_without_host_can_be_placed_on_this_machine(qtbot) -> None:
    m = Manager("DB02", None, "10.1.1.1", [Worker("W1")])
    dlg = AddManagerDialog({"DB02"}, manager=m)
    qtbot.addWidget(dlg)
    assert "10.1.1.1" in " ".join(lab.text() for lab in dlg.findChildren(type(dlg.result)))
    assert not dlg.name.isEnabled() and dlg.manager_name() == "DB02"
    ok = dlg.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert not ok.isEnabled()
    dlg.local.setChecked(True)
    assert ok.isEnabled() and dlg.address() == LOCAL


@pytest.mark.fio
def test_probe_of_a_real_fio_server(qtbot, tmp_path: Path) -> None:
    import subprocess
    import time

    port = closed_loopback_port()
    server = subprocess.Popen(
        ["fio", f"--server=ip:127.0.0.1,{port}"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        dlg = AddManagerDialog(set())
        qtbot.addWidget(dlg)
        dlg.host.setText(f"127.0.0.1:{port}")
        dlg.probe()
        qtbot.waitUntil(lambda: dlg.result.text().startswith(("Reachable", "Not reachable")), timeout=15000)
        assert dlg.result.text().startswith("Reachable"), dlg.result.text()
        assert dlg.facts is not None and dlg.facts.fio_version.startswith("3.")
    finally:
        server.terminate()
        server.wait(10)
