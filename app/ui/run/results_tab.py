"""Results Display: live charts and Iometer's statistics for All Managers, a manager or a worker."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QRadioButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.engine.jobs.jobfile import client_workers, worker_key
from app.live.data import ALL_KEY, LAST, STATS, UPDATE_CHOICES, WHOLE, LiveResults, SeriesKey
from app.ui.charts.chart_grid import ChartGrid, ChartScroller
from app.ui.plan.plan_document import Change, PlanDocument
from app.ui.plan.topology import Selection
from app.ui.run.disk_table import DiskTable
from app.ui.run.run_feedback import LoadSearchBox, NowLine
from app.ui.validity_box import ValidityBox
from app.ui.widgets import compact_rows

TABLE_COLUMNS_MAX = 64


@dataclass
class Scope:
    title: str
    keys: list[SeriesKey]
    labels: list[str]
    selection: Selection | None = None  # the Topology item it corresponds to


def scopes_for(doc: PlanDocument) -> list[Scope]:
    plan = doc.plan
    out = [Scope("All Managers", [ALL_KEY], ["All Managers"], Selection())]
    if len(plan.managers) > 1:
        out.append(
            Scope(
                "Each manager",
                [("manager", m.name, m.name) for m in plan.managers],
                [m.name for m in plan.managers],
            )
        )
    # each manager's workers: its own, then the client workers of network workers that name it as partner
    workers: list[list[tuple[str, str, Selection | None]]] = [
        [(worker_key(wi), w.name, Selection(mi, wi)) for wi, w in enumerate(m.workers)]
        for mi, m in enumerate(plan.managers)
    ]
    for pi, key, name in client_workers(plan):
        workers[pi].append((key, name, None))
    all_workers = [
        (m, key, name) for m, ws in zip(plan.managers, workers, strict=True) for key, name, _ in ws
    ]
    if len(all_workers) > 1:
        out.append(
            Scope(
                "Each worker (all managers)",
                [("worker", m.name, key) for m, key, _ in all_workers],
                [f"{m.name} / {name}" for m, _, name in all_workers],
            )
        )
    for mi, m in enumerate(plan.managers):
        out.append(Scope(f"Manager {m.name}", [("manager", m.name, m.name)], [m.name], Selection(mi)))
        if len(workers[mi]) > 1:
            out.append(
                Scope(
                    f"Manager {m.name}: each worker",
                    [("worker", m.name, key) for key, _, _ in workers[mi]],
                    [name for _, name, _ in workers[mi]],
                )
            )
        for key, name, sel in workers[mi]:
            out.append(
                Scope(f"    {m.name} / {name}", [("worker", m.name, key)], [f"{m.name} / {name}"], sel)
            )
    return out


VALUE_SAMPLE = "99,999,999"  # the least room of a column of values (wider as its values need)
CELL_PADDING = 14  # a cell's margins around its text
LABELS_LEAST = 60  # the statistics' names keep at least this (cut short, whole in their tooltips)


def format_value(v: float | None) -> str:
    """Iometer's two decimals (0.90 beside 1.02, not 0.9007), whole numbers from 100 up, and three
    significant digits below 0.1 (a response time of 0.0425 ms is not 0.04)."""
    if v is None or v != v:  # None or NaN
        return "—"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 0.1 or v == 0:
        return f"{v:,.2f}"
    return f"{v:.3g}"


class ResultsTab(QWidget):
    def __init__(self, doc: PlanDocument, live: LiveResults, parent: QWidget | None = None):
        super().__init__(parent)
        self.lost: dict[str, str] = {}  # managers whose fio failed in this run: name -> cause
        self.doc = doc
        self.live = live
        self.scopes: list[Scope] = []
        self._table_revision = -1
        self._disk_revision = -1

        controls = QHBoxLayout()
        controls.addWidget(QLabel("Show:"))
        self.scope = QComboBox()
        self.scope.setToolTip(
            "Which level the charts and the table show: All Managers (sums), a manager, "
            "a worker, or one line per manager / worker"
        )
        self.scope.setMinimumContentsLength(14)
        self.scope.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        controls.addWidget(self.scope, 1)
        options = QGridLayout()
        options.addWidget(QLabel("Results since:"), 0, 0)
        self.since_whole = QRadioButton("Start of test")
        self.since_whole.setToolTip("WHOLE_TEST: averages since recording started (after ramp-up)")
        self.since_last = QRadioButton("Last update")
        self.since_last.setToolTip("LAST_UPDATE: the numbers of the interval since the previous update")
        self.since = QButtonGroup(self)
        self.since.addButton(self.since_whole)
        self.since.addButton(self.since_last)
        options.addWidget(self.since_whole, 0, 1)
        options.addWidget(self.since_last, 1, 1)
        options.addWidget(QLabel("Update frequency:"), 2, 0)
        self.frequency = QComboBox()
        for sec in UPDATE_CHOICES:
            self.frequency.addItem("∞ (end of step)" if sec == 0 else f"{sec} s", sec)
        self.frequency.setToolTip(
            "How often a new point is made (seconds of fio time); ∞ = only when each step ends, as in Iometer"
        )
        options.addWidget(self.frequency, 2, 1)
        # Iometer's Results Display switch: every update also goes to inst<results file> (asked at Start)
        self.record_last = QCheckBox("Record last update results to file")
        self.record_last.setToolTip(
            "Iometer's Record Last Update Results: at Start you choose the results file (results.csv); every "
            "update is then written to inst<results file> beside it as the run goes. Saved with the plan."
        )
        options.addWidget(self.record_last, 3, 0, 1, 2)
        options.setColumnStretch(2, 1)

        self.notice = QLabel("No results yet — press Start (F5) to run the plan; live numbers appear here.")
        self.notice.setWordWrap(True)
        self.notice.setObjectName("emptyState")
        self.notice.setEnabled(False)
        self.notice.setAlignment(Qt.AlignmentFlag.AlignCenter)

        self.charts = ChartGrid(remember="results")
        self.table = QTableWidget(len(STATS), 1)
        compact_rows(self.table)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setVerticalHeaderLabels([s.label for s in STATS])
        for r, stat in enumerate(STATS):  # whole, where a narrow window cuts the name short
            self.table.verticalHeaderItem(r).setToolTip(stat.label)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.horizontalScrollBar().valueChanged.connect(lambda _v: self._fill_table())
        self.table.setMinimumWidth(220)
        self.table.installEventFilter(self)  # its labels' width follows its own (see _fit_labels)
        self.table.setToolTip(
            "Iometer's statistics for the level shown. Response time is fio's total latency "
            "(submit to completion), as Iometer measures it."
        )
        left = QWidget()
        llay = QVBoxLayout(left)
        llay.setContentsMargins(0, 0, 0, 0)
        llay.addWidget(self.notice)
        llay.addWidget(ChartScroller(self.charts), 1)
        right = QWidget()
        rlay = QVBoxLayout(right)
        rlay.setContentsMargins(0, 0, 0, 0)
        self.now = NowLine()  # the step running: its access specification and load
        rlay.addWidget(self.now)
        rlay.addLayout(controls)  # beside the charts, not above them: the charts get the tab's whole height
        rlay.addLayout(options)
        self.validity = ValidityBox()  # filled when a run ends
        rlay.addWidget(self.validity)
        self.load_search = LoadSearchBox()  # a load search's loads against its limit, then its answer
        rlay.addWidget(self.load_search)
        rlay.addWidget(self.table, 3)
        self.disk_label = QLabel("Disks (iostat's figures):")
        self.disk_label.setToolTip(
            "From fio's per-disk counters (the kernel's, for the disks behind the targets)"
        )
        self.disk_table = DiskTable()
        rlay.addWidget(self.disk_label)
        rlay.addWidget(self.disk_table, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([640, 400])
        self.splitter = split

        lay = QVBoxLayout(self)
        lay.addWidget(split, 1)

        self.scope.currentIndexChanged.connect(self._scope_changed)
        self.since.buttonToggled.connect(lambda *_: self._kind_changed())
        self.frequency.currentIndexChanged.connect(self._frequency_changed)
        self.record_last.toggled.connect(self._record_last_changed)
        doc.replaced.connect(self.load)
        doc.changed.connect(self._on_changed)
        self.load()

    # --- settings -----------------------------------------------------------------------------
    @property
    def kind(self) -> str:
        return LAST if self.since_last.isChecked() else WHOLE

    def load(self) -> None:
        s = self.doc.plan.setup
        for w in (self.since, self.since_whole, self.since_last, self.frequency, self.record_last):
            w.blockSignals(True)
        (self.since_last if s.update_type == LAST else self.since_whole).setChecked(True)
        self.record_last.setChecked(s.iometer.record_last_update)
        idx = self.frequency.findData(s.update_frequency)
        if idx < 0:
            self.frequency.addItem(f"{s.update_frequency} s", s.update_frequency)
            idx = self.frequency.count() - 1
        self.frequency.setCurrentIndex(idx)
        for w in (self.since, self.since_whole, self.since_last, self.frequency, self.record_last):
            w.blockSignals(False)
        self.live.update_seconds = s.update_frequency
        self._rebuild_scopes()

    def _rebuild_scopes(self) -> None:
        old = self.scope.currentText()
        self.scopes = scopes_for(self.doc)
        self.scope.blockSignals(True)
        self.scope.clear()
        for sc in self.scopes:
            self.scope.addItem(sc.title)
        idx = self.scope.findText(old)
        self.scope.setCurrentIndex(idx if idx >= 0 else 0)
        self.scope.blockSignals(False)
        self._scope_changed()

    def set_selection(self, sel: Selection) -> None:
        """Follow the Topology, as Iometer's results follow the dragged manager/worker."""
        for i, sc in enumerate(self.scopes):
            if sc.selection == sel:
                self.scope.setCurrentIndex(i)
                return

    def current_scope(self) -> Scope:
        i = self.scope.currentIndex()
        return self.scopes[i] if 0 <= i < len(self.scopes) else self.scopes[0]

    def _scope_changed(self) -> None:
        sc = self.current_scope()
        self.charts.set_series(sc.keys, sc.labels)
        cols = sc.labels[:TABLE_COLUMNS_MAX]
        self.table.clearContents()
        self.table.setColumnCount(len(cols))
        self.table.setHorizontalHeaderLabels(cols)
        self._mark_headers()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for c, label in enumerate(cols):  # wide enough for the label and a value; wider as values need
            self.table.setColumnWidth(
                c, max(header.fontMetrics().horizontalAdvance(label) + 16, self._value_width())
            )
        self.redraw(force=True)

    def _on_changed(self, what: Change) -> None:
        if what in (Change.TOPOLOGY, Change.TARGETS):
            self._rebuild_scopes()
        elif what is Change.RESULTS and (
            self.doc.plan.setup.update_type != self.kind
            or self.doc.plan.setup.update_frequency != self.frequency.currentData()
            or self.doc.plan.setup.iometer.record_last_update != self.record_last.isChecked()
        ):
            self.load()  # undone or redone
            self.redraw(force=True)

    def _kind_changed(self) -> None:
        kind = self.kind
        self.doc.edit(
            "Change results since", Change.RESULTS, lambda plan: setattr(plan.setup, "update_type", kind)
        )
        self.redraw(force=True)

    def _frequency_changed(self) -> None:
        sec = int(self.frequency.currentData())
        self.live.update_seconds = sec
        self.doc.edit(
            "Change update frequency",
            Change.RESULTS,
            lambda plan: setattr(plan.setup, "update_frequency", sec),
        )

    def _record_last_changed(self, on: bool) -> None:
        self.doc.edit(
            "Record last update results" if on else "Do not record last update results",
            Change.RESULTS,
            lambda plan: setattr(plan.setup.iometer, "record_last_update", on),
        )

    # --- drawing ------------------------------------------------------------------------------
    def redraw(self, force: bool = False) -> bool:
        self.live.flush()
        self.notice.setVisible(not self.live.series)
        changed = self.charts.redraw(self.live, self.kind, force)
        if changed or force:
            self._fill_table()
        if force or self.live.disks.revision != self._disk_revision:
            self._disk_revision = self.live.disks.revision
            rows = DiskTable.rows_for(self.live.disks, self.current_scope().keys)
            self.disk_table.show_rows(rows, self.kind)
            # only once there are disks to show: until then the statistics get the height
            self.disk_label.setVisible(bool(rows))
            self.disk_table.setVisible(bool(rows))
        return changed

    def mark_lost(self, lost: dict[str, str]) -> None:
        """Managers whose fio failed in this run (name -> cause): their columns greyed and marked, their
        numbers no longer current (Last update shows none)."""
        self.lost = dict(lost)
        self._mark_headers()
        self._fill_table()

    def _mark_headers(self) -> None:
        sc = self.current_scope()
        for c, (key, label) in enumerate(zip(sc.keys[:TABLE_COLUMNS_MAX], sc.labels, strict=False)):
            head = self.table.horizontalHeaderItem(c)
            if head is not None:
                gone = key[1] in self.lost
                head.setText(f"{label} (lost)" if gone else label)
                head.setToolTip(f"Manager {key[1]} failed: {self.lost[key[1]]}" if gone else "")
                if gone:
                    self.table.resizeColumnToContents(c)

    def _fill_table(self) -> None:
        """Only the columns in view (a 128-worker view has 128 columns); scrolling fills the others."""
        sc = self.current_scope()
        kind = self.kind
        muted = self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        keys = sc.keys[:TABLE_COLUMNS_MAX]
        first = max(self.table.columnAt(0), 0)
        last = self.table.columnAt(self.table.viewport().width() - 1)
        last = len(keys) - 1 if last < 0 else last
        grown = False
        for c in range(first, min(last, len(keys) - 1) + 1):
            need = 0
            key = keys[c]
            s = self.live.series.get(key)
            gone = key[1] in self.lost
            m = s.latest.get(kind) if s and not (gone and kind == LAST) else None
            for r, stat in enumerate(STATS):
                value = stat.get(m) if m is not None else None
                text = "—" if value is None else (f"{value:,.0f}" if stat.count else format_value(value))
                it = self.table.item(r, c)
                if it is None:
                    it = QTableWidgetItem()
                    it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    self.table.setItem(r, c, it)
                it.setText(text)
                # no colour of its own unless muted: the values follow a switch of theme with the table
                it.setData(Qt.ItemDataRole.ForegroundRole, muted if gone else None)
                need = max(need, self.table.fontMetrics().horizontalAdvance(text) + CELL_PADDING)
            if need > self.table.columnWidth(c):  # every value whole: the column grows to its numbers
                self.table.setColumnWidth(c, need)
                grown = True
        if grown:
            self._fit_labels()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.table and event.type() == QEvent.Type.Resize:
            self._fit_labels()
        return super().eventFilter(watched, event)

    def _value_width(self) -> int:
        """The least width of a column of values: 99,999,999 (a second's I/Os at a million IOPS for 99 s)."""
        return self.table.fontMetrics().horizontalAdvance(VALUE_SAMPLE) + CELL_PADDING

    def _fit_labels(self) -> None:
        """The statistics' names leave room for the first column of values whole (the names are cut short
        with "…" instead, whole in their tooltips): on a narrow window the values stay in view instead of
        scrolling off to the right."""
        header = self.table.verticalHeader()
        t = self.table
        bar = t.verticalScrollBar().sizeHint().width()
        values = t.columnWidth(0) if t.columnCount() else self._value_width()
        room = t.width() - 2 * t.frameWidth() - bar - values
        header.setMaximumWidth(max(room, LABELS_LEAST))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.PaletteChange:  # light/dark switch: charts follow
            self.apply_palette()
        super().changeEvent(event)

    def apply_palette(self) -> None:
        self.charts.apply_palette(QApplication.palette())
        if self.scopes:
            self._fill_table()  # a lost manager's muted values in the new theme's muted colour
        self.charts.redraw(self.live, self.kind, force=True)
