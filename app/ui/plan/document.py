"""The open plan and its file, shared by every panel; panels edit the plan and call ``touch``."""

from __future__ import annotations

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

    def open(self, path: str | Path) -> OpenedPlan:
        """Open a .icf or plan file; raises app.model.opening.PlanOpenError (message for the user)."""
        path = Path(path)
        opened = open_plan(path)
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

    def unique_worker_name(self, manager: Manager, base: str = "Worker") -> str:
        names = {w.name for w in manager.workers}
        n = len(manager.workers) + 1
        while f"{base} {n}" in names:
            n += 1
        return f"{base} {n}"
