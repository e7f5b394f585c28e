"""What the Topology knows about each manager's host: this machine's facts, and each fio server's
OS and fio version asked for in the background."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from app.model.plan import LOCAL, Manager
from app.ui.plan.hosts import HostFacts, LocalFactsProbe, RemoteProbe
from app.ui.plan.manager_dialog import parse_host_port
from app.ui.plan.plan_document import PlanDocument
from app.ui.plan.targets_tab import TargetsTab
from app.ui.plan.topology import TopologyTree

if TYPE_CHECKING:
    from app.first_run import FioStatus


class HostFactsKeeper(QObject):
    """Probes hosts and hands their facts to the Topology (its labels) and the Disk Targets tab (each
    remote manager's OS decides its target rules). A QObject child of the window: the probes' late answers
    are not delivered once the window is gone."""

    def __init__(
        self,
        parent: QObject,
        doc: PlanDocument,
        topology: TopologyTree,
        targets_tab: TargetsTab,
        show_fio_status: Callable[[FioStatus], None],
    ):
        super().__init__(parent)
        self.doc = doc
        self.topology = topology
        self.targets_tab = targets_tab
        self.show_fio_status = show_fio_status
        self.local_facts: HostFacts | None = None
        self.local_probe: LocalFactsProbe | None = None
        self.remote_probe = RemoteProbe()
        self.remote_probe.done.connect(self._on_remote_facts)

    def start_probes(self) -> None:
        self.local_probe = LocalFactsProbe()  # no parent: see hosts.py on threads and lifetimes
        self.local_probe.ready.connect(self._on_local_facts)
        self.local_probe.fio_status.connect(self.show_fio_status)
        self.local_probe.start()

    def probe_manager(self, m: Manager) -> None:
        """Ask a remote manager's fio server for its OS and fio version, in the background."""
        hp = parse_host_port(m.host) if m.host not in (None, LOCAL) else None
        if hp is not None:
            self.remote_probe.run(m.name, *hp)

    def forget_remote_facts(self) -> None:
        """A new plan: keep this machine's facts, ask the servers again."""
        self.topology.facts = {
            k: v
            for k, v in self.topology.facts.items()
            if (m := self.doc.plan.manager(k)) is not None and m.host == LOCAL
        }
        for m in self.doc.plan.managers:
            self.probe_manager(m)

    def host_changed(self, m: Manager, facts: HostFacts | None) -> None:
        self.topology.facts.pop(m.name, None)
        if m.host == LOCAL and self.local_facts:
            self.topology.set_facts(m.name, self.local_facts)
        elif facts is not None:
            self.topology.set_facts(m.name, facts)
            self.remote_os(m.name, facts)
        else:
            self.probe_manager(m)
        self.topology.rebuild(self.doc.plan)
        self.targets_tab.refresh()

    def apply_local_facts(self) -> None:
        if self.local_facts is not None:
            self._on_local_facts(self.local_facts)

    def _on_remote_facts(self, name: str, facts: HostFacts) -> None:
        m = self.doc.plan.manager(name)
        if m is None or m.host in (None, LOCAL):
            return
        self.topology.set_facts(name, facts)
        self.topology.rebuild(self.doc.plan)
        self.remote_os(name, facts)

    def remote_os(self, name: str, facts: HostFacts) -> None:
        """The Disk Targets tab states a remote manager's rules for the OS its probe found."""
        if facts.os:
            self.targets_tab.os_by_manager[name] = facts.os.split()[0]
        self.targets_tab.refresh()

    def _on_local_facts(self, facts: HostFacts) -> None:
        for m in self.doc.plan.managers:
            if m.host == LOCAL:
                self.topology.set_facts(m.name, facts)
        self.local_facts = facts
        self.topology.rebuild(self.doc.plan)
