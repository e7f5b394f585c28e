"""A stored run, opened from History: its charts replayed from the stored samples (the live charts' code)
and its results per step (the report's table). Clearly marked as stored, never mistaken for a live test."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QButtonGroup,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QRadioButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.analysis.iometer_import import is_iometer_run
from app.analysis.validity import Note
from app.live.data import ALL_KEY, LAST, WHOLE, LiveResults, SeriesKey
from app.report.tables import Table, summary_table
from app.store import Run, StoreError, open_store
from app.store.run_extras import stored_notes
from app.ui.charts.chart_grid import ChartGrid, ChartScroller
from app.ui.fold_box import ElidedLabel
from app.ui.history.history_model import local_time
from app.ui.history.latency_view import LatencyView
from app.ui.history.report_table import ReportTableWidget
from app.ui.history.store_tasks import StoreTasks
from app.ui.history.stored_series import DEFAULT_BINS, StoredRun, load_points, load_run
from app.ui.history.sweep_view import SweepView
from app.ui.validity_box import ValidityBox
from app.ui.widgets import button

RESULTS_TAB = "Results per step"
STORED_STYLE = (
    "#storedBanner { background: #fff4d6; border: 1px solid #e0b84c; border-radius: 3px; }"
    "#storedBanner QLabel { color: #4a3b00; }"
)


def stored_banner(parent: QWidget | None = None) -> tuple[QFrame, QLabel, QHBoxLayout]:
    """The amber strip that says "stored, not live" above a stored run or a comparison."""
    frame = QFrame(parent)
    frame.setObjectName("storedBanner")
    frame.setStyleSheet(STORED_STYLE)
    label = ElidedLabel(tip_is_text=True)  # one line (whole in its tooltip): the charts below need the height
    lay = QHBoxLayout(frame)
    lay.setContentsMargins(8, 4, 8, 4)
    lay.addWidget(label, 1)
    return frame, label, lay


def scopes(data: StoredRun) -> list[tuple[str, list[SeriesKey], list[str]]]:
    """(title, series keys, labels) for the Show menu: ALL, each manager, each worker, then one by one."""
    keys = data.keys()
    names = {(w.manager, w.key): w.name or w.key for w in data.run.workers}
    managers = [k for k in keys if k[0] == "manager"]
    workers = [k for k in keys if k[0] == "worker"]

    def worker_label(k: SeriesKey) -> str:
        return f"{k[1]} / {names.get((k[1], k[2]), k[2])}"

    out = [("All Managers", [ALL_KEY], ["All Managers"])]
    if len(managers) > 1:
        out.append(("Each manager", managers, [str(k[1]) for k in managers]))
    if len(workers) > 1:
        out.append(("Each worker", workers, [worker_label(k) for k in workers]))
    for m in managers:
        out.append((f"Manager {m[1]}", [m], [str(m[1])]))
        for w in workers:
            if w[1] == m[1]:
                out.append((f"    {worker_label(w)}", [w], [worker_label(w)]))
    return out


def run_notes(store, run: Run) -> tuple[list, str]:
    """The validity notes of a run stored without them (computed from what the store kept, and kept with
    it: the next opening reads them), and how they were had (``validity.notes_kept``)."""
    from app.analysis.validity import notes_kept

    return notes_kept(store, run)


class RunView(QWidget):
    report_requested = Signal(list)  # [run id]
    failed = Signal(str)  # the run cannot be read: a message for the user

    def __init__(self, run_id: int, tasks: StoreTasks, parent: QWidget | None = None):
        super().__init__(parent)
        self.run_id = run_id
        self.tasks = tasks
        self.data: StoredRun | None = None
        self.live = LiveResults(update_seconds=1)
        self._scopes: list[tuple[str, list[SeriesKey], list[str]]] = []

        self.banner, self.banner_text, blay = stored_banner()
        self.banner_text.setText(f"Stored run {run_id} \u2014 reading it from the results database\u2026")
        self.report_button = button(
            "Report\u2026",
            "Write a report of this run (HTML, PDF, XLSX, CSV)",
            lambda: self.report_requested.emit([self.run_id]),
        )
        blay.addWidget(self.report_button)

        self.scope = QComboBox()
        self.scope.setToolTip("Which level the charts show: All Managers (sums), a manager or a worker")
        self.scope.setMinimumContentsLength(16)
        self.step = QComboBox()
        self.step.setToolTip("One step from its start, or every step on the run's time axis")
        self.step.setMinimumContentsLength(24)
        self.each_interval = QRadioButton("Each interval")
        self.each_interval.setToolTip("The numbers of each second (fio's status interval)")
        self.since_start = QRadioButton("Since step start")
        self.since_start.setToolTip("Averages from the step's start to each point (Iometer's Start of test)")
        self.each_interval.setChecked(True)
        self.kind_group = QButtonGroup(self)
        self.kind_group.addButton(self.each_interval)
        self.kind_group.addButton(self.since_start)
        self.controls = QWidget()  # hidden where nothing in it applies (a sweep's curves, the results table)
        controls = QHBoxLayout(self.controls)
        controls.setContentsMargins(0, 0, 0, 0)
        controls.addWidget(QLabel("Show:"))
        controls.addWidget(self.scope, 1)
        controls.addWidget(QLabel("Step:"))
        controls.addWidget(self.step, 2)
        controls.addWidget(self.each_interval)
        controls.addWidget(self.since_start)

        self.notice = QLabel()
        self.notice.setObjectName("emptyState")
        self.notice.setWordWrap(True)
        self.notice.setEnabled(False)
        self.notice.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.notice.hide()
        self.charts = StoredCharts("time since the run started (s)", remember="history")
        self.charts.statistic_changed.connect(lambda _i, _f: self._replay())
        self.latency = LatencyView(tasks)  # reads its histograms only when its tab is shown
        self.table_title = QLabel("Results per step (All Managers, whole step)")
        f = self.table_title.font()
        f.setBold(True)
        self.table_title.setFont(f)
        self.table = ReportTableWidget(fit=False)
        self.table_notes = QLabel()
        self.table_notes.setWordWrap(True)
        self.table_notes.setEnabled(False)
        self.messages = QListWidget()
        self.messages.setWordWrap(True)
        self.messages.setMaximumHeight(120)
        self.messages.hide()
        self.validity = ValidityBox()
        self.search_answer: QLabel | None = None  # a load search's answer (its tab), once read

        top = QWidget()
        tlay = QVBoxLayout(top)
        tlay.setContentsMargins(0, 0, 0, 0)
        tlay.addWidget(self.notice)
        tlay.addWidget(ChartScroller(self.charts), 1)
        bottom = QWidget()
        blay2 = QVBoxLayout(bottom)
        blay2.setContentsMargins(0, 0, 0, 0)
        blay2.addWidget(self.table_title)
        blay2.addWidget(self.table, 1)
        blay2.addWidget(self.table_notes)
        blay2.addWidget(self.messages)
        # the level and step chosen above, over time or where their response times fall; the results per step
        # (and the run's warnings) in a tab of their own, so the charts get the view's whole height on a laptop
        # screen; the Sweep tab only for runs that are sweeps
        self.views = QTabWidget()
        self.views.setDocumentMode(True)
        self.views.addTab(top, "Over time")
        self.views.addTab(self.latency, "Response time distribution")
        self.views.setTabToolTip(
            1,
            "Where the response times of the level and step shown fall: over the step, "
            "and interval by interval",
        )
        self.results_page = bottom
        self.views.addTab(bottom, RESULTS_TAB)
        self.views.setTabToolTip(2, "Each step's results (All Managers, whole step) and the run's warnings")
        self.sweep = SweepView()
        lay = QVBoxLayout(self)
        lay.addWidget(self.banner)
        lay.addWidget(self.validity)  # first: whether the figures below measure the storage
        lay.addWidget(self.controls)
        lay.addWidget(self.views, 1)

        self.scope.currentIndexChanged.connect(lambda _i: self._show_scope())
        self.step.currentIndexChanged.connect(lambda _i: self._replay())
        self.kind_group.buttonToggled.connect(lambda _b, on: on and self._replay())
        self.views.currentChanged.connect(lambda _i: self._tab_shown())
        for w in (self.scope, self.step, self.each_interval, self.since_start):
            w.setEnabled(False)

    @property
    def run_ids(self) -> set[int]:
        return {self.run_id}

    @property
    def kind(self) -> str:
        return LAST if self.each_interval.isChecked() else WHOLE

    def title(self) -> str:
        return f"Run {self.run_id} (stored)"

    def load(self) -> None:
        fields = self.charts.fields()
        run_id = self.run_id

        def read(store) -> tuple[StoredRun, Table]:
            data = load_run(store, run_id, fields=fields)
            # the results table too (each step's p99 merges its histograms): on the store's thread
            return data, summary_table(data.run, p99=not is_iometer_run(data.run))

        self.tasks.submit(
            f"reading run {self.run_id}",
            read,
            self._loaded,
            self._failed,
            owner=self,
        )

    def _failed(self, message: str) -> None:
        self.banner_text.setText(f"Stored run {self.run_id} cannot be shown: {message}")
        self.failed.emit(message)

    def _loaded(self, loaded: tuple[StoredRun, Table]) -> None:
        data, table = loaded
        self.data = data
        r = data.run
        host = r.host.get("hostname") or ""
        source = (
            f"imported from {r.host.get('imported_from')}"
            if r.host.get("imported_from")
            else f"recorded {local_time(r.started)}"
            + (f" \u2013 {local_time(r.ended)[11:]}" if r.ended else "")
            + (f" on {host}" if host else "")
        )
        self.banner_text.setText(
            f"Stored run {r.id}"
            + (f" \u201c{r.name}\u201d" if r.name else "")
            + f" \u2014 {source}, {r.status}, "
            f"{len(r.steps)} step{'s' * (len(r.steps) != 1)}. Not a live test: these are the numbers kept in the "
            "results database."
        )
        self.table.set_table(table)
        self.table_notes.setText("\n".join(table.notes))
        msgs = [m for s in r.steps for m in s.messages] + r.messages
        self.messages.clear()
        for m in msgs:
            if m.level != "info":
                self.messages.addItem(f"{m.level}: {(m.manager + ': ') if m.manager else ''}{m.text}")
        self.messages.setVisible(self.messages.count() > 0)
        n = self.messages.count()
        self.views.setTabText(
            self.views.indexOf(self.results_page),
            RESULTS_TAB + (f" ({n} warning{'s' * (n != 1)})" if n else ""),
        )
        kept = stored_notes(r)
        if kept is not None:  # read with the run: shown before the charts are first laid out
            self.validity.set_notes([Note.from_json(d) for d in kept])
        else:  # stored by an older Fiometer: computed once, off the GUI thread, then kept with the run
            self.validity.set_computing()
            self.tasks.submit(
                f"computing run {r.id}'s validity notes",
                lambda store: run_notes(store, r),
                lambda done: self.validity.set_notes(done[0]),
                self.validity.set_failed,
                owner=self,
            )

        self.step.blockSignals(True)
        self.step.clear()
        self.step.addItem("All steps", None)
        for s in r.steps:
            self.step.addItem(
                f"{s.index + 1}: {s.spec_name}"
                + (f" (QD {s.queue_depth})" if s.queue_depth else "")
                + ("" if s.status == "complete" else f" \u2014 {s.status}"),
                s.id,
            )
        self.step.blockSignals(False)
        self._scopes = scopes(data)
        self.scope.blockSignals(True)
        self.scope.clear()
        for title, _k, _l in self._scopes:
            self.scope.addItem(title)
        self.scope.blockSignals(False)
        self._tab_shown()
        if not data.has_samples:
            self.notice.setText(
                "This run has no samples over time"
                + (
                    " (imported from Iometer, which keeps only each test's final numbers)"
                    if is_iometer_run(r)
                    else ""
                )
                + "; its results are in the table below."
            )
        self.notice.setVisible(not data.has_samples)
        self.charts.setVisible(data.has_samples)
        if self.sweep.set_run(r) and self.views.indexOf(self.sweep) < 0:
            self.views.insertTab(self.views.indexOf(self.results_page), self.sweep, "Sweep")
        self._show_search_answer(r)
        self._show_scope()

    def _show_search_answer(self, run: Run) -> None:
        """A load search's run opens at its answer: each specification's highest load within the limit and
        the loads its search measured (the Results Display's result panel, kept)."""
        from app.analysis.curve import curve_of
        from app.ui.run.run_feedback import SEARCH_TAB, curve_html

        results = curve_of(run)
        if not results or self.search_answer is not None:
            return
        label = QLabel(curve_html(results))
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setWordWrap(True)
        label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setContentsMargins(8, 8, 8, 8)
        page = QScrollArea()
        page.setWidgetResizable(True)
        page.setWidget(label)
        self.search_answer = label
        at = self.views.insertTab(self.views.indexOf(self.results_page), page, SEARCH_TAB)
        self.views.setTabToolTip(at, "What the load search found: the highest load within its p99 limit")
        self.views.setCurrentIndex(at)

    def _tab_shown(self) -> None:
        """Show and Step choose what the charts over time and the response time distribution show; Each
        interval and Since step start apply to the charts only (and nothing above to a sweep's curves)."""
        has = self.data is not None and self.data.has_samples
        tab = self.views.currentIndex()
        for w in (self.scope, self.step):
            w.setEnabled(has and tab in (0, self.views.indexOf(self.latency)))
        for w in (self.each_interval, self.since_start):
            w.setEnabled(has and tab == 0)
        self.controls.setVisible(tab in (0, self.views.indexOf(self.latency)))

    def _show_scope(self) -> None:
        i = self.scope.currentIndex()
        if not self._scopes or i < 0:
            return
        _title, keys, labels = self._scopes[i]
        self.charts.set_series(keys, labels)
        self._replay()

    def _show_latency(self) -> None:
        if self.data is not None and self._scopes:
            title, keys, _labels = self._scopes[self.scope.currentIndex()]
            label = title.strip() if len(keys) == 1 else title.replace("Each ", "the ") + "s together"
            self.latency.show_for(self.data, keys, label, self.step.currentData())

    def _replay(self) -> None:
        """Read the points of the scope, step and kind shown (only those: a long run's samples are not
        held in memory) and draw them."""
        if self.data is None:
            return
        step_id = self.step.currentData()
        keys = self._scopes[self.scope.currentIndex()][1] if self._scopes else []
        points = self.data.points
        self.data.points = None  # the first points read with the run are used once
        if points is None or keys != [ALL_KEY] or step_id is not None or self.kind != LAST:
            try:
                with open_store(self.tasks.db_path) as store:
                    points = load_points(
                        store, self.data, keys, step_id, self.kind, self._bins(), self.charts.fields()
                    )
            except StoreError as e:
                self._failed(str(e))
                return
        self.live.series, self.live.steps = points.series, points.steps
        self.live.generation += 1
        self.live.revision += 1
        self.charts.clear_marks()
        self.charts.unmeasured = self._unmeasured()
        self.charts.set_x_label(
            "time since the step started (s)" if step_id is not None else "time since the run started (s)"
        )
        self.charts.show(self.live, self.kind)
        self._show_latency()

    def _unmeasured(self) -> dict[str, str]:
        """Statistics this run's stored numbers do not have, and why (shown in place of a flat line)."""
        out = {}
        if self.kind == WHOLE:
            out["p99_ms"] = "not measured: the 99th percentile is kept for each interval only"
        if self.data is not None and is_iometer_run(self.data.run):
            out["cpu_pct"] = (
                "not measured: imported from Iometer, whose CPU figures are the system's, not fio's"
            )
        return out

    def _bins(self) -> int:
        """About two points per pixel column of the widest chart, as the live charts decimate."""
        return max(200, min(DEFAULT_BINS, self.charts.width()))


class StoredCharts(ChartGrid):
    """The live charts for stored numbers: the window's palette, a given time axis label, and the whole
    time axis at once (a stored run is complete: no room a quarter ahead for data to come)."""

    def __init__(self, x_label: str, parent: QWidget | None = None, remember: str | None = None):
        super().__init__(parent, remember)
        self.compact_units = True  # the live label is too long for charts sharing the view with a table
        self.set_x_label(x_label)
        self.apply_palette(QApplication.palette())

    def refresh(self) -> None:
        if self._last is not None:
            self.show(*self._last)

    def show(self, live: LiveResults, kind: str) -> None:  # type: ignore[override]
        self.redraw(live, kind, force=True)
        x_max = max((float(s.xs()[-1]) for s in live.series.values() if s.n), default=0.0)
        if x_max > 0 and self.follow:
            self.charts[0].plot.setXRange(0, x_max, padding=0.02)
