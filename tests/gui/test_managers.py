"""Adding a manager: host:port parsing, the probe (or why there is none), the Topology entry."""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox

from app.ui.main_window import MainWindow
from app.ui.manager_dialog import NO_REMOTE, AddManagerDialog, find_probe, parse_host_port
from app.ui.topology import DETAIL_ROLE, Selection


def test_parse_host_port() -> None:
    assert parse_host_port("storage-01") == ("storage-01", 8765)
    assert parse_host_port("10.0.0.5:9000") == ("10.0.0.5", 9000)
    assert parse_host_port("[::1]:8765") == ("[::1]", 8765)
    assert parse_host_port("host:0") is None
    assert parse_host_port("host:99999") is None
    assert parse_host_port("two words") is None


def test_dialog_checks_the_host_and_name(qtbot) -> None:
    dlg = AddManagerDialog({"DB01"})
    qtbot.addWidget(dlg)
    ok = dlg.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert not ok.isEnabled()
    qtbot.keyClicks(dlg.host, "db01:70000")
    assert not ok.isEnabled() and "port" in dlg.error.text()
    dlg.host.setText("db01:8765")
    assert ok.isEnabled() and dlg.manager_name() == "db01" and dlg.address() == "db01:8765"
    dlg.name.setText("DB01")
    assert not ok.isEnabled() and "already exists" in dlg.error.text()


def test_probe_says_why_it_cannot_contact_hosts_yet(qtbot) -> None:
    if find_probe() is not None:  # once the remote engine lands, test_unreachable_manager covers it
        return
    dlg = AddManagerDialog(set())
    qtbot.addWidget(dlg)
    dlg.host.setText("127.0.0.1:1")
    dlg.probe()
    assert dlg.result.text() == NO_REMOTE


def test_added_manager_appears_in_the_topology(window: MainWindow) -> None:
    window.add_manager_to_plan("db01", "db01:8765")
    plan = window.doc.plan
    assert [m.name for m in plan.managers][-1] == "db01"
    assert plan.managers[-1].host == "db01:8765" and [w.name for w in plan.managers[-1].workers] == ["Worker 1"]
    assert window.topology.selection == Selection(1)
    item = window.topology.topLevelItem(0).child(1)
    assert item.data(0, DETAIL_ROLE) == "db01:8765"
    # the results display offers the new manager
    assert "Manager db01" in [window.results_tab.scope.itemText(i) for i in range(window.results_tab.scope.count())]
