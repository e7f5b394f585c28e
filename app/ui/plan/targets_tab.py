"""Disk Targets: the selected worker's targets (test files or raw disks) and its disk settings."""

from __future__ import annotations

import contextlib
import os
import platform
import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QRegularExpressionValidator
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.engine.devices import disks as disk_list
from app.engine.jobs.jobfile import DEFAULT_FILE_SIZE, target_geometry, target_region
from app.engine.jobs.placement import place_local
from app.engine.jobs.targets import (
    DEVICE_SECTOR,
    FILE_SECTOR,
    SECTOR_RULE,
    ResolvedTarget,
    TargetError,
    is_device_path,
    resolve,
)
from app.model.plan import DATA_PATTERNS, LOCAL, Target, Worker
from app.model.units import format_bytes, parse_size
from app.model.validation import MAX_QUEUE_DEPTH
from app.ui.confirm import confirm
from app.ui.plan.place_target import PlaceTargetDialog
from app.ui.plan.plan_document import Change, PlanDocument
from app.ui.plan.worker_page import WorkerPage
from app.ui.widgets import ContentOrEmpty, button, compact_rows, error_label

# a worker setting's name in Edit > Undo "Change …"
SETTING_NAMES = {
    "queue_depth": "# of outstanding I/Os",
    "max_size": "maximum disk size",
    "start_sector": "starting disk sector",
    "data_pattern": "write data pattern",
}
PATTERN_TITLES = ("Repeating bytes", "Pseudo random", "Full random")
_DIGITS = QRegularExpressionValidator(r"\d{0,18}")

TIPS = {
    "queue_depth": "# of Outstanding I/Os: how many I/Os this worker keeps in flight on EACH of its targets "
    "(fio iodepth per target job).",
    "max_size": "Maximum Disk Size in sectors: how much of each target is used. 0 = the whole disk, or an "
    f"existing test file's own size; a new test file then gets {format_bytes(DEFAULT_FILE_SIZE)} (fio needs a size). "
    "A sector is the raw disk's logical sector, or for a file its file system's block (usually 4096 bytes).",
    "start_sector": "Starting Disk Sector: I/O starts this many sectors into each target (fio offset).",
    "data_pattern": "Write I/O Data Pattern: repeating bytes (compress well), pseudo random (reused random "
    "buffers) or full random (new random data for every write).",
}


def _os_of(doc: PlanDocument, mi: int, os_by_manager: dict[str, str]) -> str:
    m = doc.plan.managers[mi]
    if m.host == LOCAL:
        return platform.system()
    return os_by_manager.get(m.name, "")


def sector_of(target: Target, os_name: str, local: bool = True) -> int:
    """Iometer's sector of a target on its manager: on this machine the object's own (the run's rule,
    ``jobfile.target_geometry``), elsewhere what its path says. Raises TargetError."""
    where = resolve(target, os_name)
    placed = None
    if local and os_name == platform.system():
        with contextlib.suppress(TargetError):
            placed = place_local(where.path)
    return target_geometry(where, placed, os_name).sector


