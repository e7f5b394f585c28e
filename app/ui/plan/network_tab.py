"""Network Targets: the selected network worker's partners (Iometer's tab of the same name), on fio's TCP engine.

A network worker on manager A with a target on manager B moves data between A and B: the direction is its
access specification's majority (reads: A receives), the receiving manager listens and the sending one
connects to it, at the receiving manager's own address (never a NIC address read from an imported file).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.model.plan import Plan, Target, Worker
from app.model.validation import MIN_NET_PORT
from app.ui.plan.hosts import where_label
from app.ui.plan.network_pairs import connection, partner_of, receives
from app.ui.plan.plan_document import Change, PlanDocument
from app.ui.plan.topology import Selection
from app.ui.plan.worker_page import WorkerPage
from app.ui.widgets import ContentOrEmpty, button, compact_rows, error_label

PROTOCOLS = (("network_tcp", "TCP"), ("network_vi", "VI (no fio engine: kept, not run)"))


class NetworkTargetDialog(QDialog):
    """Choose a network target's partner manager and port (the protocol is TCP)."""

    def __init__(
        self,
        plan: Plan,
        manager: int,
        worker: Worker,
        target: Target | None = None,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.plan, self.manager, self.worker, self.editing = plan, manager, worker, target
        self.setWindowTitle("Edit network target" if target else "Add network target")
        self.setMinimumWidth(460)
        form = QFormLayout(self)
        intro = QLabel(
            f"<b>{worker.name}</b> on <b>{plan.managers[manager].name}</b> moves data to or from a "
            "partner manager over TCP (fio's net engine). The receiving manager listens; the sending "
            "one connects to it at the address this machine reaches it at."
        )
        intro.setWordWrap(True)
        form.addRow(intro)
        self.partner = QComboBox()
        for m in plan.managers:
            self.partner.addItem(f"{m.name} — {where_label(m)}", m.name)
        own = plan.managers[manager].name
        default = (
            target.partner_manager
            if target and target.partner_manager
            else next((m.name for m in plan.managers if m.name != own), own)
        )
        self.partner.setCurrentIndex(max(self.partner.findData(default), 0))
        self.partner.setToolTip(
            "The manager at the other end of the connection (its own manager too: loopback)"
        )
        form.addRow("Partner manager:", self.partner)
        form.addRow("Protocol:", QLabel("TCP"))
        self.address = QLabel()
        self.address.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow("Connection:", self.address)
        self.fixed = QCheckBox("Fixed port")
        self.fixed.setToolTip(
            "Automatic ports are fresh for every step, so a listener left over from an earlier "
            "run never answers; fix a port only when a firewall must let it through."
        )
        self.port = QSpinBox()
        self.port.setRange(MIN_NET_PORT, 65535)
        self.port.setValue(target.port if target and target.port else 18900)
        row = QHBoxLayout()
        row.addWidget(self.fixed)
        row.addWidget(self.port)
        row.addStretch(1)
        form.addRow("Port:", row)
        self.fixed.setChecked(bool(target and target.port))
        self.name = QLineEdit(target.name if target else "")
        self.name.setPlaceholderText("e.g. the partner's interface")
        form.addRow("Target name:", self.name)
        self.error = error_label()
        form.addRow("", self.error)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self._named = bool(target)
        self.name.textEdited.connect(lambda _t: setattr(self, "_named", True))
        self.partner.currentIndexChanged.connect(lambda _i: self._check())
        self.fixed.toggled.connect(lambda _b: self._check())
        self.port.valueChanged.connect(lambda _v: self._check())
        self._check()

    def target(self) -> Target:
        return Target(
            self.name.text().strip() or self._default_name(),
            kind="network",
            partner_manager=self.partner.currentData(),
            port=self.port.value() if self.fixed.isChecked() else None,
        )

    def _default_name(self) -> str:
        return f"{self.partner.currentData()} (TCP)"

    def _check(self) -> None:
        self.port.setEnabled(self.fixed.isChecked())
        if not self._named:
            self.name.setText(self._default_name())
        t = self.target()
        self.address.setText(connection(self.plan, self.manager, self.worker, t))
        msg = ""
        if t.port is not None:
            for m in self.plan.managers:
                for w in m.workers:
                    for other in w.targets:
                        if other.port == t.port and other is not self.editing:
                            msg = f"port {t.port} is already fixed for {m.name} / {w.name}; choose another"
        self.error.setText(msg)
        self.error.setVisible(bool(msg))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not msg)


