"""What the Topology shows about each manager's host: where it runs, its OS and fio version.

The local facts are gathered on a background thread (running ``fio --version`` must never delay
the window). Remote facts come from probing the host (see manager_dialog).

Lifetimes: the probe QObjects are created without a Qt parent and their threads hold a Python
reference to them, so a window or dialog closed while a probe runs cannot delete the object the
thread is about to emit from (that aborts the process). Qt drops the connection to a deleted
receiver by itself. At interpreter exit shiboken deletes every object, so an answer that arrives then is
dropped (``_emit``).
"""

from __future__ import annotations

import contextlib
import platform
import shutil
import subprocess
import threading
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal, SignalInstance

from app.model.plan import LOCAL, Manager


@dataclass
class HostFacts:
    os: str = ""
    fio_version: str = ""
    hostname: str = ""
    error: str = ""  # why the facts are unknown (fio missing, host unreachable)


def where_label(manager: Manager) -> str:
    if manager.host == LOCAL:
        return "this machine"
    if not manager.host:
        return "not mapped to a host"
    return manager.host


def local_facts() -> HostFacts:
    """This machine's OS and fio version; uses the engine's fio discovery when it is available."""
    os_text = f"{platform.system()} {platform.release()}".strip()
    try:
        from app.engine.transports import fio_binary  # lands with the engine
    except ImportError:
        fio_binary = None
    try:
        if fio_binary is not None:
            version = fio_binary.fio_version(fio_binary.find_fio())
        else:
            path = shutil.which("fio")
            if not path:
                return HostFacts(os_text, "", platform.node(), "fio not found on PATH")
            out = subprocess.run(
                [path, "--version"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL
            )
            version = out.stdout.strip().removeprefix("fio-")
    except Exception as e:  # FioNotFound, OSError, timeout: show the reason instead of a version
        return HostFacts(os_text, "", platform.node(), str(e).splitlines()[0] if str(e) else type(e).__name__)
    return HostFacts(os_text, version, platform.node())


PROBE_TIMEOUT = 5.0


def remote_facts(host: str, port: int, timeout: float = PROBE_TIMEOUT) -> HostFacts:
    """Ask a fio server who it is; the reason in ``error`` when it cannot be reached."""
    from app.engine.transports.fioproto import probe
    from app.engine.transports.transport import TransportError

    try:
        info = probe(host, port, timeout=timeout)
    except (TransportError, OSError) as e:
        return HostFacts(error=str(e) or type(e).__name__)
    arch = f" {info.arch}" if info.arch else ""
    cpus = f", {info.cpus} CPUs" if info.cpus else ""
    return HostFacts(f"{info.os}{arch}{cpus}", info.fio_version.removeprefix("fio-"), info.hostname)


def _emit(signal: SignalInstance, *args: object) -> None:
    """Emit a probe's answer from its thread; dropped when the app is closing, where Qt has already deleted
    the probe (shiboken frees every object at interpreter exit) and nobody waits for the answer."""
    with contextlib.suppress(RuntimeError):  # "Signal source has been deleted"
        signal.emit(*args)


class RemoteProbe(QObject):
    """Probes fio servers on threads; ``done(manager name, HostFacts)`` arrives on the GUI thread."""

    done = Signal(str, object)

    def run(self, name: str, host: str, port: int) -> None:
        threading.Thread(
            target=lambda: _emit(self.done, name, remote_facts(host, port)),
            name=f"fiometer-probe-{host}",
            daemon=True,
        ).start()


class LocalFactsProbe(QObject):
    """Looks for this machine's fio once, on a thread; the results arrive on the GUI thread."""

    ready = Signal(object)  # HostFacts
    fio_status = Signal(object)  # app.first_run.FioStatus, for the first-run banner

    def start(self) -> None:
        def work() -> None:
            from app.first_run import check_fio

            _emit(self.fio_status, check_fio())
            _emit(self.ready, local_facts())

        threading.Thread(target=work, name="fiometer-local-facts", daemon=True).start()
