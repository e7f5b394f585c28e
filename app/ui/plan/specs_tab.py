"""Access Specifications: the global library and the selected worker's ordered assignment."""

from __future__ import annotations

import copy

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.model.plan import IDLE, AccessSpec, Plan, SpecLine, Worker
from app.model.spec_words import line_summary, spec_summary
from app.model.validation import Problem, validate
from app.ui.confirm import confirm
from app.ui.plan.library import (
    BUILTIN,
    ORIGIN_TITLES,
    PLAN,
    USER,
    SpecLibrary,
    ensure_in_plan,
    rename_in_plan,
    unique_name,
)
from app.ui.plan.plan_document import Change, PlanDocument
from app.ui.plan.spec_editor import SpecEditor
from app.ui.plan.topology import Selection
from app.ui.widgets import ContentOrEmpty, button

ROLE = Qt.ItemDataRole.UserRole


def spec_tooltip(spec: AccessSpec) -> str:
    rows = [f"{i + 1}. {ln.of_size}% of size: {line_summary(ln)}" for i, ln in enumerate(spec.lines)]
    return f"{spec.name}\n" + "\n".join(rows) + f"\nDefault assignment: {spec.default_assignment}"


def spec_errors(plan: Plan) -> dict[str, list[Problem]]:
    """The plan's errors per access specification (keyed by its name)."""
    out: dict[str, list[Problem]] = {}
    for p in validate(plan):
        if p.severity == "error" and p.path.startswith("specs["):
            i = int(p.path[6 : p.path.index("]")])
            if i < len(plan.specs):
                out.setdefault(plan.specs[i].name, []).append(p)
    return out


