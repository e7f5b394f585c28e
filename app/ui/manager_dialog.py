"""Add a manager: a host running ``fio --server``, probed before it is added."""

from __future__ import annotations

import re
import threading
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QWidget,
)

from app.ui.widgets import button, error_label

DEFAULT_PORT = 8765  # fio --server's default
_HOST_PORT = re.compile(r"^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.\-]+)(?::(\d{1,5}))?$")
NO_REMOTE = ("Remote managers arrive with the engine: this build cannot contact fio servers yet. "
             "You can still add the manager to the plan; it runs once remote support is in place.")


def parse_host_port(text: str) -> tuple[str, int] | None:
    m = _HOST_PORT.match(text.strip())
    if not m:
        return None
    port = int(m.group(2)) if m.group(2) else DEFAULT_PORT
    return (m.group(1), port) if 0 < port < 65536 else None


def find_probe() -> Any | None:
    """The engine's probe(host, port) for fio servers, or None while it is not in this build."""
    try:
        from app.engine.remote import probe  # type: ignore[attr-defined]
    except ImportError:
        return None
    return probe


def describe_probe(result: Any) -> tuple[bool, str]:
    """(reachable, text) from whatever the engine's probe returns or raises."""
    if isinstance(result, BaseException):
        return False, f"Not reachable: {result}"
    parts = []
    for attr, label in (("hostname", "host"), ("os", "OS"), ("fio_version", "fio")):
        v = getattr(result, attr, None)
        if v:
            parts.append(f"{label} {v}")
    return True, "Reachable: " + (", ".join(parts) if parts else str(result))


class _ProbeRunner(QObject):
    done = Signal(object)

    def run(self, probe: Any, host: str, port: int) -> None:
        def work() -> None:
            try:
                self.done.emit(probe(host, port))
            except Exception as e:  # unreachable, refused, wrong protocol: a reason for the user
                self.done.emit(e)
        threading.Thread(target=work, name="fiometer-probe", daemon=True).start()


class AddManagerDialog(QDialog):
    def __init__(self, taken_names: set[str], parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Add manager")
        self.taken = taken_names
        self.facts: Any = None
        form = QFormLayout(self)
        intro = QLabel("A manager is a host running <tt>fio --server</tt> (port 8765 unless you name "
                       "another). Fiometer sends it the jobs and reads its live statistics.")
        intro.setWordWrap(True)
        form.addRow(intro)
        self.host = QLineEdit()
        self.host.setPlaceholderText("host:port, e.g. storage-01:8765 or 192.0.2.10")
        self.host.setToolTip("Host name or address of the machine running fio --server, optionally :port")
        probe_button = button("Probe", "Connect to the host and ask for its name, OS and fio version", self.probe)
        row = QHBoxLayout()
        row.addWidget(self.host, 1)
        row.addWidget(probe_button)
        form.addRow("Host:", row)
        self.name = QLineEdit()
        self.name.setPlaceholderText("defaults to the host name")
        form.addRow("Manager name:", self.name)
        self.error = error_label()
        form.addRow("", self.error)
        self.result = QLabel()
        self.result.setObjectName("probeResult")
        self.result.setWordWrap(True)
        form.addRow("Probe:", self.result)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self._runner = _ProbeRunner(self)
        self._runner.done.connect(self._probed)
        self.host.textChanged.connect(self._check)
        self.name.textChanged.connect(self._check)
        self._check()

    def host_port(self) -> tuple[str, int] | None:
        return parse_host_port(self.host.text())

    def manager_name(self) -> str:
        hp = self.host_port()
        return self.name.text().strip() or (hp[0] if hp else "")

    def address(self) -> str:
        hp = self.host_port()
        return f"{hp[0]}:{hp[1]}" if hp else ""

    def _check(self) -> None:
        msg = ""
        if not self.host.text().strip():
            msg = "Enter the host running fio --server."
        elif self.host_port() is None:
            msg = "Write the host as name, address or name:port (port 1-65535)."
        elif self.manager_name() in self.taken:
            msg = f"A manager named {self.manager_name()!r} already exists; give this one another name."
        self.error.setText(msg)
        self.error.setVisible(bool(msg))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not msg)

    def probe(self) -> None:
        hp = self.host_port()
        if hp is None:
            self._check()
            return
        probe = find_probe()
        if probe is None:
            self.result.setText(NO_REMOTE)
            return
        self.result.setText(f"Contacting {hp[0]}:{hp[1]}…")
        self._runner.run(probe, *hp)

    def _probed(self, result: Any) -> None:
        ok, text = describe_probe(result)
        self.facts = result if ok else None
        self.result.setText(text)
        self.result.setStyleSheet("" if ok else "color: #d32f2f;")
