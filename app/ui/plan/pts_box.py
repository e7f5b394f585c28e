"""Test Setup's SNIA PTS choice: `fiometer pts` from the window (app.model.pts, app.engine.run.pts_runner). The
PTS builds its own sequence (purge, preconditioning, rounds of the test's stimuli on one raw device); the
rounds and the steady-state decision so far are said in the messages as they run. Where Fiometer does not run on
Linux the box says why the PTS cannot run there (app.engine.devices.device_facts.unsupported_reason) and offers
nothing to fill in."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from app.engine.devices.device_facts import unsupported_reason
from app.model.pts import STIMULUS_SETS, TEST, TESTS, VARIANT, VARIANTS, PtsSetup

PURGES = (
    "none",
    "blkdiscard",
    "blkdiscard-secure",
)  # app.engine.guards.purge.METHODS (no engine import here)


class PtsBox(QGroupBox):
    requested = Signal(object)  # a PtsSetup

    def __init__(self, parent: QWidget | None = None, os_name: str | None = None):
        """``os_name``: the system Fiometer runs on (``platform.system()`` spelling; default: this one)."""
        super().__init__("SNIA PTS v2.0.2: purge, precondition, rounds until steady state", parent)
        self.not_here = unsupported_reason(os_name)  # '' where the PTS can run (Linux)
        self.device = QLineEdit()
        self.device.setPlaceholderText("" if self.not_here else "/dev/nvme1n1")
        self.device.setToolTip("The raw block device tested: its data is destroyed (you are asked to arm it)")
        self.test = QComboBox()
        for t in TESTS:
            self.test.addItem(TEST[t].title, t)
        self.variant = QComboBox()
        for v in VARIANTS:
            d = VARIANT[v]
            self.variant.addItem(f"{v} ({d.letter})", v)
            self.variant.setItemData(
                self.variant.count() - 1,
                f"active range {d.active_range_pct} %, QD {d.queue_depth} x {d.threads} threads",
                Qt.ItemDataRole.ToolTipRole,
            )
        self.variant.setCurrentIndex(VARIANTS.index("enterprise"))
        self.rounds_max = QSpinBox()
        self.rounds_max.setRange(5, 1000)
        self.rounds_max.setValue(25)
        self.round_time = QSpinBox()
        self.round_time.setRange(1, 86400)
        self.round_time.setValue(60)
        self.round_time.setSuffix(" s")
        self.round_time.setToolTip("Seconds each stimulus runs in a round (the PTS: 60)")
        self.purge = QComboBox()
        for p in PURGES:
            self.purge.addItem("none: not purged" if p == "none" else p, p)
        self.purge.setToolTip("Only an armed raw device that nothing uses is ever purged")
        self.stimuli = QComboBox()
        self.stimuli.addItem("all (the PTS)", STIMULUS_SETS[0])
        self.stimuli.addItem("tracking only (a quick check)", STIMULUS_SETS[1])
        self.start = QPushButton("Run the PTS test")
        self.start.setToolTip(
            "Builds the test's own sequence on the device (the plan's managers and workers are not used) "
            "and stores it as a run; fiometer report shows the PTS report"
        )
        self.start.clicked.connect(lambda: self.requested.emit(self.setup()))
        lay = QGridLayout(self)
        self.why_not = QLabel(self.not_here)  # in words, above the fields it leaves unused
        self.why_not.setWordWrap(True)
        self.why_not.setObjectName("ptsNotHere")
        lay.addWidget(self.why_not, 0, 0, 1, 4)
        self.why_not.setVisible(bool(self.not_here))
        rows = (
            (("Device", self.device), ("Test", self.test)),
            (("Variant", self.variant), ("Purge", self.purge)),
            (("Rounds at most", self.rounds_max), ("Round time", self.round_time)),
            (("Stimuli", self.stimuli),),
        )
        for r, pairs in enumerate(rows):
            for c, (label, w) in enumerate(pairs):
                lay.addWidget(QLabel(label), r + 1, 2 * c)
                lay.addWidget(w, r + 1, 2 * c + 1)
                w.setEnabled(not self.not_here)
        lay.addWidget(self.start, 4, 3)
        self.start.setEnabled(not self.not_here)
        if self.not_here:
            self.start.setToolTip(self.not_here)
        lay.setColumnStretch(1, 1)
        lay.setColumnStretch(3, 1)
        # the tracking variable per round, plotted as the rounds end (``show_round``); hidden until then
        self.rounds: list[tuple[int, float]] = []
        self.plot = pg.PlotWidget()
        self.plot.setBackground(None)  # the window's own (light or dark) background
        self.plot.setFixedHeight(150)
        self.plot.setLabel("bottom", "Round")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.curve = self.plot.plot([], [], pen=pg.mkPen("#2f74c0", width=2), symbol="o", symbolSize=6)
        self.verdict = QLabel()
        self.verdict.setWordWrap(True)
        lay.addWidget(self.verdict, 5, 0, 1, 4)
        lay.addWidget(self.plot, 6, 0, 1, 4)
        self.plot.hide()
        self.verdict.hide()

    def clear_rounds(self) -> None:
        self.rounds = []
        self.curve.setData([], [])

    def show_round(self, number: int, value: float | None, text: str) -> None:
        """A round ended: its figure joins the convergence plot, the decision so far shows below it."""
        if number == 1 or (self.rounds and number <= self.rounds[-1][0]):
            self.clear_rounds()  # a new run
        if value is not None:
            self.rounds.append((number, value))
        self.curve.setData([r for r, _ in self.rounds], [v for _, v in self.rounds])
        self.plot.getAxis("bottom").setTicks([[(float(r), str(r)) for r, _ in self.rounds]])
        self.verdict.setText(text)
        self.plot.show()
        self.verdict.show()
        self.updateGeometry()

    def setup(self) -> PtsSetup:
        return PtsSetup(
            target=self.device.text().strip(),
            test=self.test.currentData(),
            variant=self.variant.currentData(),
            rounds_max=self.rounds_max.value(),
            round_time=self.round_time.value(),
            purge=self.purge.currentData(),
            stimulus_set=self.stimuli.currentData(),
        )
