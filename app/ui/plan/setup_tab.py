"""Test Setup: description, run and ramp-up time, test type and cycling, with a live step preview."""

from __future__ import annotations

import copy
import dataclasses

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.engine.jobs.sequence import SequenceTooLong, Step, expand
from app.model.plan import TEST_TYPES, Plan, TestSetup
from app.model.units import format_duration
from app.model.validation import MAX_QUEUE_DEPTH, MAX_SECONDS, validate
from app.ui.plan.curve_box import CurveBox
from app.ui.plan.engine_row import EngineRow
from app.ui.plan.plan_document import Change, PlanDocument
from app.ui.plan.pts_box import PtsBox
from app.ui.widgets import ContentOrEmpty, compact_rows

TEST_TYPE_TITLES = {
    "NORMAL": "Normal",
    "CYCLE_TARGETS": "Cycle # Targets",
    "CYCLE_WORKERS": "Cycle # Workers",
    "INCREMENT_TARGETS_PARALLEL": "Increment Targets — Parallel",
    "INCREMENT_TARGETS_SERIAL": "Increment Targets — Serial",
    "CYCLE_WORKERS_AND_TARGETS": "Cycle # Workers and Targets",
    "CYCLE_OUTSTANDING_IOS": "Cycle # Outstanding I/Os",
    "CYCLE_OUTSTANDING_IOS_AND_TARGETS": "Cycle # Outstanding I/Os and Targets",
}
TEST_TYPE_TIPS = {
    "NORMAL": "One test per assigned spec: every worker runs all of its targets.",
    "CYCLE_TARGETS": "Every worker uses its first T targets; T grows by the Target cycling values until all "
    "targets are active.",
    "CYCLE_WORKERS": "In each manager the first W workers run (all their targets); W grows by the Worker "
    "cycling values.",
    "INCREMENT_TARGETS_PARALLEL": "In each manager, T targets filled worker by worker; T grows.",
    "INCREMENT_TARGETS_SERIAL": "T targets in total, filled manager by manager, worker by worker; T grows.",
    "CYCLE_WORKERS_AND_TARGETS": "For each number of workers W, the number of targets per worker T grows.",
    "CYCLE_OUTSTANDING_IOS": "All targets; the outstanding I/Os per target take the Queue depth cycling values.",
    "CYCLE_OUTSTANDING_IOS_AND_TARGETS": "For each number of targets T, all the queue depth values.",
}
USES_TARGETS = {
    "CYCLE_TARGETS",
    "INCREMENT_TARGETS_PARALLEL",
    "INCREMENT_TARGETS_SERIAL",
    "CYCLE_WORKERS_AND_TARGETS",
    "CYCLE_OUTSTANDING_IOS_AND_TARGETS",
}
USES_WORKERS = {"CYCLE_WORKERS", "CYCLE_WORKERS_AND_TARGETS"}
USES_QD = {"CYCLE_OUTSTANDING_IOS", "CYCLE_OUTSTANDING_IOS_AND_TARGETS"}
RECORD_CHOICES = {
    "ALL": "All",
    "NO_TARGETS": "No targets",
    "NO_WORKERS": "No workers",
    "NO_MANAGERS": "No managers",
    "NONE": "None",
}
PREVIEW_ROWS = 2000
# a Test Setup field's name in Edit > Undo "Change …"
FIELD_NAMES = {
    "description": "test description",
    "run_time": "run time",
    "ramp_up": "ramp up time",
    "record_results": "record results",
    "test_type": "cycling option",
    "worker_cycling": "worker cycling",
    "target_cycling": "target cycling",
    "queue_depth_cycling": "outstanding I/Os cycling",
    "engine": "I/O engine",
    "engine_options": "io_uring options",
}


def _spin(lo: int, hi: int, suffix: str = "") -> QSpinBox:
    s = QSpinBox()
    s.setRange(lo, hi)
    s.setSuffix(suffix)
    s.setKeyboardTracking(True)
    return s


