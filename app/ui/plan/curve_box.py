"""Test Setup's load search: `fiometer curve` from the window (app.engine.run.curve_runner). For each access
specification, the highest queue depth (or workers, when the plan cycles workers) whose p99 keeps a limit."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QWidget,
)


class CurveBox(QGroupBox):
    requested = Signal(float, str, int)  # p99 limit in ms, "iops" | "mbps", highest load (0: the default)

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Load search: the highest load within a p99 limit", parent)
        self.p99 = QDoubleSpinBox()
        self.p99.setRange(0.01, 600_000.0)
        self.p99.setDecimals(2)
        self.p99.setValue(5.0)
        self.p99.setSuffix(" ms")
        self.p99.setToolTip("The 99th percentile response time each step must keep")
        self.lead = QComboBox()
        self.lead.addItem("IOPS", "iops")
        self.lead.addItem("MB/s", "mbps")
        self.lead.setToolTip("The figure the answer leads with")
        self.max_load = QSpinBox()
        self.max_load.setRange(0, 65536)
        self.max_load.setSpecialValueText("default")
        self.max_load.setToolTip("The highest queue depth (default 256), or workers (default: all), to try")
        self.start = QPushButton("Find the highest load")
        self.start.setToolTip(
            "Runs at most 8 measured steps per access specification (bracket, then bisect), then "
            "confirms the answer once; stored as a run like any other"
        )
        self.start.clicked.connect(
            lambda: self.requested.emit(self.p99.value(), self.lead.currentData(), self.max_load.value())
        )
        lay = QHBoxLayout(self)
        for w in (QLabel("p99 ≤"), self.p99, QLabel("lead with"), self.lead, QLabel("up to"), self.max_load):
            lay.addWidget(w)
        lay.addStretch(1)
        lay.addWidget(self.start)
