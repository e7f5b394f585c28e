"""The open plan and its file, shared by every panel. Panels never change the plan themselves: they call
``edit`` (or one of the topology methods), which makes an undoable command on the document's QUndoStack and
says what changed with a typed ``Change``."""

from __future__ import annotations

import copy
import dataclasses
import platform
from collections.abc import Callable, Iterable
from enum import Enum
from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from app.model import planfile
from app.model.opening import OpenedPlan, is_icf, open_plan
from app.model.plan import LOCAL, FidelityNote, Manager, Plan, Worker

T = TypeVar("T")


class Change(Enum):
    """What changed, so panels refresh only what they show."""

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


def _restore(plan: Plan, snapshot: Plan) -> None:
    """Make ``plan`` (the document's object, which panels share) equal to ``snapshot``, field by field.
    Its managers, workers and specs become fresh copies: panels find them again through their indexes."""
    for f in dataclasses.fields(plan):
        setattr(plan, f.name, copy.deepcopy(getattr(snapshot, f.name)))


class PlanEdit(QUndoCommand):
    """One edit of the plan as two snapshots (before, after). Plans are small (a few kB even with 64 hosts),
    and a snapshot undoes every kind of edit the same way, including renames that reach every worker."""

    MERGE_ID = 1  # edits with the same merge key (typing in one field) become one undo step

    def __init__(
        self,
        doc: PlanDocument,
        text: str,
        changes: tuple[Change, ...],
        before: Plan,
        after: Plan,
        merge_key: str | None,
    ):
        super().__init__(text)
        self.doc = doc
        self.changes = changes
        self.before = before
        self.after = after
        self.merge_key = merge_key
        self._done = True  # applied already when pushed: the first redo() does nothing

    def redo(self) -> None:
        if self._done:
            self._done = False
            return
        _restore(self.doc.plan, self.after)
        self.doc.announce(self.changes)

    def undo(self) -> None:
        _restore(self.doc.plan, self.before)
        self.doc.announce(self.changes)

    def id(self) -> int:
        return self.MERGE_ID if self.merge_key else -1

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 (Qt's name)
        if not isinstance(other, PlanEdit) or other.merge_key != self.merge_key:
            return False
        self.after = other.after
        self.changes = tuple(dict.fromkeys(self.changes + other.changes))
        return True


class PlanDocument(QObject):
    replaced = Signal()  # a different plan object: rebuild everything
    changed = Signal(object)  # a Change: an edit, or its undo or redo
    dirty_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.plan: Plan = new_plan()
        self.path: Path | None = None  # the plan file it saves to (None for new and .icf plans)
        self.opened_from: Path | None = None
        self.warnings: list[str] = []
        self.notes: list[FidelityNote] = []
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)

    def _on_clean_changed(self, clean: bool) -> None:
        self.dirty_changed.emit(not clean)

    @property
    def dirty(self) -> bool:
        """Changed since it was opened or saved: undoing back to the saved state makes it clean again."""
        return not self.undo_stack.isClean()

    # --- edits --------------------------------------------------------------------------------
    def edit(
        self,
        text: str,
        changes: Change | Iterable[Change],
        apply: Callable[[Plan], T],
        merge_key: str | None = None,
    ) -> T:
        """Change the plan with ``apply(plan)`` as one undoable step named ``text`` (Edit > Undo <text>);
        returns what ``apply`` returns. An edit that changes nothing leaves no step. Consecutive edits with
        the same ``merge_key`` (keystrokes in one field) are one step."""
        kinds = (changes,) if isinstance(changes, Change) else tuple(changes)
        before = copy.deepcopy(self.plan)
        result = apply(self.plan)
        if self.plan != before:
            cmd = PlanEdit(self, text, kinds, before, copy.deepcopy(self.plan), merge_key)
            self.undo_stack.push(cmd)  # (merged into the previous step when the keys match)
            self.announce(kinds)
        return result

    def announce(self, changes: Iterable[Change]) -> None:
        for what in changes:
            self.changed.emit(what)

    def mark_saved(self) -> None:
        """The plan as it is now is where it starts: nothing to save, nothing to undo (e.g. an example just
        placed on this machine)."""
        self.undo_stack.clear()

    def replace(
        self,
        plan: Plan,
        path: Path | None = None,
        opened_from: Path | None = None,
        warnings: list[str] | None = None,
        notes: list[FidelityNote] | None = None,
    ) -> None:
        """Another plan: its history starts here (nothing to undo), and it is clean."""
        self.plan = plan
        self.path = path
        self.opened_from = opened_from
        self.warnings = list(warnings or [])
        self.notes = list(notes or [])
        self.undo_stack.clear()  # clean again (cleanChanged says so when it was not)
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
        self.undo_stack.setClean()
        return target

    @property
    def title(self) -> str:
        where = self.path or self.opened_from
        return where.name if where else self.plan.name

    # --- topology edits: each is one undoable step; indexes say where the new item is ---------
    def default_specs(self) -> list[str]:
        """Iometer gives a new worker every spec whose default assignment is ALL (or DISK)."""
        return [s.name for s in self.plan.specs if s.default_assignment in ("ALL", "DISK")]

    def add_manager(self, name: str, host: str) -> int:
        """A manager with one worker; returns its index."""

        def apply(plan: Plan) -> int:
            plan.managers.append(
                Manager(name, host, workers=[Worker("Worker 1", specs=self.default_specs())])
            )
            return len(plan.managers) - 1

        return self.edit(f"Add manager {name}", Change.TOPOLOGY, apply)

    def set_host(self, manager: int, host: str) -> None:
        def apply(plan: Plan) -> None:
            plan.managers[manager].host = host

        self.edit(f"Set host of {self.plan.managers[manager].name}", Change.TOPOLOGY, apply)

    def add_worker(self, manager: int) -> int:
        """A new worker on the manager at ``manager``; returns its index."""

        def apply(plan: Plan) -> int:
            m = plan.managers[manager]
            m.workers.append(Worker(self.unique_worker_name(m), specs=self.default_specs()))
            return len(m.workers) - 1

        return self.edit("Add worker", Change.TOPOLOGY, apply)

    def add_network_worker(self, manager: int) -> int:
        """A TCP network worker (Iometer's Start Network Worker) with the specs assigned by default to network
        workers (ALL or NET); its partners are chosen on the Network Targets tab. Returns its index."""

        def apply(plan: Plan) -> int:
            m = plan.managers[manager]
            specs = [s.name for s in plan.specs if s.default_assignment in ("ALL", "NET")]
            m.workers.append(Worker(self.unique_worker_name(m, "Network"), kind="network_tcp", specs=specs))
            return len(m.workers) - 1

        return self.edit("Add network worker", Change.TOPOLOGY, apply)

    def duplicate_worker(self, manager: int, worker: int) -> int:
        """A copy (targets and specs too) right after the original; returns its index."""

        def apply(plan: Plan) -> int:
            m = plan.managers[manager]
            w = copy.deepcopy(m.workers[worker])
            w.name = self.unique_worker_name(m)
            m.workers.insert(worker + 1, w)
            return worker + 1

        return self.edit(
            f"Duplicate {self.plan.managers[manager].workers[worker].name}", Change.TOPOLOGY, apply
        )

    def remove_worker(self, manager: int, worker: int) -> None:
        def apply(plan: Plan) -> None:
            del plan.managers[manager].workers[worker]

        self.edit(f"Remove {self.plan.managers[manager].workers[worker].name}", Change.TOPOLOGY, apply)

    def remove_manager(self, manager: int) -> None:
        def apply(plan: Plan) -> None:
            del plan.managers[manager]

        self.edit(f"Remove manager {self.plan.managers[manager].name}", Change.TOPOLOGY, apply)

    def set_worker_field(
        self, manager: int, worker: int, attr: str, value: object, text: str, change: Change = Change.TARGETS
    ) -> None:
        """One setting of one worker (queue depth, disk size, protocol…); typing in one field is one step."""

        def apply(plan: Plan) -> None:
            setattr(plan.managers[manager].workers[worker], attr, value)

        self.edit(text, change, apply, merge_key=f"worker:{manager}:{worker}:{attr}")

    def place_targets(self, mapping: dict[str, str]) -> int:
        """Set the path of every target whose name the mapping knows (Iometer's 'C:' rule too), on every
        worker that uses it; returns how many target entries changed."""
        from app.engine.jobs.targets import lookup_mapping

        def apply(plan: Plan) -> int:
            placed = 0
            for m in plan.managers:
                for w in m.workers:
                    for t in w.targets:
                        path = lookup_mapping(t.name, mapping)
                        if path and t.path != path:
                            t.path = path
                            placed += 1
            return placed

        return self.edit("Place targets", Change.TARGETS, apply)

    def place_target(
        self, manager: int, worker: int, target: int, path: str | None, same_name: bool = True
    ) -> int:
        """Place one target, and with ``same_name`` every target of that name on the manager's other workers
        (one placement for a target the workers share); returns how many entries changed."""

        def apply(plan: Plan) -> int:
            m = plan.managers[manager]
            name = m.workers[worker].targets[target].name
            targets = (
                [t for w in m.workers for t in w.targets if t.name == name]
                if same_name
                else [m.workers[worker].targets[target]]
            )
            changed = 0
            for t in targets:
                if t.path != path:
                    t.path = path
                    changed += 1
            return changed

        return self.edit(
            f"Set path of {self.plan.managers[manager].workers[worker].targets[target].name}",
            Change.TARGETS,
            apply,
        )

    def unique_worker_name(self, manager: Manager, base: str = "Worker") -> str:
        names = {w.name for w in manager.workers}
        n = len(manager.workers) + 1
        while f"{base} {n}" in names:
            n += 1
        return f"{base} {n}"
