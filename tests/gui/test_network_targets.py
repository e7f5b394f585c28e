"""Network Targets tab: add a network worker, give it a partner manager (TCP, port), edit, remove, see it in
the Topology and the live results' scopes, save and reopen; imported ICF network workers appear there."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialog

from app.model import plan as P
from app.model import planfile
from app.ui.main_window import TAB_NAMES, MainWindow
from app.ui.plan.network_tab import NetworkTargetDialog
from app.ui.plan.topology import Selection
from tests.gui.conftest import plan_file
from tests.helpers import shared_dir


def two_managers(reads: int = 0) -> P.Plan:
    spec = P.AccessSpec("64k", [P.SpecLine(65536, 100, reads, 0, 0, 1, 0, 0)], default_assignment="ALL")
    return P.Plan(
        "net",
        P.TestSetup(run_time=3),
        [spec],
        [
            P.Manager("A", P.LOCAL, workers=[P.Worker("Disk 1", specs=["64k"])]),
            P.Manager("B", "127.0.0.3:8765"),
        ],
    )


@pytest.fixture
def answer(monkeypatch: pytest.MonkeyPatch):
    """Stands in for the modal target dialog: fills it as told, then presses OK (or Cancel)."""
    filled: list[NetworkTargetDialog] = []

    def use(
        partner: str | None = None, port: int | None = None, accept: bool = True
    ) -> list[NetworkTargetDialog]:
        def exec_(dlg: NetworkTargetDialog) -> QDialog.DialogCode:
            if partner is not None:
                dlg.partner.setCurrentIndex(dlg.partner.findData(partner))
            dlg.fixed.setChecked(port is not None)
            if port is not None:
                dlg.port.setValue(port)
            filled.append(dlg)
            ok = dlg.buttons.button(dlg.buttons.StandardButton.Ok).isEnabled()
            return QDialog.DialogCode.Accepted if accept and ok else QDialog.DialogCode.Rejected

        monkeypatch.setattr(NetworkTargetDialog, "exec", exec_)
        return filled

    return use


def rows(window: MainWindow) -> list[list[str]]:
    t = window.network_tab.table
    return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]


def worker_label(window: MainWindow, mi: int, wi: int) -> str:
    return window.topology.topLevelItem(0).child(mi).child(wi).text(0)


def test_add_edit_remove_a_network_target_and_save_it(window: MainWindow, tmp_path: Path, answer) -> None:
    assert TAB_NAMES[1] == "Network Targets"
    window.files.open_path(plan_file(tmp_path, two_managers(reads=0)))
    tab = window.network_tab
    window.topology.select(Selection(0, 0))
    assert tab.stack.currentWidget() is tab.intro and "disk worker" in tab.intro_text.text()
    assert tab.add_worker_button.text() == "Add network worker to A"

    tab.add_worker_button.click()
    w = window.doc.plan.managers[0].workers[1]
    assert (w.name, w.kind, w.specs) == ("Network 2", "network_tcp", ["64k"])
    assert window.topology.selection == Selection(0, 1) and not tab.stack.is_empty
    assert tab.table_stack.is_empty and "No network target" in tab.table_stack.empty.text()
    assert "sends to its partners" in tab.direction.text()  # 0 % reads: the worker sends
    assert (
        window.targets_tab.stack.is_empty and "Network Targets tab" in window.targets_tab.stack.empty.text()
    )

    answer(partner="B", port=23000)
    tab.add()
    assert [(t.name, t.kind, t.partner_manager, t.port) for t in w.targets] == [
        ("B (TCP)", "network", "B", 23000)
    ]
    assert rows(window) == [
        ["B (TCP)", "B — 127.0.0.3:8765", "23000", "A sends → B listens at 127.0.0.3:23000"]
    ]
    assert worker_label(window, 0, 1) == "Network 2  [TCP → B]"
    assert window.doc.dirty

    answer(partner="A", port=None)  # edit: loopback to its own manager, automatic port
    tab.table.selectRow(0)
    tab.edit()
    assert (w.targets[0].partner_manager, w.targets[0].port, w.targets[0].name) == ("A", None, "B (TCP)")
    assert rows(window)[0][2:] == ["auto", "A sends → A listens at 127.0.0.1:auto"]

    tab.remove()
    assert w.targets == [] and tab.table_stack.is_empty

    answer(partner="B", port=None)
    tab.add()
    saved = tmp_path / "saved.fiometer.json"
    window.doc.save(saved)
    again, problems = planfile.load(saved)
    assert problems == []
    assert again.managers[0].workers[1] == w and again.managers[0].workers[1].kind == "network_tcp"
    window.files.open_path(saved)
    window.topology.select(Selection(0, 1))
    assert rows(window) == [
        ["B (TCP)", "B — 127.0.0.3:8765", "auto", "A sends → B listens at 127.0.0.3:auto"]
    ]


def test_cancel_changes_nothing_and_a_taken_port_is_refused(
    window: MainWindow, tmp_path: Path, answer
) -> None:
    plan = two_managers(reads=100)
    plan.managers[1].workers = [
        P.Worker(
            "Net B",
            kind="network_tcp",
            specs=["64k"],
            targets=[P.Target("A (TCP)", kind="network", partner_manager="A", port=23000)],
        )
    ]
    window.files.open_path(plan_file(tmp_path, plan))
    window.topology.select(Selection(1, 0))
    tab = window.network_tab
    assert "receives from its partners" in tab.direction.text()
    assert rows(window)[0][3] == "A sends → B listens at 127.0.0.3:23000"  # B receives, so B listens
    assert worker_label(window, 1, 0) == "Net B  [TCP ← A]"

    filled = answer(partner="A", port=23000)
    tab.add()  # the port is B's other target's: OK stays disabled
    assert "already fixed" in filled[-1].error.text() and len(plan_workers(window)[0].targets) == 1
    answer(partner="A", port=23001, accept=False)
    tab.add()
    assert len(plan_workers(window)[0].targets) == 1 and not window.doc.dirty
    answer(port=23000)  # editing the target keeps its own port
    tab.table.selectRow(0)
    tab.edit()
    assert plan_workers(window)[0].targets[0].port == 23000


def plan_workers(window: MainWindow) -> list[P.Worker]:
    return window.doc.plan.managers[1].workers


def test_protocol_vi_is_kept_but_said_not_to_run(window: MainWindow, tmp_path: Path) -> None:
    plan = two_managers()
    plan.managers[0].workers = [P.Worker("Net", kind="network_vi", specs=["64k"])]
    window.files.open_path(plan_file(tmp_path, plan))
    window.topology.select(Selection(0, 0))
    tab = window.network_tab
    assert tab.protocol.currentData() == "network_vi" and "do not run" in tab.direction.text()
    assert worker_label(window, 0, 0) == "Net  [network VI: not run by fio]"
    tab.protocol.setCurrentIndex(tab.protocol.findData("network_tcp"))
    assert window.doc.plan.managers[0].workers[0].kind == "network_tcp"
    assert worker_label(window, 0, 0) == "Net  [TCP → no target]"


def test_imported_icf_network_worker_appears_with_its_partner(window: MainWindow) -> None:
    window.files.open_path(shared_dir() / "icf" / "synthetic" / "eilerjc_iometer_network_worker.icf")
    window.topology.select(Selection(0, 0))
    tab = window.network_tab
    assert not tab.stack.is_empty and tab.protocol.currentData() == "network_tcp"
    # the NIC address in the file is the target's name; the connection goes to the manager's own address
    assert rows(window) == [
        ["127.0.0.1", "TESTMGR — this machine", "auto", "TESTMGR sends → TESTMGR listens at 127.0.0.1:auto"]
    ]
    assert worker_label(window, 0, 0) == "Worker 1  [TCP ← TESTMGR]"


def test_client_workers_get_their_own_line_in_the_live_results(window: MainWindow, tmp_path: Path) -> None:
    plan = two_managers()
    plan.managers[0].workers.append(
        P.Worker(
            "Net",
            kind="network_tcp",
            specs=["64k"],
            targets=[P.Target("B", kind="network", partner_manager="B")],
        )
    )
    window.files.open_path(plan_file(tmp_path, plan))
    titles = {s.title.strip(): s.keys for s in window.results_tab.scopes}
    assert titles["B / [Net]"] == [("worker", "B", "n1.w2")]  # Iometer's client worker, on the partner
    assert titles["A / Net"] == [("worker", "A", "w2")]


def test_edit_menu_adds_a_network_worker_and_shows_its_tab(
    window: MainWindow, tmp_path: Path, dialogs
) -> None:
    window.files.open_path(plan_file(tmp_path, two_managers()))
    window.topology.select(Selection(1))
    window.action_map["add_network_worker"].trigger()
    assert [(w.name, w.kind) for w in window.doc.plan.managers[1].workers] == [("Network 1", "network_tcp")]
    assert window.topology.selection == Selection(1, 0)
    assert window.tabs.currentIndex() == TAB_NAMES.index("Network Targets")
    window.doc.plan.managers.clear()
    window.topology.select(Selection())
    window.action_map["add_network_worker"].trigger()
    assert dialogs.problems == [("No manager", "Add a manager first.")]
