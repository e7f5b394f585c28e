"""The status bar's permanent fields: run state, step i/N, elapsed and remaining time."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QStatusBar

from app.model.units import format_duration
from app.ui.run.run_driver import IDLE_STATE, RUNNING, STARTING, RunDriver


class RunStatus:
    def __init__(self, bar: QStatusBar):
        self.state = QLabel()
        self.step = QLabel()
        self.time = QLabel()
        for w in (self.state, self.step, self.time):
            w.setMinimumWidth(120)
            bar.addPermanentWidget(w)

    def show_progress(self, c: RunDriver) -> None:
        p = c.progress
        if c.state == IDLE_STATE:
            self.state.setText(f"Last run: {c.last_status}" if c.last_status else "Ready")
            summary = c.last_summary if c.last_status else None  # what ran, stopped, failed, was skipped
            self.step.setText(summary.text() if summary else f"{p.steps} step(s)" if p.steps else "")
            self.time.setText("")
            return
        if c.state == STARTING:
            self.state.setText("Starting…")
            self.step.setText("connecting to the managers and checking the targets")
            self.time.setText("")
            return
        self.state.setText("Running" if c.state == RUNNING else "Stopping…")
        self.step.setText(f"Step {max(p.step, 1)}/{p.steps}")
        rem = p.remaining()
        self.time.setText(
            f"Elapsed {format_duration(p.elapsed())}  ·  Remaining "
            + (format_duration(rem) if rem is not None else "until stopped")
        )
