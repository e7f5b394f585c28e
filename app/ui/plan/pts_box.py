"""Test Setup's SNIA PTS choice: `fiometer pts` from the window (app.model.pts, app.engine.run.pts_runner). The
PTS builds its own sequence (purge, preconditioning, rounds of the test's stimuli on one raw device); the
rounds and the steady-state decision so far are said in the messages as they run."""

from __future__ import annotations

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

from app.model.pts import STIMULUS_SETS, TEST, TESTS, VARIANT, VARIANTS, PtsSetup

PURGES = (
    "none",
    "blkdiscard",
    "blkdiscard-secure",
)  # app.engine.guards.purge.METHODS (no engine import here)


class PtsBox(QGroupBox):
    requested = Signal(object)  # a PtsSetup

    def __init__(self, parent: QWidget | None = None):
        super().__init__("SNIA PTS v2.0.2: purge, precondition, rounds until steady state", parent)
        self.device = QLineEdit()
        self.device.setPlaceholderText("/dev/nvme1n1")
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
        rows = (
            (("Device", self.device), ("Test", self.test)),
            (("Variant", self.variant), ("Purge", self.purge)),
            (("Rounds at most", self.rounds_max), ("Round time", self.round_time)),
            (("Stimuli", self.stimuli),),
        )
        for r, pairs in enumerate(rows):
            for c, (label, w) in enumerate(pairs):
                lay.addWidget(QLabel(label), r, 2 * c)
                lay.addWidget(w, r, 2 * c + 1)
        lay.addWidget(self.start, 3, 3)
        lay.setColumnStretch(1, 1)
        lay.setColumnStretch(3, 1)

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
