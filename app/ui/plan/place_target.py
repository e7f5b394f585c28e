"""Place target: where a plan's target (an Iometer drive such as C: or an example's TESTFILE) is opened on
its manager; Browse for local managers, a suggestion that fits a remote manager's OS, and one placement
for every worker of the manager that uses the same target."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QWidget,
)

from app.model.plan import LOCAL, Manager, Target
from app.store.db_location import default_test_file, suggested_test_file
from app.ui.widgets import button


def suggestion(manager: Manager, os_name: str) -> str:
    """A place that fits the manager: the user's data folder here, a common folder on a remote OS."""
    if manager.host == LOCAL:
        return str(default_test_file())
    return suggested_test_file(os_name) if os_name else ""


class PlaceTargetDialog(QDialog):
    def __init__(self, manager: Manager, target: Target, os_name: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(f"Place target {target.name}")
        self.setMinimumWidth(560)
        self.manager = manager
        local = manager.host == LOCAL
        form = QFormLayout(self)
        where = "this machine" if local else f"{manager.host} ({os_name or 'OS not yet known'})"
        form.addRow(
            QLabel(
                f"Where manager <b>{manager.name}</b> on {where} opens target <b>{target.name}</b>: "
                "a test file (created when the run starts) or a device."
            )
        )
        self.path = QLineEdit(target.path or suggestion(manager, os_name))
        self.path.setPlaceholderText(
            "e.g. " + (suggestion(manager, os_name) or "/tmp/" + "fiometer-test.tst")
        )
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        self.browse = button("Browse…", "Choose a file on this machine", self._browse)
        self.browse.setEnabled(local)
        if not local:
            self.browse.setToolTip("The manager is another machine: type a path that exists there")
        row.addWidget(self.browse)
        form.addRow("Path:", row)
        self.everywhere = QCheckBox(f"Every worker of {manager.name} that uses {target.name}")
        self.everywhere.setChecked(True)
        form.addRow("", self.everywhere)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)

    def _browse(self) -> None:
        start = self.path.text().strip() or str(Path.home())
        path, _ = QFileDialog.getSaveFileName(
            self, "Test file", start, "All files (*)", options=QFileDialog.Option.DontConfirmOverwrite
        )
        if path:
            self.path.setText(path)

    def chosen(self) -> str | None:
        return self.path.text().strip() or None