def target_state(target: Target, worker: Worker, os_name: str) -> tuple[str, str, bool]:
    """(kind, size/state text, problem?) for the targets table."""
    if target.kind == "network":
        return "network", "a network target: see the Network Targets tab", False
    if not os_name:
        return (
            "raw disk" if is_device_path(target.path or target.name) else "test file",
            "host OS unknown until the manager is probed",
            False,
        )
    try:
        where = resolve(target, os_name)
        # on this machine: what fio will open (a link to a device is a device); the engine's rules
        placed = place_local(where.path) if os_name == platform.system() else None
    except TargetError as e:
        why = re.split(r"[;,] (?:on this \w+ manager )?map it", str(e))[
            0
        ]  # the GUI's way to map it: Set path…
        return "?", f"not placed on this {os_name} manager — use Set path… ({why})", True
    if placed is not None and placed.is_device and not where.is_device:
        where = ResolvedTarget(placed.path, True, where.sector_size)
    size, offset, _geo = target_region(worker, where, placed, os_name)  # the object's sectors, as the run
    if where.is_device:
        used = f"; in use: {'; '.join(placed.in_use)}" if placed is not None and placed.in_use else ""
        return (
            "raw disk",
            (f"first {format_bytes(size)}" if size else "whole disk") + f" — {where.path}{used}",
            False,
        )
    if placed is not None and placed.exists and placed.size is not None:
        note = f"exists, {format_bytes(placed.size)}"
        need = (size or 0) + offset
        if placed.size < need:
            note += f"; fio extends it to {format_bytes(need)}"
        return "test file", f"{note} — {placed.path}", False
    if placed is not None and placed.missing_folder:
        return "test file", f"the folder {placed.missing_folder} does not exist — {where.path}", True
    return (
        "test file",
        f"created when the run starts ({format_bytes(size or DEFAULT_FILE_SIZE)}) — {where.path}",
        False,
    )


class AddTestFileDialog(QDialog):
    """Path and size of a test file target; the size is the worker's Maximum Disk Size."""

    def __init__(
        self,
        worker: Worker,
        parent: QWidget | None = None,
        remote_host: str | None = None,
        remote_os: str = "",
    ):
        """``remote_host``: the worker's manager runs there; its path is on that host, typed (this machine's
        home folder and file dialog would name a place on the wrong machine)."""
        super().__init__(parent)
        self.remote_host = remote_host
        self.os_name = (
            remote_os if remote_host else platform.system()
        )  # "": the remote host is not probed yet
        self.setWindowTitle("Add test file")
        self.setMinimumWidth(480)
        form = QFormLayout(self)
        if remote_host:
            example = "D:\\iobw.tst" if remote_os.lower().startswith("win") else "/data/iobw.tst"
            self.path = QLineEdit()
            self.path.setPlaceholderText(f"a path on {remote_host}, e.g. {example}")
        else:
            self.path = QLineEdit(str(Path.home() / "iobw.tst") if os.name != "nt" else "C:\\iobw.tst")
        self.browse = button("Browse…", "Choose where the test file goes", self._browse)
        self.browse.setVisible(not remote_host)  # a file dialog shows this machine's files only
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(self.browse)
        form.addRow(f"Test file on {remote_host}:" if remote_host else "Test file:", row)
        current = worker.max_size * self.sector_size()
        self.size = QLineEdit(
            format_bytes(current, exact=True) if current else format_bytes(DEFAULT_FILE_SIZE)
        )
        self.size.setToolTip(
            "Size of the test file, e.g. 1 GiB, 512M, 4096k. It is the worker's Maximum Disk "
            "Size, so it applies to all of this worker's targets. Created by fio if missing."
        )
        form.addRow("Size:", self.size)
        self.sectors = QLabel()  # the size as the worker keeps it: Iometer's Maximum Disk Size, in sectors
        self.sectors.setWordWrap(True)
        self.sectors.setToolTip(SECTOR_RULE)
        form.addRow("", self.sectors)
        self.error = error_label()
        form.addRow("", self.error)
        hint = QLabel("The file is created (filled with data) when the run starts if it does not exist.")
        hint.setWordWrap(True)
        form.addRow(hint)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self.path.textChanged.connect(self._check)
        self.size.textChanged.connect(self._check)
        self._check()

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Test file", self.path.text(), options=QFileDialog.Option.DontConfirmOverwrite
        )
        if path:
            self.path.setText(path)

    def size_bytes(self) -> int | None:
        return parse_size(self.size.text())

    def sector_size(self) -> int:
        """Bytes per sector of the typed path on its manager: the engine's rule (engine/jobs/targets.py), the one the
        run, the targets table and the Maximum Disk Size note use, so a size typed here is the size fio gets."""
        p = self.path.text().strip()
        if not p:
            return FILE_SECTOR if not self.os_name.lower().startswith("win") else DEVICE_SECTOR
        try:
            return sector_of(
                Target(p, p), self.os_name, not self.remote_host
            )  # "" (not probed yet): by the path's spelling
        except TargetError:
            return FILE_SECTOR

    def max_size_sectors(self) -> int:
        """The worker's Maximum Disk Size for the size typed (whole sectors)."""
        return (self.size_bytes() or DEFAULT_FILE_SIZE) // self.sector_size()

    def _check(self) -> None:
        msg = ""
        size = self.size_bytes()
        p = self.path.text().strip()
        if not p:
            msg = "Enter a path for the test file."
        elif not self.remote_host and Path(p).is_dir():  # (a remote path cannot be looked at from here)
            msg = f"{p} is a folder; name a file inside it, e.g. {Path(p) / 'iobw.tst'}"
        elif size is None or size <= 0:
            msg = "Size must be a positive size such as 1 GiB, 512M or 4096."
        elif size % (sector := self.sector_size()):
            msg = f"Size must be a multiple of {sector} bytes (the sector of this file on its manager)."
        sector = self.sector_size()
        self.sectors.setText(
            ""
            if msg or size is None
            else f"Kept as Maximum Disk Size = {size // sector:,} sectors of {sector} bytes "
            f"(for every target of this worker)"
        )
        self.sectors.setVisible(bool(self.sectors.text()))
        self.error.setText(msg)
        self.error.setVisible(bool(msg))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not msg)


