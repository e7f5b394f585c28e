"""At Start: the plain fio servers this run would write on, one checkbox each (``engine.guards.unverified``).

Nothing is ticked to begin with; only the ticked hosts are armed, for this run only, and Cancel (the
default) keeps every one of them unwritten.
"""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from app.engine.guards.unverified import CANNOT_VERIFY

ACTION = "Write on the ticked hosts and start"


class UnverifiedHostsDialog(QDialog):
    def __init__(self, hosts: list[tuple[str, str]], parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Writes Fiometer cannot verify")
        layout = QVBoxLayout(self)
        text = QLabel(
            f"This run writes on plain fio servers (or on ssh:// hosts without python3, where Fiometer's "
            f"checks cannot run). {CANNOT_VERIFY}.\n\nTick each host where it may write anyway, or cancel "
            "and give the manager as ssh://HOST (with python3 there): there Fiometer checks and opens what "
            "fio writes."
        )
        text.setWordWrap(True)
        layout.addWidget(text)
        self.boxes: dict[str, QCheckBox] = {}
        for name, host in hosts:
            box = QCheckBox(f"{name} ({host}): write without verification")
            box.toggled.connect(self._update)
            self.boxes[name] = box
            layout.addWidget(box)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.go = self.buttons.addButton(ACTION, QDialogButtonBox.ButtonRole.AcceptRole)
        self.go.setEnabled(False)
        self.go.setAutoDefault(False)
        cancel = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        cancel.setDefault(True)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def _update(self) -> None:
        self.go.setEnabled(bool(self.chosen()))

    def chosen(self) -> set[str]:
        return {name for name, box in self.boxes.items() if box.isChecked()}


def ask_hosts(hosts: list[tuple[str, str]], parent: QWidget | None = None) -> set[str]:
    """The managers the user armed for unverified writes; empty when cancelled."""
    dialog = UnverifiedHostsDialog(hosts, parent)
    return dialog.chosen() if dialog.exec() == QDialog.DialogCode.Accepted else set()
