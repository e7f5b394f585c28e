"""Iometer's question at Start when "Record Last Update Results" is ENABLED: where its results file goes.

Iometer asks for the results file (default name results.csv) every time a test starts; the per-update file
is written beside it as ``inst`` + its name. Fiometer asks only when the plan has the setting on, since its
own results always go to the results database.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from app.analysis.iometer_update_log import update_log_path
from app.model.plan import Plan

CANCELLED = "cancelled"


def ask_results_file(parent: QWidget, plan: Plan, last: Path | None) -> Path | None | str:
    """The results file the user chose; None when the plan does not record per-update results; CANCELLED when
    the user closed the dialog (then the run does not start, as in Iometer)."""
    if not plan.setup.iometer.record_last_update:
        return None
    start = last if last is not None else Path.home() / "results.csv"
    path, _ = QFileDialog.getSaveFileName(
        parent,
        "Iometer results file (Record Last Update Results is on)",
        str(start),
        "Iometer results (*.csv);;All files (*)",
        options=QFileDialog.Option.DontConfirmOverwrite,
    )
    if not path:
        return CANCELLED
    return Path(path)


def describe(results_file: Path) -> str:
    return (
        f"Iometer results: the run is appended to {results_file} when it ends; every update goes to "
        f"{update_log_path(results_file)} as it runs"
    )