class TargetsTab(WorkerPage):
    def __init__(self, doc: PlanDocument, parent: QWidget | None = None):
        super().__init__(doc, parent)
        self.os_by_manager: dict[str, str] = {}
        self.disk_os = platform.system()

        body = QWidget()
        lay = QVBoxLayout(body)
        self.heading = QLabel()
        self.heading.setObjectName("heading")
        lay.addWidget(self.heading)

        settings = QGroupBox("Worker disk settings")
        form = QFormLayout(settings)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.qd = QSpinBox()
        self.qd.setRange(1, MAX_QUEUE_DEPTH)
        self.qd.setSuffix(" per target")
        self.qd.setToolTip(TIPS["queue_depth"])
        form.addRow("# of Outstanding I/Os:", self.qd)
        self.max_size = QLineEdit()
        self.max_size.setMaximumWidth(160)
        self.max_size.setMinimumWidth(110)
        self.max_size.setValidator(_DIGITS)
        self.max_size.setToolTip(TIPS["max_size"])
        self.max_size_note = QLabel()
        row = QHBoxLayout()
        row.addWidget(self.max_size)
        row.addWidget(QLabel("sectors"))
        row.addWidget(self.max_size_note, 1)
        form.addRow("Maximum Disk Size:", row)
        self.start = QLineEdit()
        self.start.setMaximumWidth(160)
        self.start.setValidator(_DIGITS)
        self.start.setToolTip(TIPS["start_sector"])
        row = QHBoxLayout()
        row.addWidget(self.start)
        row.addWidget(QLabel("sectors"))
        row.addStretch(1)
        form.addRow("Starting Disk Sector:", row)
        self.pattern = QComboBox()
        self.pattern.addItems(PATTERN_TITLES[: len(DATA_PATTERNS)])
        self.pattern.setToolTip(TIPS["data_pattern"])
        form.addRow("Write I/O Data Pattern:", self.pattern)
        lay.addWidget(settings)

        assigned = QGroupBox("Targets of this worker (run in this order; cycling uses the first N)")
        alay = QVBoxLayout(assigned)
        self.table = QTableWidget(0, 3)
        compact_rows(self.table)
        self.table.setHorizontalHeaderLabels(["Target", "Kind", "Size and state"])
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table_stack = ContentOrEmpty(self.table)
        alay.addWidget(self.table_stack, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(
            button("Add test file…", "Add a test file target (created if missing)", self.add_test_file)
        )
        buttons.addWidget(
            button(
                "Add path…",
                "Add a file or device by typing its path (e.g. /dev/sdb, \\\\.\\PhysicalDrive1)",
                self.add_path,
            )
        )
        buttons.addWidget(
            button(
                "Set path…",
                "Place the selected target at a file or device (for imported "
                "targets such as C: on a Linux manager)",
                self.set_path,
            )
        )
        buttons.addWidget(button("Remove", "Remove the selected target from this worker", self.remove))
        buttons.addWidget(
            button("Move up", "Earlier targets are used first when cycling", lambda: self.move(-1))
        )
        last_button = button("Move down", "Later targets are used last when cycling", lambda: self.move(1))
        buttons.addWidget(last_button)
        buttons.addStretch(1)
        alay.insertLayout(
            0, buttons
        )  # above the list: below it, it moved with the list's and the disks' height
        lay.addWidget(assigned, 2)

        raw = QGroupBox("Physical disks of this manager")
        rlay = QVBoxLayout(raw)
        self.disks = QTreeWidget()
        self.disks.setHeaderLabels(["Device", "Size", "Model", "State"])
        self.disks.setRootIsDecorated(False)
        self.disks.header().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.disks_stack = ContentOrEmpty(self.disks)
        rlay.addWidget(self.disks_stack, 1)
        dbuttons = QHBoxLayout()
        self.add_disk_button = button(
            "Add disk", "Use the selected whole disk as a raw target (writes destroy its data)", self.add_disk
        )
        dbuttons.addWidget(self.add_disk_button)
        dbuttons.addWidget(button("Refresh", "List the disks again", self.refresh_disks))
        dbuttons.addStretch(1)
        rlay.addLayout(dbuttons)
        note = QLabel(
            "Disks that are mounted, partitioned or part of a volume are greyed out: writing to them "
            "would destroy data in use. Use a test file on their file system instead."
        )
        note.setWordWrap(True)
        rlay.addWidget(note)
        lay.addWidget(raw, 1)

        self.stack = ContentOrEmpty(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.stack)
        QWidget.setTabOrder(last_button, self.table)  # Tab walks the buttons above the list, then the list

        self.qd.valueChanged.connect(lambda v: self._set_worker("queue_depth", v))
        self.max_size.textEdited.connect(lambda t: self._set_worker("max_size", int(t or 0)))
        self.start.textEdited.connect(lambda t: self._set_worker("start_sector", int(t or 0)))
        self.pattern.currentIndexChanged.connect(lambda i: self._set_worker("data_pattern", i))
        doc.replaced.connect(self.refresh)
        doc.changed.connect(
            lambda what: self.refresh() if what in (Change.TARGETS, Change.TOPOLOGY) else None
        )
        self.refresh_disks()

    # --- selection and refresh --------------------------------------------------------------
    def refresh(self) -> None:
        w = self.worker()
        if w is None:
            self.stack.show_empty(
                "Select a worker in the Topology on the left to see and choose its disk "
                "targets.\n\nEach worker runs its access specifications against its own targets."
            )
            return
        if w.kind != "disk":
            self.stack.show_empty(
                f"{w.name} is a network worker: its partners are on the Network Targets tab."
            )
            return
        self.stack.show_content()
        m = self.doc.plan.managers[self._indexes()[0]]
        self.heading.setText(f"<b>{w.name}</b> on manager <b>{m.name}</b>")
        self._loading = True
        self.qd.setValue(w.queue_depth)
        self.max_size.setText(str(w.max_size))
        self.start.setText(str(w.start_sector))
        self.pattern.setCurrentIndex(w.data_pattern if 0 <= w.data_pattern < self.pattern.count() else 0)
        self._loading = False
        self._update_size_note(w)
        self._fill_table(w)
        self._fill_disks()

    def _update_size_note(self, w: Worker) -> None:
        """One statement of the size this worker's targets get, with the engine's sector rule for where they
        are placed (the same rule the table and the run use)."""
        if not w.max_size:
            self.max_size_note.setText(
                f"whole disk or existing test file; new test files get {format_bytes(DEFAULT_FILE_SIZE)}"
            )
            self.max_size_note.setToolTip("")
            return
        os_name = _os_of(self.doc, self._indexes()[0], self.os_by_manager)
        local = self.doc.plan.managers[self._indexes()[0]].host == LOCAL
        sectors = set()
        for t in w.targets:
            with contextlib.suppress(TargetError):  # an unplaced target says so in its row
                sectors.add(sector_of(t, os_name, local))
        if len(sectors) == 1:
            n = sectors.pop()
            text = f"= {format_bytes(w.max_size * n)} per target ({n}-byte sectors)"
        elif sectors:
            text = "(the targets differ in sector size: each one's size is in the table)"
        else:
            text = "(the size follows once the targets are placed)"
        self.max_size_note.setText(text)
        self.max_size_note.setToolTip(SECTOR_RULE + " Each target's size is in the table below.")

    def _fill_table(self, w: Worker) -> None:
        os_name = _os_of(self.doc, self._indexes()[0], self.os_by_manager)
        row = self.table.currentRow()
        self.table.setRowCount(len(w.targets))
        for i, t in enumerate(w.targets):
            kind, state, problem = target_state(t, w, os_name)
            items = [QTableWidgetItem(t.name), QTableWidgetItem(kind), QTableWidgetItem(state)]
            for it in items:
                it.setToolTip(state)
                if problem:
                    it.setForeground(Qt.GlobalColor.red)
            for c, it in enumerate(items):
                self.table.setItem(i, c, it)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        if w.targets:
            self.table_stack.show_content()
            self.table.selectRow(min(max(row, 0), len(w.targets) - 1))
        else:
            self.table_stack.show_empty("No targets assigned — add a test file, or pick a disk below.")

    def refresh_disks(self) -> None:
        self.local_disks = disk_list.list_disks(self.disk_os)
        self._fill_disks()

    def _fill_disks(self) -> None:
        self.disks.clear()
        m = self.doc.plan.managers[self.sel.manager] if self.sel.manager is not None else None
        self.add_disk_button.setEnabled(False)
        if m is not None and m.host != LOCAL:
            self.disks_stack.show_empty(
                f"Disks of {m.host or 'an unmapped manager'} are not listed here. "
                "Use Add path… with the device name on that host (e.g. /dev/sdb)."
            )
            return
        reason = disk_list.unsupported_reason(self.disk_os)
        if reason:
            self.disks_stack.show_empty(reason)
            return
        if not self.local_disks:
            self.disks_stack.show_empty(disk_list.empty_reason(self.disk_os))
            return
        self.disks_stack.show_content()
        for d in self.local_disks:
            kind = "" if d.rotational is None else (" (HDD)" if d.rotational else " (SSD)")
            it = QTreeWidgetItem([d.path, format_bytes(d.size_bytes), (d.model or "—") + kind, d.state])
            it.setData(0, Qt.ItemDataRole.UserRole, d.path)
            if d.in_use or d.read_only:
                it.setDisabled(True)
                it.setToolTip(
                    3,
                    f"Not offered: {d.state}. Writing to it would destroy data in use; "
                    "use a test file on its file system instead.",
                )
            else:
                it.setToolTip(3, "Unused whole disk: writes by a write spec destroy whatever it holds")
            self.disks.addTopLevelItem(it)
        for c in range(3):
            self.disks.resizeColumnToContents(c)
        self.add_disk_button.setEnabled(any(not d.in_use and not d.read_only for d in self.local_disks))

    # --- edits ------------------------------------------------------------------------------
    def _set_worker(self, attr: str, value: int) -> None:
        w = self.worker()
        if self._loading or w is None or getattr(w, attr) == value:
            return
        self.doc.set_worker_field(*self._indexes(), attr, value, f"Change {SETTING_NAMES[attr]}")

    def _edit_worker(self, text: str, change: Callable[[Worker], None]) -> None:
        """One undoable edit of the selected worker."""
        mi, wi = self._indexes()
        self.doc.edit(text, Change.TARGETS, lambda plan: change(plan.managers[mi].workers[wi]))

    def _add(self, target: Target, max_size: int | None = None) -> None:
        """Add ``target`` to the selected worker (and set its Maximum Disk Size, for a test file's size)."""
        w = self.worker()
        if w is None:
            return
        if any((t.path or t.name) == (target.path or target.name) for t in w.targets):
            QMessageBox.information(
                self, "Already a target", f"{target.path or target.name} is already a target of {w.name}."
            )
            return

        def add(worker: Worker) -> None:
            if max_size is not None:
                worker.max_size = max_size
            worker.targets.append(target)

        self._edit_worker(f"Add target {target.path or target.name}", add)
        self.table.selectRow(len(w.targets))

    def add_test_file(self) -> None:
        w = self.worker()
        if w is None:
            return
        dlg = self.test_file_dialog(w)
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return
        path = dlg.path.text().strip()
        self._add(Target(path, path), max_size=dlg.max_size_sectors())

    def _indexes(self) -> tuple[int, int]:
        """(manager, worker) of the selected worker; called only while ``self.worker()`` finds one."""
        mi, wi = self.sel.manager, self.sel.worker
        if mi is None or wi is None:
            raise LookupError("no worker is selected")
        return mi, wi

    def test_file_dialog(self, w: Worker) -> AddTestFileDialog:
        """The Add test file dialog for the selected worker: a remote manager's path is typed, not browsed."""
        m = self.doc.plan.managers[self._indexes()[0]]
        remote = None if m.host == LOCAL else (m.host or m.name)
        return AddTestFileDialog(w, self, remote, _os_of(self.doc, self._indexes()[0], self.os_by_manager))

    def add_path(self) -> None:
        path, ok = QInputDialog.getText(self, "Add target by path", "File or device on the manager's host:")
        if ok and path.strip():
            self._add(Target(path.strip(), path.strip()))

    def set_path(self) -> None:
        w = self.worker()
        row = self.table.currentRow()
        if w is None or not 0 <= row < len(w.targets):
            return
        m = self.doc.plan.managers[self._indexes()[0]]
        dlg = PlaceTargetDialog(
            m, w.targets[row], _os_of(self.doc, self._indexes()[0], self.os_by_manager), self
        )
        if dlg.exec() == QDialog.DialogCode.Accepted:
            self.doc.place_target(*self._indexes(), row, dlg.chosen(), dlg.everywhere.isChecked())

    def add_disk(self) -> None:
        it = self.disks.currentItem()
        if it is None or it.isDisabled():
            QMessageBox.information(self, "Choose a disk", "Select an unused disk in the list first.")
            return
        path = it.data(0, Qt.ItemDataRole.UserRole)
        if confirm(
            self,
            "Raw disk target",
            f"Write access specifications DESTROY all data on {path} "
            f"({it.text(2)}, {it.text(1)}).\n\nUse it as a target?",
            f"Use {path}",
        ):
            self._add(Target(Path(path).name, path))

    def remove(self) -> None:
        w = self.worker()
        row = self.table.currentRow()
        if w is not None and 0 <= row < len(w.targets):

            def remove(worker: Worker) -> None:
                del worker.targets[row]

            self._edit_worker(f"Remove target {w.targets[row].name}", remove)

    def move(self, delta: int) -> None:
        w = self.worker()
        row = self.table.currentRow()
        new = row + delta
        if w is None or not (0 <= row < len(w.targets) and 0 <= new < len(w.targets)):
            return

        def swap(worker: Worker) -> None:
            worker.targets[row], worker.targets[new] = worker.targets[new], worker.targets[row]

        self._edit_worker(f"Move target {w.targets[row].name} {'up' if delta < 0 else 'down'}", swap)
        self.table.selectRow(new)
