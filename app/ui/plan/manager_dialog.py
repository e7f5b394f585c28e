"""Add a manager (a host running ``fio --server``) or set where an existing one runs; probe it first."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QWidget,
)

from app.engine.run.managers import EXPOSED_WARNING, ManagerError, is_loopback, split_host
from app.engine.transports.fioproto import DEFAULT_PORT
from app.model.plan import LOCAL, Manager
from app.ui.plan.hosts import HostFacts, RemoteProbe
from app.ui.widgets import button, error_label


def parse_host_port(text: str) -> tuple[str, int] | None:
    """(host, port) with fio's default port 8765, or None if it is not HOST[:PORT]."""
    try:
        return split_host(text)
    except ManagerError:
        return None


def host_text(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class AddManagerDialog(QDialog):
    """With ``manager`` given, sets where that manager runs (imported managers have no host yet)."""

    def __init__(self, taken_names: set[str], parent: QWidget | None = None, manager: Manager | None = None):
        super().__init__(parent)
        self.manager = manager
        self.setWindowTitle(f"Where manager {manager.name} runs" if manager else "Add manager")
        self.taken = taken_names - ({manager.name} if manager else set())
        self.facts: HostFacts | None = None
        form = QFormLayout(self)
        intro = QLabel(
            f"A manager runs on this machine, or on a host running <tt>fio --server</tt> (port "
            f"{DEFAULT_PORT} unless you name another). Fiometer sends it the jobs and reads its live "
            "statistics."
        )
        intro.setWordWrap(True)
        form.addRow(intro)
        if manager is not None and manager.address_in_file.strip():
            where = QLabel(
                f"The imported file's author ran Dynamo at {manager.address_in_file}; that address is "
                "not contacted unless you enter it here."
            )
            where.setWordWrap(True)
            form.addRow(where)
        self.local = QCheckBox("This machine (fio runs here)")
        self.local.setVisible(manager is not None)
        form.addRow(self.local)
        self.host = QLineEdit()
        self.host.setPlaceholderText(f"host[:port], e.g. storage-01:{DEFAULT_PORT} or 192.0.2.10")
        self.host.setToolTip("Host name or address of the machine running fio --server, optionally :port")
        if manager is not None and manager.host not in (None, LOCAL):
            self.host.setText(manager.host)
        self.local.setChecked(manager is not None and manager.host == LOCAL)
        self.probe_button = button(
            "Probe", "Connect and ask the fio server for its name, OS and fio version", self.probe
        )
        row = QHBoxLayout()
        row.addWidget(self.host, 1)
        row.addWidget(self.probe_button)
        form.addRow("Host:", row)
        self.name = QLineEdit(manager.name if manager else "")
        self.name.setPlaceholderText("defaults to the host name")
        self.name.setEnabled(manager is None)
        form.addRow("Manager name:", self.name)
        self.error = error_label()
        form.addRow("", self.error)
        self.result = QLabel()
        self.result.setObjectName("probeResult")
        self.result.setWordWrap(True)
        form.addRow("Probe:", self.result)
        self.exposure = QLabel(f"⚠ {EXPOSED_WARNING}.")
        self.exposure.setWordWrap(True)
        self.exposure.setVisible(False)
        form.addRow(self.exposure)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self.prober = RemoteProbe()  # no parent: it must outlive the dialog while a probe runs
        self.prober.done.connect(self._probed)
        self.host.textChanged.connect(self._check)
        self.name.textChanged.connect(self._check)
        self.local.toggled.connect(self._check)
        # Host, then its name, then Probe (beside the host): a name typed after Tab lands in the name field
        QWidget.setTabOrder(self.local, self.host)
        QWidget.setTabOrder(self.host, self.name)
        QWidget.setTabOrder(self.name, self.probe_button)
        QWidget.setTabOrder(self.probe_button, self.buttons)
        self.setMinimumWidth(520)
        self._check()

    def host_port(self) -> tuple[str, int] | None:
        return parse_host_port(self.host.text())

    def manager_name(self) -> str:
        if self.manager is not None:
            return self.manager.name
        hp = self.host_port()
        return self.name.text().strip() or (hp[0] if hp else "")

    def address(self) -> str:
        """What goes into Manager.host: 'local' or host:port."""
        if self.local.isChecked():
            return LOCAL
        hp = self.host_port()
        return host_text(*hp) if hp else ""

    def _check(self) -> None:
        local = self.local.isChecked()
        self.host.setEnabled(not local)
        self.probe_button.setEnabled(not local)
        msg = ""
        hp = self.host_port()
        if not local and not self.host.text().strip():
            msg = "Enter the host running fio --server."
        elif not local and hp is None:
            msg = "Write the host as name, address or name:port (port 1-65535), e.g. [::1]:8765 for IPv6."
        elif self.manager_name() in self.taken:
            msg = f"A manager named {self.manager_name()!r} already exists; give this one another name."
        self.error.setText(msg)
        self.error.setVisible(bool(msg))
        self.exposure.setVisible(not local and hp is not None and not is_loopback(hp[0]))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not msg)

    def probe(self) -> None:
        hp = self.host_port()
        if hp is None:
            self._check()
            return
        self.result.setStyleSheet("")
        self.result.setText(f"Contacting {host_text(*hp)}…")
        self.prober.run("", *hp)

    def _probed(self, _name: str, facts: HostFacts) -> None:
        self.facts = None if facts.error else facts
        if facts.error:
            self.result.setText(f"Not reachable: {facts.error}")
            self.result.setStyleSheet("color: #d32f2f;")
        else:
            self.result.setText(f"Reachable: {facts.hostname}, {facts.os}, fio {facts.fio_version}")
            self.result.setStyleSheet("")