class NetworkTargetsTab(WorkerPage):
    worker_added = Signal(object)  # Selection of a new network worker, for the Topology to select

    def __init__(self, doc: PlanDocument, parent: QWidget | None = None):
        super().__init__(doc, parent)

        body = QWidget()
        lay = QVBoxLayout(body)
        self.heading = QLabel()
        self.heading.setObjectName("heading")
        lay.addWidget(self.heading)
        settings = QGroupBox("Network worker")
        slay = QVBoxLayout(settings)
        prow = QHBoxLayout()
        prow.addWidget(QLabel("Protocol:"))
        self.protocol = QComboBox()
        for kind, title in PROTOCOLS:
            self.protocol.addItem(title, kind)
        self.protocol.setToolTip(
            "TCP runs on fio's net engine; Iometer's VI workers have no fio engine and are "
            "kept in the plan without running"
        )
        prow.addWidget(self.protocol)
        prow.addStretch(1)
        slay.addLayout(prow)
        self.direction = QLabel()
        self.direction.setWordWrap(True)
        slay.addWidget(self.direction)
        lay.addWidget(settings)

        box = QGroupBox("Network targets of this worker (a partner manager each)")
        blay = QVBoxLayout(box)
        self.table = QTableWidget(0, 4)
        compact_rows(self.table)
        self.table.setHorizontalHeaderLabels(["Target", "Partner manager", "Port", "Connection"])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.doubleClicked.connect(lambda _i: self.edit())
        self.table_stack = ContentOrEmpty(self.table)
        blay.addWidget(self.table_stack, 1)
        row = QHBoxLayout()
        row.addWidget(
            button("Add target…", "Give this worker a partner manager to send to or receive from", self.add)
        )
        row.addWidget(button("Edit…", "Change the selected target's partner manager or port", self.edit))
        row.addWidget(button("Remove", "Remove the selected network target", self.remove))
        row.addStretch(1)
        blay.addLayout(row)
        note = QLabel(
            "The address connected to is the receiving manager's own (its host in the Topology); an "
            "address named in an imported file is shown as the target's name and never contacted. "
            "Results appear like any worker's: the worker on its manager, and Iometer's client worker "
            "[name] on the partner."
        )
        note.setWordWrap(True)
        blay.addWidget(note)
        lay.addWidget(box, 1)

        intro = QWidget()
        ilay = QVBoxLayout(intro)
        self.intro_text = QLabel()
        self.intro_text.setWordWrap(True)
        self.intro_text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        ilay.addStretch(1)
        ilay.addWidget(self.intro_text)
        self.add_worker_button = button(
            "Add network worker", "Add a TCP network worker to the selected manager", self.add_network_worker
        )
        brow = QHBoxLayout()
        brow.addStretch(1)
        brow.addWidget(self.add_worker_button)
        brow.addStretch(1)
        ilay.addLayout(brow)
        ilay.addStretch(2)

        self.stack = ContentOrEmpty(body)
        self.stack.addWidget(intro)
        self.intro = intro
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.stack)
        self.protocol.currentIndexChanged.connect(self._set_protocol)
        doc.replaced.connect(self.refresh)
        doc.changed.connect(lambda _what: self.refresh())
        self.refresh()

    # --- selection and refresh --------------------------------------------------------------
    def refresh(self) -> None:
        w = self.worker()
        if w is None or w.kind == "disk":
            mi = self.sel.manager
            where = (
                self.doc.plan.managers[mi].name if mi is not None and mi < len(self.doc.plan.managers) else ""
            )
            text = (
                f"{w.name} is a disk worker: its targets are on the Disk Targets tab.\n\n"
                if w
                else "Select a network worker in the Topology on the left to see and choose its partners.\n\n"
            )
            text += (
                "A network worker moves data over TCP between its manager and a partner manager (fio's net "
                "engine), as Iometer's Network Targets do."
            )
            self.intro_text.setText(text)
            self.add_worker_button.setEnabled(bool(where))
            self.add_worker_button.setText(
                f"Add network worker to {where}" if where else "Add network worker"
            )
            self.stack.setCurrentWidget(self.intro)
            return
        self.stack.show_content()
        plan = self.doc.plan
        m = plan.managers[self.sel.manager]
        self.heading.setText(f"<b>{w.name}</b> on manager <b>{m.name}</b> — network worker")
        self._loading = True
        self.protocol.setCurrentIndex(max(self.protocol.findData(w.kind), 0))
        self._loading = False
        way = receives(plan, w)
        if w.kind != "network_tcp":
            self.direction.setText(
                "Direction: VI network workers do not run; choose TCP to run this worker on fio."
            )
        elif way is None:
            self.direction.setText(
                "Direction: no access specification assigned yet — assign one on the Access "
                "Specifications tab (mostly reads: this worker receives; otherwise it sends)."
            )
        else:
            spec = next(s for s in w.specs if plan.spec(s) is not None)
            self.direction.setText(
                f"Direction: {'receives from' if way else 'sends to'} its partners — its first access "
                f"specification, {spec!r}, is mostly {'reads' if way else 'writes'} "
                "(one way per connection, as fio's TCP jobs move data)."
            )
        self._fill_table(w)

    def _fill_table(self, w: Worker) -> None:
        plan = self.doc.plan
        row = self.table.currentRow()
        self.table.setRowCount(len(w.targets))
        for i, t in enumerate(w.targets):
            partner = partner_of(plan, self.sel.manager, t)
            cells = [
                t.name,
                f"{partner.name} — {where_label(partner)}",
                str(t.port) if t.port is not None else "auto",
                connection(plan, self.sel.manager, w, t),
            ]
            for c, text in enumerate(cells):
                it = QTableWidgetItem(text)
                it.setToolTip(cells[3])
                self.table.setItem(i, c, it)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        if w.targets:
            self.table_stack.show_content()
            self.table.selectRow(min(max(row, 0), len(w.targets) - 1))
        else:
            self.table_stack.show_empty("No network target yet — Add target… and choose the partner manager.")

    # --- edits ------------------------------------------------------------------------------
    def add_network_worker(self) -> None:
        mi = self.sel.manager
        if mi is None:
            return
        self.worker_added.emit(Selection(mi, self.doc.add_network_worker(mi)))

    def _set_protocol(self, _index: int) -> None:
        w = self.worker()
        kind = self.protocol.currentData()
        if (
            self._loading
            or w is None
            or w.kind == kind
            or self.sel.manager is None
            or self.sel.worker is None
        ):
            return
        self.doc.set_worker_field(self.sel.manager, self.sel.worker, "kind", kind, "Change network protocol")

    def _dialog(self, target: Target | None) -> Target | None:
        w = self.worker()
        if w is None:
            return None
        dlg = NetworkTargetDialog(self.doc.plan, self.sel.manager, w, target, self)
        return dlg.target() if dlg.exec() == QDialog.DialogCode.Accepted else None

    def add(self) -> None:
        w = self.worker()
        t = self._dialog(None)
        if w is not None and t is not None:
            self._edit_targets(f"Add network target {t.name}", lambda targets: targets.append(t))
            self.table.selectRow(len(w.targets) - 1)

    def edit(self) -> None:
        w = self.worker()
        row = self.table.currentRow()
        if w is None or not 0 <= row < len(w.targets):
            return
        t = self._dialog(w.targets[row])
        if t is not None:
            self._edit_targets(f"Change network target {t.name}", lambda targets: targets.__setitem__(row, t))

    def remove(self) -> None:
        w = self.worker()
        row = self.table.currentRow()
        if w is not None and 0 <= row < len(w.targets):
            self._edit_targets(
                f"Remove network target {w.targets[row].name}", lambda targets: targets.pop(row)
            )

    def _edit_targets(self, text: str, change: Callable[[list[Target]], object]) -> None:
        """One undoable edit of the selected worker's target list."""
        mi, wi = self.sel.manager, self.sel.worker
        if mi is None or wi is None:
            return

        def apply(plan: Plan) -> None:
            change(plan.managers[mi].workers[wi].targets)

        self.doc.edit(text, Change.TARGETS, apply)
