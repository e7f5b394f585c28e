"""Topology commands: what Edit > Add manager / worker, Duplicate and Remove do with the selection.
The plan itself is changed by the plan document (each one undoable); this module decides where and
selects the result."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QDialog, QStatusBar, QWidget

from app.model.plan import Manager
from app.ui.plan.hosts import HostFacts
from app.ui.plan.manager_dialog import AddManagerDialog
from app.ui.plan.network_tab import NetworkTargetsTab
from app.ui.plan.plan_document import PlanDocument
from app.ui.plan.targets_tab import TargetsTab
from app.ui.plan.topology import Selection, TopologyTree
from app.ui.window.host_facts import HostFactsKeeper


class TopologyEdits:
    """Edit menu's topology commands on the document, for the Topology's selection."""

    def __init__(
        self,
        parent: QWidget,
        doc: PlanDocument,
        topology: TopologyTree,
        hosts: HostFactsKeeper,
        targets_tab: TargetsTab,
        network_tab: NetworkTargetsTab,
        status_bar: QStatusBar,
        show_tab: Callable[[QWidget], None],
        show_problem: Callable[[str, str], None],
    ):
        """``show_problem``: called at the time of the problem (tests replace the window's)."""
        self.parent = parent
        self.doc = doc
        self.topology = topology
        self.hosts = hosts
        self.targets_tab = targets_tab
        self.network_tab = network_tab
        self.status_bar = status_bar
        self.show_tab = show_tab
        self.show_problem = show_problem

    def _say(self, text: str) -> None:
        self.status_bar.showMessage(text, 4000)

    def _selected_manager(self) -> int | None:
        sel = self.topology.selection
        plan = self.doc.plan
        if sel.manager is not None and sel.manager < len(plan.managers):
            return sel.manager
        return 0 if len(plan.managers) == 1 else None

    def add_manager(self) -> None:
        dlg = AddManagerDialog({m.name for m in self.doc.plan.managers}, self.parent)
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return
        self.add_manager_to_plan(dlg.manager_name(), dlg.address(), dlg.facts)

    def add_manager_to_plan(self, name: str, address: str, facts: HostFacts | None = None) -> None:
        mi = self.doc.add_manager(name, address)
        self.hosts.host_changed(self.doc.plan.managers[mi], facts)
        self.topology.select(Selection(mi))

    def set_manager_host(self) -> None:
        mi = self.topology.selection.manager
        if mi is None:
            self._say("Select a manager first")
            return
        m: Manager = self.doc.plan.managers[mi]
        dlg = AddManagerDialog({x.name for x in self.doc.plan.managers}, self.parent, manager=m)
        if dlg.exec() == QDialog.DialogCode.Accepted:
            self.doc.set_host(mi, dlg.address())
            self.hosts.host_changed(self.doc.plan.managers[mi], dlg.facts)

    def _manager_for_new_worker(self) -> int | None:
        """The selected manager, else the first; None (said) when the plan has none."""
        mi = self._selected_manager()
        if mi is None and not self.doc.plan.managers:
            self.show_problem("No manager", "Add a manager first.")
            return None
        return 0 if mi is None else mi

    def add_worker(self) -> None:
        mi = self._manager_for_new_worker()
        if mi is not None:
            self.topology.select(Selection(mi, self.doc.add_worker(mi)))

    def add_network_worker(self) -> None:
        """Edit > Add network worker: a TCP network worker on the selected manager, its partners on the
        Network Targets tab."""
        mi = self._manager_for_new_worker()
        if mi is not None:
            self.topology.select(Selection(mi, self.doc.add_network_worker(mi)))
            self.show_tab(self.network_tab)

    def duplicate_worker(self) -> None:
        sel = self.topology.selection
        if sel.manager is None or sel.worker is None:
            self._say("Select a worker to duplicate")
            return
        self.topology.select(Selection(sel.manager, self.doc.duplicate_worker(sel.manager, sel.worker)))

    def add_target(self) -> None:
        """Edit > Add test file…: the Disk Targets tab's dialog for the selected worker."""
        if not self.topology.selection.is_worker:
            self._say("Select a worker to add a test file to")
            return
        self.show_tab(self.targets_tab)
        self.targets_tab.add_test_file()

    def remove_selected(self) -> None:
        sel = self.topology.selection
        if sel.manager is None:
            self._say("Select a worker or a manager to remove")
            return
        if sel.worker is not None:
            self.doc.remove_worker(sel.manager, sel.worker)
            new = Selection(sel.manager, sel.worker - 1) if sel.worker > 0 else Selection(sel.manager)
        else:
            self.doc.remove_manager(sel.manager)
            new = Selection()
        self.topology.select(new)
