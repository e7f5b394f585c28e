"""Topology commands: what Edit > Add manager / worker, Duplicate and Remove do with the selection.
The plan itself is changed by the plan document; this module decides where and selects the result."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QMainWindow

from app.model.plan import Manager
from app.ui.plan.hosts import HostFacts
from app.ui.plan.manager_dialog import AddManagerDialog
from app.ui.plan.topology import Selection


class EditsMixin(QMainWindow):
    def _selected_manager(self) -> int | None:
        sel = self.topology.selection
        plan = self.doc.plan
        if sel.manager is not None and sel.manager < len(plan.managers):
            return sel.manager
        return 0 if len(plan.managers) == 1 else None

    def add_manager(self) -> None:
        dlg = AddManagerDialog({m.name for m in self.doc.plan.managers}, self)
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return
        self.add_manager_to_plan(dlg.manager_name(), dlg.address(), dlg.facts)

    def add_manager_to_plan(self, name: str, address: str, facts: HostFacts | None = None) -> None:
        mi = self.doc.add_manager(name, address)
        self.host_changed(self.doc.plan.managers[mi], facts)
        self.topology.select(Selection(mi))

    def set_manager_host(self) -> None:
        sel = self.topology.selection
        if sel.manager is None:
            self.statusBar().showMessage("Select a manager first", 4000)
            return
        m: Manager = self.doc.plan.managers[sel.manager]
        dlg = AddManagerDialog({x.name for x in self.doc.plan.managers}, self, manager=m)
        if dlg.exec() == QDialog.DialogCode.Accepted:
            self.doc.set_host(sel.manager, dlg.address())
            self.host_changed(m, dlg.facts)

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
        if not sel.is_worker:
            self.statusBar().showMessage("Select a worker to duplicate", 4000)
            return
        self.topology.select(Selection(sel.manager, self.doc.duplicate_worker(sel.manager, sel.worker)))

    def add_target(self) -> None:
        """Edit > Add test file…: the Disk Targets tab's dialog for the selected worker."""
        if not self.topology.selection.is_worker:
            self.statusBar().showMessage("Select a worker to add a test file to", 4000)
            return
        self.show_tab(self.targets_tab)
        self.targets_tab.add_test_file()

    def remove_selected(self) -> None:
        sel = self.topology.selection
        if sel.is_all:
            self.statusBar().showMessage("Select a worker or a manager to remove", 4000)
            return
        if sel.is_worker:
            self.doc.remove_worker(sel.manager, sel.worker)
            new = Selection(sel.manager, sel.worker - 1) if sel.worker > 0 else Selection(sel.manager)
        else:
            self.doc.remove_manager(sel.manager)
            new = Selection()
        self.topology.select(new)