def _step_type() -> QComboBox:
    c = QComboBox()
    c.addItem("Linear (+ step)", "LINEAR")
    c.addItem("Exponential (× step)", "EXPONENTIAL")
    return c


def step_description(plan: Plan, step: Step) -> str:
    return ", ".join(
        f"{plan.managers[a.manager].name}/{plan.managers[a.manager].workers[a.worker].name}"
        f" [{len(a.targets)}]"
        for a in step.workers
    )


class CyclingBox(QGroupBox):
    """Start / step / linear-exponential (and end for queue depth)."""

    def __init__(self, title: str, with_end: bool, unit: str):
        super().__init__(title)
        grid = QGridLayout(self)
        self.start = _spin(1, MAX_QUEUE_DEPTH if with_end else 1 << 20)
        self.end = _spin(1, MAX_QUEUE_DEPTH) if with_end else None
        self.step = _spin(1, MAX_QUEUE_DEPTH if with_end else 1 << 20)
        self.kind = _step_type()
        grid.addWidget(QLabel("Start:"), 0, 0)
        grid.addWidget(self.start, 0, 1)
        col = 2
        if self.end is not None:
            grid.addWidget(QLabel("End:"), 0, col)
            grid.addWidget(self.end, 0, col + 1)
            col += 2
        grid.addWidget(QLabel("Step:"), 0, col)
        grid.addWidget(self.step, 0, col + 1)
        grid.addWidget(self.kind, 0, col + 2)
        grid.addWidget(QLabel(unit), 0, col + 3)
        grid.setColumnStretch(col + 4, 1)


