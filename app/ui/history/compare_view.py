"""Before/after comparison of stored runs: the tables, the "what differs" flags, the charts per metric and
the runs overlaid over time. Everything comes from the report code the CLI uses (``build_report``), so
``fiometer compare`` and this view show the same numbers and verdicts."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.analysis.compare import DEFAULT_THRESHOLD_PCT
from app.live.data import LAST, LiveResults
from app.ui.charts.chart_grid import ChartScroller
from app.ui.fold_box import ElidedLabel, FoldBox
from app.ui.history.compare_data import CompareRequest, ComparisonData, load_comparison, repeat_groups
from app.ui.history.report_charts import BarChartView
from app.ui.history.report_table import TableSection
from app.ui.history.run_view import StoredCharts, stored_banner
from app.ui.history.store_tasks import StoreTasks
from app.ui.widgets import button

RECOMPUTE_MS = 300
MATCH_LABELS = {
    "auto": "By spec and place (load changes listed)",
    "exact": "Exact: spec lines, queue depth, workers and targets",
    "spec": "By access specification only",
}
CALLOUT_STYLE = (
    "#differs { background: #fdf5ec; border-left: 4px solid #d9822b; }"
    " #differs QLabel { color: #3d2a12; } #differs QToolButton { color: #3d2a12; }"
)


def gui_wording(note: str) -> str:
    """The report's notes name CLI options; in the window, name the control instead."""
    return note.replace(
        "--match auto (fiometer report or compare; the default) pairs steps by access "
        "specification and place in the sequence.",
        "Match \u201cBy spec and place\u201d (above) pairs steps by access specification and place "
        "in the sequence.",
    )