class SpecsTab(QWidget):
    def __init__(self, doc: PlanDocument, library: SpecLibrary, parent: QWidget | None = None):
        super().__init__(parent)
        self.doc = doc
        self.library = library
        self.sel = Selection()

        lay = QHBoxLayout(self)
        glob = QGroupBox("Global Access Specifications")
        glay = QVBoxLayout(glob)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Name", "Lines (size, reads, random, alignment)"])
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.tree.header().setStretchLastSection(True)
        self.tree.setColumnWidth(0, 290)
        self.tree.setMinimumWidth(240)
        self.tree.itemDoubleClicked.connect(lambda *_: self.assign())
        glay.addWidget(self.tree, 1)
        row = QGridLayout()
        row.addWidget(button("New…", "Define a new access specification in this plan", self.new_spec), 0, 0)
        self.edit_button = button("Edit…", "Edit the selected spec (built-ins: edits a copy)", self.edit_spec)
        row.addWidget(self.edit_button, 0, 1)
        row.addWidget(
            button("Copy…", "Make a new spec from the selected one (Edit copy)", self.copy_spec), 0, 2
        )
        row.addWidget(
            button("Delete", "Delete the selected spec from this plan or from My library", self.delete_spec),
            1,
            0,
        )
        row.addWidget(
            button(
                "To My library",
                "Save the selected spec in My library, for all your plans",
                self.save_to_library,
            ),
            1,
            1,
            1,
            2,
        )
        row.setColumnStretch(3, 1)
        glay.addLayout(row)
        lay.addWidget(glob, 3)

        mid = QVBoxLayout()
        mid.addStretch(1)
        mid.addWidget(
            button(
                "Add  ›",
                "Assign the selected spec to the selected worker (or to every worker of "
                "the selected manager / of all managers)",
                self.assign,
            )
        )
        mid.addWidget(button("‹  Remove", "Remove the selected assignment", self.unassign))
        mid.addWidget(
            button(
                "Add Idle",
                "Idle: this worker does no I/O while others run this position",
                lambda: self.assign(idle=True),
            )
        )
        mid.addSpacing(16)
        mid.addWidget(button("Move up", "Run the selected spec earlier", lambda: self.move(-1)))
        mid.addWidget(button("Move down", "Run the selected spec later", lambda: self.move(1)))
        mid.addStretch(2)
        lay.addLayout(mid)

        assigned = QGroupBox("Assigned Access Specifications")
        alay = QVBoxLayout(assigned)
        self.assigned_title = QLabel()
        alay.addWidget(self.assigned_title)
        self.assigned = QListWidget()
        self.assigned.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.assigned_stack = ContentOrEmpty(self.assigned)
        alay.addWidget(self.assigned_stack, 1)
        hint = QLabel("Specs run in this order, one test per position; workers with shorter lists sit idle.")
        hint.setWordWrap(True)
        alay.addWidget(hint)
        lay.addWidget(assigned, 2)

        doc.replaced.connect(self.refresh)
        doc.changed.connect(
            lambda what: (
                self.refresh() if what in (Change.SPECS, Change.ASSIGNMENT, Change.TOPOLOGY) else None
            )
        )
        self.refresh()

    # --- view -------------------------------------------------------------------------------
    def set_selection(self, sel: Selection) -> None:
        self.sel = sel
        self._fill_assigned()

    def refresh(self) -> None:
        self._fill_tree()
        self._fill_assigned()

    def _fill_tree(self) -> None:
        current = self.selected_entry()
        self.tree.clear()
        groups: dict[str, QTreeWidgetItem] = {}
        for origin in (PLAN, USER, BUILTIN):
            g = QTreeWidgetItem(self.tree, [ORIGIN_TITLES[origin]])
            g.setFlags(Qt.ItemFlag.ItemIsEnabled)
            f = g.font(0)
            f.setBold(True)
            g.setFont(0, f)
            groups[origin] = g
        wrong = spec_errors(self.doc.plan)
        for entry in self.library.entries(self.doc.plan):
            it = QTreeWidgetItem(groups[entry.origin], [entry.spec.name, spec_summary(entry.spec)])
            it.setData(0, ROLE, (entry.origin, entry.spec.name))
            it.setToolTip(0, spec_tooltip(entry.spec))
            it.setToolTip(1, spec_tooltip(entry.spec))
            errors = wrong.get(entry.spec.name, []) if entry.origin == PLAN else []
            if errors:  # flagged where the user fixes it (Edit…), with what is wrong
                for col in (0, 1):
                    it.setForeground(col, QColor(Qt.GlobalColor.red))
                    it.setToolTip(
                        col,
                        "Errors (Start waits until they are fixed):\n"
                        + "\n".join(f"\u2022 {p}" for p in errors),
                    )
            if current == (entry.origin, entry.spec.name):
                self.tree.setCurrentItem(it)
        for origin, g in groups.items():
            if g.childCount() == 0:
                empty = {PLAN: "(none yet — assign or create one)", USER: "(empty — use To My library)"}
                hint = QTreeWidgetItem(g, [empty.get(origin, "")])
                hint.setFlags(Qt.ItemFlag.NoItemFlags)
            g.setExpanded(origin != BUILTIN or not self.doc.plan.specs)

    def _workers(self, plan: Plan | None = None) -> list[Worker]:
        """The selected workers of ``plan`` (the document's): all, a manager's, or one."""
        plan = plan or self.doc.plan
        s = self.sel
        if s.manager is None:
            return [w for m in plan.managers for w in m.workers]
        if s.manager >= len(plan.managers):
            return []
        m = plan.managers[s.manager]
        if s.worker is None:
            return list(m.workers)
        return [m.workers[s.worker]] if s.worker < len(m.workers) else []

    def worker(self) -> Worker | None:
        ws = self._workers()
        return ws[0] if self.sel.is_worker and ws else None

    def _fill_assigned(self) -> None:
        w = self.worker()
        self.assigned.clear()
        if w is None:
            what = "All Managers" if self.sel.is_all else "this manager"
            self.assigned_title.setText("")
            self.assigned_stack.show_empty(
                "Select a worker in the Topology to see its assigned access specifications.\n\n"
                f"With {what} selected, Add assigns the spec to every one of its workers."
            )
            return
        m = self.doc.plan.managers[self.sel.manager]
        self.assigned_title.setText(f"<b>{w.name}</b> on <b>{m.name}</b>")
        if not w.specs:
            self.assigned_stack.show_empty(
                "No access specifications assigned — pick one on the left and press Add (or double-click it)."
            )
            return
        self.assigned_stack.show_content()
        wrong = spec_errors(self.doc.plan)
        for i, name in enumerate(w.specs):
            spec = self.doc.plan.spec(name)
            it = QListWidgetItem(f"{i + 1}. {name}")
            if name.casefold() == IDLE.casefold():
                it.setToolTip("Idle: no I/O from this worker at this position")
            elif spec is None:
                it.setForeground(Qt.GlobalColor.red)
                it.setToolTip(f"{name!r} is not defined in this plan; remove it or define it")
            elif spec.name in wrong:  # marked here too: this is what Start refuses
                it.setForeground(Qt.GlobalColor.red)
                it.setToolTip(
                    "Errors (Start waits until they are fixed):\n"
                    + "\n".join(f"\u2022 {p}" for p in wrong[spec.name])
                )
            else:
                it.setToolTip(spec_tooltip(spec))
            self.assigned.addItem(it)

    def selected_entry(self) -> tuple[str, str] | None:
        it = self.tree.currentItem()
        return it.data(0, ROLE) if it is not None and it.data(0, ROLE) else None

    def _selected_spec(self) -> tuple[str, AccessSpec] | None:
        entry = self.selected_entry()
        if entry is None:
            return None
        spec = self.library.find(entry[0], entry[1], self.doc.plan)
        return (entry[0], spec) if spec else None

    # --- assignment -------------------------------------------------------------------------
    def assign(self, idle: bool = False) -> None:
        workers = self._workers()
        if not workers:
            QMessageBox.information(self, "No worker", "Add a worker first (Edit > Add worker).")
            return
        spec: AccessSpec | None = None
        if not idle:
            chosen = self._selected_spec()
            if chosen is None:
                QMessageBox.information(
                    self, "Choose a spec", "Select an access specification on the left first."
                )
                return
            spec = chosen[1]

        def apply(plan: Plan) -> None:
            name = (
                ensure_in_plan(plan, spec).name if spec is not None else IDLE
            )  # (a library spec: copied in)
            for w in self._workers(plan):
                w.specs.append(name)

        self.doc.edit(
            f"Assign {spec.name if spec is not None else IDLE}", (Change.SPECS, Change.ASSIGNMENT), apply
        )
        if self.assigned.count():
            self.assigned.setCurrentRow(self.assigned.count() - 1)

    def unassign(self) -> None:
        w = self.worker()
        row = self.assigned.currentRow()
        if w is not None and 0 <= row < len(w.specs):

            def apply(plan: Plan) -> None:
                del self._workers(plan)[0].specs[row]

            self.doc.edit(f"Unassign {w.specs[row]}", Change.ASSIGNMENT, apply)
            if self.assigned.count():
                self.assigned.setCurrentRow(min(row, self.assigned.count() - 1))

    def move(self, delta: int) -> None:
        w = self.worker()
        row = self.assigned.currentRow()
        new = row + delta
        if w is None or not (0 <= row < len(w.specs) and 0 <= new < len(w.specs)):
            return

        def apply(plan: Plan) -> None:
            specs = self._workers(plan)[0].specs
            specs[row], specs[new] = specs[new], specs[row]

        self.doc.edit(f"Move {w.specs[row]} {'up' if delta < 0 else 'down'}", Change.ASSIGNMENT, apply)
        self.assigned.setCurrentRow(new)

    # --- library edits ----------------------------------------------------------------------
    def _taken(self, origin: str, except_name: str | None = None) -> set[str]:
        pool = self.doc.plan.specs if origin == PLAN else self.library.user
        return {s.name for s in pool if except_name is None or s.name.casefold() != except_name.casefold()}

    def open_editor(
        self, spec: AccessSpec, origin: str, title: str, except_name: str | None = None
    ) -> AccessSpec | None:
        dlg = SpecEditor(spec, self._taken(origin, except_name), title, self)
        return dlg.result_spec() if dlg.exec() == QDialog.DialogCode.Accepted else None

    def new_spec(self) -> None:
        spec = AccessSpec(unique_name(self.doc.plan, "New spec"), [SpecLine(align=2048)])
        result = self.open_editor(spec, PLAN, "New Access Specification")
        if result:
            self.doc.edit(f"New spec {result.name}", Change.SPECS, lambda plan: plan.specs.append(result))

    def edit_spec(self) -> None:
        chosen = self._selected_spec()
        if chosen is None:
            return
        origin, spec = chosen
        if origin == BUILTIN:
            self.copy_spec()
            return
        result = self.open_editor(spec, origin, f"Edit {spec.name}", except_name=spec.name)
        if result is None:
            return
        if origin == PLAN:
            i = self.doc.plan.specs.index(spec)

            def apply(plan: Plan) -> None:
                plan.specs[i] = result
                if result.name != spec.name:
                    rename_in_plan(plan, spec.name, result.name)

            self.doc.edit(f"Edit spec {result.name}", (Change.SPECS, Change.ASSIGNMENT), apply)
        else:
            self.library.save_user(result, replacing=spec.name)
            self.refresh()

    def copy_spec(self) -> None:
        chosen = self._selected_spec()
        if chosen is None:
            return
        spec = copy.deepcopy(chosen[1])
        spec.name = unique_name(self.doc.plan, f"{spec.name} (copy)")
        result = self.open_editor(spec, PLAN, "New Access Specification (copy)")
        if result:
            self.doc.edit(f"Copy spec as {result.name}", Change.SPECS, lambda plan: plan.specs.append(result))

    def delete_spec(self) -> None:
        chosen = self._selected_spec()
        if chosen is None:
            return
        origin, spec = chosen
        if origin == BUILTIN:
            QMessageBox.information(self, "Built-in spec", "Iometer's built-in specs cannot be deleted.")
            return
        if origin == USER:
            self.library.remove_user(spec.name)
            self.refresh()
            return
        users = [
            f"{m.name}/{w.name}"
            for m in self.doc.plan.managers
            for w in m.workers
            if any(s.casefold() == spec.name.casefold() for s in w.specs)
        ]
        if users and not confirm(
            self,
            "Delete spec",
            f"{spec.name!r} is assigned to {', '.join(users)}. Delete it and remove those assignments?",
            "Delete and unassign",
        ):
            return
        i = self.doc.plan.specs.index(spec)

        def apply(plan: Plan) -> None:
            for m in plan.managers:
                for w in m.workers:
                    w.specs = [s for s in w.specs if s.casefold() != spec.name.casefold()]
            del plan.specs[i]

        self.doc.edit(f"Delete spec {spec.name}", (Change.SPECS, Change.ASSIGNMENT), apply)

    def save_to_library(self) -> None:
        chosen = self._selected_spec()
        if chosen is None:
            return
        self.library.save_user(chosen[1])
        self.refresh()
