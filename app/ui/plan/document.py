"""The open plan and its file, shared by every panel; panels edit the plan and call ``touch``."""

from __future__ import annotations

import copy
import platform
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.model import planfile
from app.model.opening import OpenedPlan, is_icf, open_plan
from app.model.plan import LOCAL, FidelityNote, Manager, Plan, Worker

# What changed, so panels refresh only what they show.
TOPOLOGY = "topology"  # managers or workers added, removed, renamed
TARGETS = "targets"  # a worker's targets or its disk settings
SPECS = "specs"  # the plan's access specification definitions
ASSIGNMENT = "assignment"  # a worker's assigned spec list
SETUP = "setup"  # Test Setup fields
RESULTS = "results"  # Results Display settings (update frequency / type)


def local_host_name() -> str:
    return platform.node() or "this machine"


def new_plan() -> Plan:
    """What File > New gives: this machine as the only manager, one empty worker (Iometer's start)."""
    return Plan(name="Untitled", managers=[Manager(local_host_name(), LOCAL, workers=[Worker("Worker 1")])])


class PlanDocument(QObject):
    replaced = Signal()  # a different plan object: rebuild everything
    changed = Signal(str)  # one of the kinds above
    dirty_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.plan: Plan = new_plan()
        self.path: Path | None = None  # the plan file it saves to (None for new and .icf plans)
        self.opened_from: Path | None = None
        self.warnings: list[str] = []
        self.notes: list[FidelityNote] = []
        self.dirty = False

    def touch(self, what: str) -> None:
        self._set_dirty(True)
        self.changed.emit(what)

    def mark_saved(self) -> None:
        """Nothing to save (e.g. an example just placed on this machine)."""
        self._set_dirty(False)

    def _set_dirty(self, value: bool) -> None:
        if value != self.dirty:
            self.dirty = value
            self.dirty_changed.emit(value)

    def replace(self, plan: Plan, path: Path | None = None, opened_from: Path | None = None,
                warnings: list[str] | None = None, notes: list[FidelityNote] | None = None) -> None:
        self.plan = plan
        self.path = path
        self.opened_from = opened_from
        self.warnings = list(warnings or [])
        self.notes = list(notes or [])
        self._set_dirty(False)
        self.replaced.emit()

    def new(self) -> None:
        self.replace(new_plan())

    def open(self, path: str | Path, opened: OpenedPlan | None = None) -> OpenedPlan:
        """Open a .icf or plan file (or show ``opened``, the file read already); raises
        app.model.opening.PlanOpenError (message for the user)."""
        path = Path(path)
        opened = opened or open_plan(path)
        self.replace(opened.plan, None if is_icf(path) else path, path, opened.warnings, opened.notes)
        return opened

    def save(self, path: str | Path | None = None) -> Path:
        target = Path(path) if path else self.path
        if target is None:
            raise ValueError("no file name: use Save As")
        planfile.save(self.plan, target)
        self.path = target
        self._set_dirty(False)
        return target

    @property
    def title(self) -> str:
        where = self.path or self.opened_from
        return where.name if where else self.plan.name

    # --- topology edits: each changes the plan and says so; indexes say where the new item is ---------
    def default_specs(self) -> list[str]:
        """Iometer gives a new worker every spec whose default assignment is ALL (or DISK)."""
        return [s.name for s in self.plan.specs if s.default_assignment in ("ALL", "DISK")]

    def add_manager(self, name: str, host: str) -> int:
        """A manager with one worker; returns its index."""
        self.plan.managers.append(Manager(name, host, workers=[Worker("Worker 1", specs=self.default_specs())]))
        self.touch(TOPOLOGY)
        return len(self.plan.managers) - 1

    def set_host(self, manager: int, host: str) -> None:
        self.plan.managers[manager].host = host
        self.touch(TOPOLOGY)

    def add_worker(self, manager: int) -> int:
        """A new worker on the manager at ``manager``; returns its index."""
        m = self.plan.managers[manager]
        m.workers.append(Worker(self.unique_worker_name(m), specs=self.default_specs()))
        self.touch(TOPOLOGY)
        return len(m.workers) - 1

    def add_network_worker(self, manager: int) -> int:
        """A TCP network worker (Iometer's Start Network Worker) with the specs assigned by default to network
        workers (ALL or NET); its partners are chosen on the Network Targets tab. Returns its index."""
        m = self.plan.managers[manager]
        specs = [s.name for s in self.plan.specs if s.default_assignment in ("ALL", "NET")]
        m.workers.append(Worker(self.unique_worker_name(m, "Network"), kind="network_tcp", specs=specs))
        self.touch(TOPOLOGY)
        return len(m.workers) - 1

    def duplicate_worker(self, manager: int, worker: int) -> int:
        """A copy (targets and specs too) right after the original; returns its index."""
        m = self.plan.managers[manager]
        w = copy.deepcopy(m.workers[worker])
        w.name = self.unique_worker_name(m)
        m.workers.insert(worker + 1, w)
        self.touch(TOPOLOGY)
        return worker + 1

    def remove_worker(self, manager: int, worker: int) -> None:
        del self.plan.managers[manager].workers[worker]
        self.touch(TOPOLOGY)

    def remove_manager(self, manager: int) -> None:
        del self.plan.managers[manager]
        self.touch(TOPOLOGY)

    def place_targets(self, mapping: dict[str, str]) -> int:
        """Set the path of every target whose name the mapping knows (Iometer's 'C:' rule too), on every
        worker that uses it; returns how many target entries changed."""
        from app.engine.jobs.targets import lookup_mapping

        placed = 0
        for m in self.plan.managers:
            for w in m.workers:
                for t in w.targets:
                    path = lookup_mapping(t.name, mapping)
                    if path and t.path != path:
                        t.path = path
                        placed += 1
        if placed:
            self.touch(TARGETS)
        return placed

    def place_target(self, manager: int, worker: int, target: int, path: str | None, same_name: bool = True) -> int:
        """Place one target, and with ``same_name`` every target of that name on the manager's other workers
        (one placement for a target the workers share); returns how many entries changed."""
        m = self.plan.managers[manager]
        name = m.workers[worker].targets[target].name
        targets = [t for w in m.workers for t in w.targets if t.name == name] if same_name else \
            [m.workers[worker].targets[target]]
        changed = 0
        for t in targets:
            if t.path != path:
                t.path = path
                changed += 1
        if changed:
            self.touch(TARGETS)
        return changed

    def unique_worker_name(self, manager: Manager, base: str = "Worker") -> str:
        names = {w.name for w in manager.workers}
        n = len(manager.workers) + 1
        while f"{base} {n}" in names:
            n += 1
        return f"{base} {n}"