def _scroll(inner: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    area.setWidget(inner)
    return area


class CompareView(QWidget):
    report_requested = Signal(object)  # CompareRequest
    failed = Signal(str)
    loaded = Signal()  # a comparison is shown (tests wait for it)

    def __init__(
        self,
        request: CompareRequest,
        tasks: StoreTasks,
        labels: dict[int, str] | None = None,
        parent: QWidget | None = None,
        repeat_keys: dict[int, tuple] | None = None,
    ):
        """``labels``: run id -> "Run 3 “before”" for the baseline menu (the runs as History listed them).
        ``repeat_keys``: run id -> ``compare_data.repeat_key``; runs sharing one can be one side."""
        super().__init__(parent)
        self.request = request
        self.tasks = tasks
        self.data: ComparisonData | None = None
        self.run_order = request.run_ids  # every run in the comparison, oldest first
        self.labels = labels or {}
        self.repeat_keys = repeat_keys or {}
        self.live = LiveResults()
        self._pending = 0

        self.banner, self.banner_text, blay = stored_banner()
        self.banner_text.setText("Comparing stored runs\u2026")
        self.report_button = button(
            "Report\u2026",
            "Write this comparison as a report (HTML, PDF, XLSX, CSV)",
            lambda: self.report_requested.emit(self.request),
        )
        blay.addWidget(self.report_button)

        self.grouped = QCheckBox("Repeats as one side")
        self.grouped.setToolTip(
            "Runs of the same plan with the same tags are repeats of one measurement: "
            "compared by their mean, their spread is the noise"
        )
        self.grouped.setChecked(True)
        self.grouped.setVisible(len(repeat_groups(self.run_order, self.repeat_keys)) < len(self.run_order))
        self.baseline = QComboBox()
        self.baseline.setToolTip(
            "The run (or group of repeated runs) the others are compared with (\u201cbefore\u201d)"
        )
        self._fill_baseline(request.baseline[0])
        self.threshold = QDoubleSpinBox()
        self.threshold.setRange(0.0, 100.0)
        self.threshold.setDecimals(1)
        self.threshold.setSingleStep(0.5)
        self.threshold.setSuffix(" %")
        self.threshold.setValue(request.threshold_pct)
        self.threshold.setToolTip(
            f"Changes within this percentage are run-to-run noise and not marked "
            f"(default {DEFAULT_THRESHOLD_PCT:g} %). Where repeated runs exist, their "
            "spread sets the noise instead."
        )
        self.match = QComboBox()
        for key, text in MATCH_LABELS.items():
            self.match.addItem(text, key)
        self.match.setCurrentIndex(self.match.findData(request.match))
        self.match.setToolTip(
            "How steps are paired: by what the access specification does (its lines, not "
            "its name), queue depth and target set, or by the access specification's lines "
            "alone (e.g. to compare QD 64 with QD 16)"
        )
        self.repeats = QCheckBox("Noise from repeated runs")
        self.repeats.setChecked(request.repeats)
        self.repeats.setToolTip(
            "Runs of the same plan with the same tags are repeats of one measurement: "
            "their spread (twice the coefficient of variation) is the noise threshold"
        )
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Baseline:"))
        controls.addWidget(self.baseline, 2)
        controls.addWidget(self.grouped)
        controls.addWidget(QLabel("Threshold:"))
        controls.addWidget(self.threshold)
        controls.addWidget(QLabel("Match:"))
        controls.addWidget(self.match, 2)
        controls.addWidget(self.repeats)

        # what changed and the findings: one line that opens on a click (the charts below need the height)
        self.differs = FoldBox()
        self.differs.setObjectName("differs")
        self.differs.setStyleSheet(CALLOUT_STYLE)
        self.differs.hide()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setEnabled(False)
        self.status.setText("Comparing the runs\u2026")

        self.tables_box = QWidget()
        self.tables_layout = QVBoxLayout(self.tables_box)
        self.charts_box = QWidget()
        self.charts_layout = QVBoxLayout(self.charts_box)
        self.over_time = StoredCharts(
            "seconds into each step (the compared steps one after another)", remember="compare"
        )
        self.over_time_note = ElidedLabel(tip_is_text=True)  # one line, whole in its tooltip
        self.over_time_note.setEnabled(False)
        over = QWidget()
        self.over_page = over
        olay = QVBoxLayout(over)
        olay.setContentsMargins(0, 4, 0, 0)
        olay.addWidget(self.over_time_note)
        olay.addWidget(ChartScroller(self.over_time), 1)
        self.inner_tabs = QTabWidget()
        self.inner_tabs.setDocumentMode(True)
        self.inner_tabs.addTab(_scroll(self.tables_box), "Before / after tables")
        self.inner_tabs.addTab(_scroll(self.charts_box), "Charts per metric")
        self.inner_tabs.addTab(over, "Over time")

        lay = QVBoxLayout(self)
        lay.addWidget(self.banner)
        lay.addLayout(controls)
        lay.addWidget(self.differs)
        lay.addWidget(self.status)
        lay.addWidget(self.inner_tabs, 1)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(RECOMPUTE_MS)
        self._timer.timeout.connect(self.load)
        self.baseline.currentIndexChanged.connect(lambda _i: self._changed())
        self.threshold.valueChanged.connect(lambda _v: self._changed())
        self.match.currentIndexChanged.connect(lambda _i: self._changed())
        self.repeats.toggled.connect(lambda _b: self._changed())
        self.grouped.toggled.connect(lambda _b: self._regroup())

    @property
    def run_ids(self) -> set[int]:
        return set(self.run_order)

    def title(self) -> str:
        req = self.current_request()  # groups of repeats shown as such: "Compare 1,2,3 vs 4,5"
        return f"Compare {','.join(map(str, req.baseline))} vs " + ", ".join(
            ",".join(map(str, g)) for g in req.candidates
        )

    def sides(self) -> list[list[int]]:
        """The runs as sides: groups of repeats (when "Repeats as one side" is ticked) or one run each."""
        if self.grouped.isChecked():
            return repeat_groups(self.run_order, self.repeat_keys)
        return [[i] for i in self.run_order]

    def _side_label(self, ids: list[int]) -> str:
        if len(ids) == 1:
            return self.labels.get(ids[0], f"Run {ids[0]}")
        tags = ", ".join(self.repeat_keys.get(ids[0], ((), ()))[1])
        return f"Runs {', '.join(map(str, ids))} (repeats" + (f", tagged {tags})" if tags else ")")

    def _fill_baseline(self, keep: int) -> None:
        """The sides in the baseline menu, keeping the one holding run ``keep`` chosen."""
        self.baseline.blockSignals(True)
        self.baseline.clear()
        for ids in self.sides():
            self.baseline.addItem(self._side_label(ids), ids[0])
            if keep in ids:
                self.baseline.setCurrentIndex(self.baseline.count() - 1)
        self.baseline.blockSignals(False)

    def _regroup(self) -> None:
        self._fill_baseline(self.baseline.currentData())
        self._changed()

    def current_request(self) -> CompareRequest:
        base = self.baseline.currentData()
        sides = self.sides()
        chosen = next((g for g in sides if base in g), sides[0])
        return CompareRequest(
            chosen,
            [g for g in sides if g is not chosen],
            round(self.threshold.value(), 1),
            self.match.currentData(),
            self.repeats.isChecked(),
        )

    def _changed(self) -> None:
        self.status.setText("Comparing\u2026")
        self.status.show()
        self._timer.start()

    def load(self) -> None:
        self._timer.stop()
        req = self.current_request()
        self.request = req
        self._pending += 1
        self.tasks.submit(
            "comparing runs",
            lambda store: load_comparison(store, req),
            self._loaded,
            self._failed,
            owner=self,
        )

    def _failed(self, message: str) -> None:
        self._pending -= 1
        self.status.setText(f"The runs cannot be compared: {message}")
        self.status.show()
        self.failed.emit(message)

    def _loaded(self, data: ComparisonData) -> None:
        self._pending -= 1
        if self._pending:
            return  # the user changed a setting meanwhile: the newer comparison follows
        self.data = data
        rep = data.report
        base = rep.baseline
        names = [
            f"{c.candidate.label}" + (f" \u201c{c.candidate.name}\u201d" if c.candidate.name else "")
            for c in rep.comparisons
        ]
        self.banner_text.setText(
            f"Stored runs compared \u2014 baseline {base.label}"
            + (f" \u201c{base.name}\u201d" if base.name else "")
            + f"; candidate{'s' * (len(names) != 1)} {', '.join(names)}. Higher IOPS and MB/s are better, lower "
            "response times are better; changes within noise are not marked."
        )
        self._show_differences(data)
        self.status.setText("\n".join(rep.notes))
        self.status.setVisible(bool(rep.notes))
        self._fill_tables(data)
        self._fill_charts(data)
        self._fill_over_time(data)
        self.loaded.emit()

    def _show_differences(self, data: ComparisonData) -> None:
        """What changed first, then the findings in words (the report's summary), per comparison."""
        parts = []
        lines = []
        for block in data.report.summary:
            lines.append(
                f"{block.heading} — what changed: {'; '.join(block.what_changed)}"
                + (f" — {block.sentences[0]}" if block.sentences else "")
            )
            items = "".join(f"<li>{escape(s)}</li>" for s in block.sentences)
            rest = "".join(
                f"<p style='margin:2px 0'>{escape(s)}</p>"
                for s in [f"Headline: {x}" for x in block.headlines]
                + ([block.unchanged] if block.unchanged else [])
                + [f"Left out (incomplete): {x}" for x in block.left_out]
                + [f"Validity: {x}" for x in block.validity]
            )
            parts.append(
                f"<p style='margin:2px 0'><b>{escape(block.heading)}</b><br><b>What changed:</b> "
                f"{escape('; '.join(block.what_changed))}</p>"
                f"<ul style='margin:2px 0 2px -20px'>{items}</ul>{rest}"
            )
        more = f"  (+{len(lines) - 1} more)" if len(lines) > 1 else ""
        self.differs.set_content(
            (lines[0] if lines else "") + more + "  — click for all findings", "".join(parts)
        )
        self.differs.setVisible(bool(parts))

    @staticmethod
    def _clear(layout: QVBoxLayout) -> None:
        while layout.count():
            item = layout.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()

    def _fill_tables(self, data: ComparisonData) -> None:
        self._clear(self.tables_layout)
        self.sections: list[TableSection] = []
        rep = data.report
        for t in rep.comparison_tables + rep.headline_tables:
            sec = TableSection(t)
            sec.notes.setText("\n".join(gui_wording(n) for n in t.notes))
            self.tables_layout.addWidget(sec)
            self.sections.append(sec)
        if rep.unmatched_tables:
            head = QLabel("Not compared")
            f = head.font()
            f.setBold(True)
            f.setPointSizeF(f.pointSizeF() * 1.2)
            head.setFont(f)
            self.tables_layout.addWidget(head)
            for t in rep.unmatched_tables:
                sec = TableSection(t)
                sec.notes.setText("\n".join(gui_wording(n) for n in t.notes))
                self.tables_layout.addWidget(sec)
                self.sections.append(sec)
        self.tables_layout.addStretch(1)

    def _fill_charts(self, data: ComparisonData) -> None:
        self._clear(self.charts_layout)
        self.bar_charts = [BarChartView(ch) for ch in data.report.charts]
        for v in self.bar_charts:
            self.charts_layout.addWidget(v)
        if not self.bar_charts:
            self.charts_layout.addWidget(QLabel("No steps in common: nothing to chart."))
        self.charts_layout.addStretch(1)

    def _fill_over_time(self, data: ComparisonData) -> None:
        from app.ui.history.stored_series import overlay

        keys = overlay(self.live, data.segments)
        labels = [k[2] for k in keys]
        colors = {p.label: p.color for _spec, parts in data.segments for p in parts}
        self.over_time.set_series(keys, labels, [colors[label] for label in labels])  # as in the bar charts
        self.over_time.show(self.live, LAST)
        if data.segments:  # in the tooltip: the charts get the line
            self.over_time_note.setText(
                "Each run's matched steps on one time axis, every step from its own start "
                "(#1, #2 \u2026 mark the access specifications in table order); numbers "
                "of each interval, All Managers. A group of runs is drawn by its "
                "first run."
            )
            self.over_page.setToolTip(self.over_time_note.text())
        else:
            self.over_time_note.setText(
                "These runs have no samples over time to overlay (an imported Iometer "
                "results.csv keeps only final numbers; its per-update log, "
                "instresults.csv, has them)."
            )
        self.over_time.setVisible(bool(data.segments))
        self.over_time_note.setVisible(not data.segments)