class SetupTab(QWidget):
    def __init__(self, doc: PlanDocument, parent: QWidget | None = None):
        super().__init__(parent)
        self.doc = doc
        self._loading = False
        self._storing = False  # True while its own edit is announced (the fields show it already)

        form_box = QWidget()
        lay = QVBoxLayout(form_box)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.description = QLineEdit()
        self.description.setMinimumWidth(360)
        self.description.setToolTip("Shown in reports and stored with every run")
        form.addRow("Test description:", self.description)
        rt = QHBoxLayout()
        self.hours = _spin(0, MAX_SECONDS // 3600, " h")
        self.minutes = _spin(0, 59, " min")
        self.seconds = _spin(0, 59, " s")
        for w in (self.hours, self.minutes, self.seconds):
            w.setToolTip("Run time of EACH test step, after ramp-up. 0:00:00 = run until you press Stop.")
            rt.addWidget(w)
        self.run_note = QLabel()
        rt.addWidget(self.run_note, 1)
        form.addRow("Run time:", rt)
        self.ramp = _spin(0, MAX_SECONDS, " s")
        self.ramp.setToolTip("Ramp-up time: I/O runs but nothing is recorded, before each step's run time")
        form.addRow("Ramp up time:", self.ramp)
        self.record = QComboBox()
        for key, title in RECORD_CHOICES.items():
            self.record.addItem(title, key)
        self.record.setToolTip("Which levels Iometer writes to its results file (kept for .icf round trips)")
        form.addRow("Record results:", self.record)
        self.test_type = QComboBox()
        for key in TEST_TYPES:
            self.test_type.addItem(TEST_TYPE_TITLES[key], key)
            self.test_type.setItemData(
                self.test_type.count() - 1, TEST_TYPE_TIPS[key], Qt.ItemDataRole.ToolTipRole
            )
        form.addRow("Cycling options:", self.test_type)
        self.type_tip = QLabel()
        form.addRow("", self.type_tip)
        self.engine = EngineRow()
        form.addRow("I/O engine:", self.engine)
        lay.addLayout(form)
        self.workers_box = CyclingBox("Worker cycling (workers per manager)", False, "workers")
        self.targets_box = CyclingBox("Target cycling (targets per worker)", False, "targets")
        self.qd_box = CyclingBox("Queue depth cycling (# of outstanding I/Os per target)", True, "I/Os")
        for b in (self.workers_box, self.targets_box, self.qd_box):
            lay.addWidget(b)
        self.curve_box = CurveBox()  # `fiometer curve` from the window (the window starts it)
        lay.addWidget(self.curve_box)
        self.pts_box = PtsBox()  # `fiometer pts` from the window (the window starts it)
        lay.addWidget(self.pts_box)
        self.problems = QLabel()
        self.problems.setStyleSheet("color: #d32f2f;")
        self.problems.setWordWrap(True)
        lay.addWidget(self.problems)
        lay.addStretch(1)

        preview = QGroupBox("Preview: the test steps this plan runs")
        play = QVBoxLayout(preview)
        self.summary = QLabel()
        self.summary.setObjectName("stepSummary")
        self.summary.setWordWrap(True)
        play.addWidget(self.summary)
        self.table = QTableWidget(0, 6)
        compact_rows(self.table)
        self.table.setHorizontalHeaderLabels(
            [
                "Step",
                "Access specification",
                "Workers",
                "Targets",
                "Outstanding I/Os",
                "Active workers [targets]",
            ]
        )
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)
        self.preview_stack = ContentOrEmpty(self.table)
        play.addWidget(self.preview_stack, 1)

        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(form_box)
        split.addWidget(preview)
        split.setStretchFactor(1, 1)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(split)

        self._preview_timer = QTimer(self)
        self._preview_timer.setSingleShot(True)
        self._preview_timer.setInterval(0)
        self._preview_timer.timeout.connect(self.update_preview)

        self.description.textEdited.connect(self._store)
        for s in (self.hours, self.minutes, self.seconds, self.ramp, *self._cycling_spins()):
            s.valueChanged.connect(self._store)
        for c in (
            self.record,
            self.test_type,
            self.workers_box.kind,
            self.targets_box.kind,
            self.qd_box.kind,
        ):
            c.currentIndexChanged.connect(self._store)
        self.engine.changed.connect(self._store)
        doc.replaced.connect(self.load)
        doc.changed.connect(self._on_changed)
        self.load()

    def _cycling_spins(self) -> list[QSpinBox]:
        out = []
        for b in (self.workers_box, self.targets_box, self.qd_box):
            out += [b.start, b.step] + ([b.end] if b.end is not None else [])
        return out

    def _on_changed(self, what: Change) -> None:
        if what is Change.SETUP and not self._storing:  # undone or redone: show it
            self.load()
        elif what in (Change.TOPOLOGY, Change.TARGETS, Change.ASSIGNMENT):
            self._preview_timer.start()

    # --- plan <-> widgets -------------------------------------------------------------------
    def load(self) -> None:
        s = self.doc.plan.setup
        self._loading = True
        self.description.setText(s.description)
        self.description.setCursorPosition(0)  # its beginning shown, not its tail
        h, rest = divmod(s.run_time, 3600)
        self.hours.setValue(h)
        self.minutes.setValue(rest // 60)
        self.seconds.setValue(rest % 60)
        self.ramp.setValue(s.ramp_up)
        self.record.setCurrentIndex(max(0, self.record.findData(s.record_results)))
        self.test_type.setCurrentIndex(max(0, self.test_type.findData(s.test_type)))
        self.engine.set_value(s.engine, s.engine_options)
        for box, cyc in ((self.workers_box, s.worker_cycling), (self.targets_box, s.target_cycling)):
            box.start.setValue(cyc.start)
            box.step.setValue(cyc.step)
            box.kind.setCurrentIndex(max(0, box.kind.findData(cyc.step_type)))
        q = s.queue_depth_cycling
        self.qd_box.start.setValue(q.start)
        self.qd_box.end.setValue(q.end)
        self.qd_box.step.setValue(q.step)
        self.qd_box.kind.setCurrentIndex(max(0, self.qd_box.kind.findData(q.step_type)))
        self._loading = False
        self._storing = False  # True while its own edit is announced (the fields show it already)
        self._update_enabled()
        self.update_preview()

    def _store(self, *_args: object) -> None:
        if self._loading:
            return
        s = copy.deepcopy(self.doc.plan.setup)
        s.description = self.description.text()
        s.run_time = self.hours.value() * 3600 + self.minutes.value() * 60 + self.seconds.value()
        s.ramp_up = self.ramp.value()
        s.record_results = self.record.currentData()
        s.test_type = self.test_type.currentData()
        s.engine, s.engine_options = self.engine.value()
        for box, cyc in ((self.workers_box, s.worker_cycling), (self.targets_box, s.target_cycling)):
            cyc.start, cyc.step, cyc.step_type = box.start.value(), box.step.value(), box.kind.currentData()
        q = s.queue_depth_cycling
        q.start, q.end, q.step = self.qd_box.start.value(), self.qd_box.end.value(), self.qd_box.step.value()
        q.step_type = self.qd_box.kind.currentData()
        self._apply(s)
        self._update_enabled()
        self.update_preview()

    def _apply(self, setup: TestSetup) -> None:
        """The fields' values as one undoable edit named after the field that changed; keystrokes and spin
        clicks in one field are one step."""
        old = self.doc.plan.setup
        changed = [
            f.name for f in dataclasses.fields(setup) if getattr(setup, f.name) != getattr(old, f.name)
        ]
        if not changed:
            return
        self._storing = True
        try:
            self.doc.edit(
                f"Change {FIELD_NAMES.get(changed[0], changed[0].replace('_', ' '))}",
                Change.SETUP,
                lambda plan: setattr(plan, "setup", setup),
                merge_key="setup:" + ",".join(changed),
            )
        finally:
            self._storing = False

    def _update_enabled(self) -> None:
        t = self.test_type.currentData()
        self.workers_box.setEnabled(t in USES_WORKERS)
        self.targets_box.setEnabled(t in USES_TARGETS)
        self.qd_box.setEnabled(t in USES_QD)
        self.type_tip.setText(TEST_TYPE_TIPS.get(t, ""))
        rt = self.doc.plan.setup.run_time
        self.run_note.setText("until stopped" if rt == 0 else f"= {format_duration(rt)} per step")

    # --- preview ----------------------------------------------------------------------------
    def update_preview(self) -> None:
        plan = self.doc.plan
        errors = [p for p in validate(plan) if p.severity == "error" and p.path.startswith("setup.")]
        self.problems.setText("\n".join(str(p) for p in errors))
        self.problems.setVisible(bool(errors))
        try:
            steps = expand(plan) if not errors else []
        except SequenceTooLong as e:
            self.problems.setText(str(e))
            self.problems.setVisible(True)
            steps = []
        s = plan.setup
        if not steps:
            self.summary.setText("No steps.")
            self.preview_stack.show_empty(
                "Nothing would run: no worker has both an assigned access specification and a target.\n\n"
                "Assign specs in Access Specifications and targets in Disk Targets."
                if not errors
                else "Fix the cycling values above to see the steps."
            )
            self.table.setRowCount(0)
            return
        self.preview_stack.show_content()
        per = s.ramp_up + s.run_time
        total = (
            f"about {format_duration(per * len(steps))}"
            if s.run_time
            else "each step runs until you press Stop"
        )
        self.summary.setText(
            f"<b>{len(steps)} step{'s' if len(steps) != 1 else ''}</b> "
            f"({TEST_TYPE_TITLES.get(s.test_type, s.test_type)}); "
            f"ramp-up {s.ramp_up} s + run {format_duration(s.run_time) if s.run_time else 'until Stop'}"
            f" per step; {total}."
        )
        shown = steps[:PREVIEW_ROWS]
        self.table.setRowCount(len(shown))
        for r, step in enumerate(shown):
            values = [
                str(step.index + 1),
                step.spec_label,
                str(len(step.workers)),
                str(step.target_count),
                "/".join(map(str, step.queue_depths)),
                step_description(plan, step),
            ]
            for c, v in enumerate(values):
                it = QTableWidgetItem(v)
                if c in (0, 2, 3, 4):
                    it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, it)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)
