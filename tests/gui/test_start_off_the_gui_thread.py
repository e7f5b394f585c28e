"""Issue 40.3: Start returns the window to its event loop while the managers are probed and the checks run
(a silent host holds its probe for the probe's whole timeout; idle fio servers answer within a second).
The window paints and answers input meanwhile, says it is starting, and Stop all or closing cancels the start.
A real window, a real listening socket that never answers."""

from __future__ import annotations

import socket
import sys
import threading
import time
import traceback

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot

from app.model.plan import Manager, Target, Worker
from app.ui.main_window import MainWindow
from app.ui.run.run_driver import CANCELLED, IDLE_STATE, STARTING
from tests.gui.conftest import local_plan


def silent_host() -> socket.socket:
    """A host that accepts the probe's connection and never says a word."""
    return socket.create_server(("127.0.0.61", 0))


def plan_with(tmp_path, server: socket.socket):
    plan = local_plan(tmp_path, workers=1)
    host, port = server.getsockname()[:2]
    remote = Manager("SILENT", f"{host}:{port}", workers=[Worker("W1", specs=["S"], targets=[Target("/t")])])
    plan.managers.append(remote)
    return plan


class StackSampler(threading.Thread):
    """Where the GUI thread is, every 20 ms: said when a stall is found (where it was, or that it was not
    running Python at all: waiting for the GIL or in Qt)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.main = threading.main_thread().ident
        self.samples: list[tuple[float, str]] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.02):
            frame = sys._current_frames().get(self.main)  # noqa: SLF001 - a test's diagnostics
            where = traceback.format_stack(frame, limit=6) if frame is not None else []
            self.samples.append((time.monotonic(), "".join(where[-3:])))

    def during(self, start: float, end: float) -> str:
        seen = [f"+{t - start:.2f}s {w}" for t, w in self.samples if start <= t <= end]
        return "\n".join(seen[:12]) or "no sample: the sampler itself got no CPU or GIL"


class Pinger(QObject):
    """What input is to the window: events posted to the GUI thread every 10 ms from another thread, each
    noting when it was sent; handled, it notes how long it waited (a QTimer of the test's own was seen not to
    fire in the nested loop on Python 3.13 while the window's events went on, so it measured itself)."""

    ping = Signal(float)

    def __init__(self, on_ping) -> None:
        super().__init__()
        self.waits: list[tuple[float, float]] = []  # (sent, handled)
        self.on_ping = on_ping
        self.ping.connect(self._handled, Qt.ConnectionType.QueuedConnection)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._send, daemon=True)

    def _send(self) -> None:
        while not self.done.wait(0.01):
            self.ping.emit(time.monotonic())

    @Slot(float)
    def _handled(self, sent: float) -> None:
        self.waits.append((sent, time.monotonic()))
        self.on_ping()


def test_the_window_keeps_its_event_loop_while_a_silent_host_is_probed(window: MainWindow, tmp_path, qtbot):
    server = silent_host()
    sampler = StackSampler()
    states: list[str] = []
    pinger = Pinger(
        lambda: states.append(f"{window.controller.state}: {window.run_control.status.state.text()}")
    )
    try:
        window.doc.replace(plan_with(tmp_path, server))
        sampler.start()
        pinger.thread.start()
        t0 = time.monotonic()
        started = window.run_control.start_run()
        t1 = time.monotonic()
    finally:
        pinger.done.set()
        sampler.done.set()
        server.close()
    held = t1 - t0
    assert not started  # the silent host is refused after the probe's timeout, said in words
    assert held > 2.0, held  # the probe waited for the silent host
    during = [(sent, got) for sent, got in pinger.waits if t0 <= sent and got <= t1]
    assert len(during) > held / 0.01 * 0.3, (len(during), held)  # handled while Start went on
    sent, got = max(during, key=lambda w: w[1] - w[0])
    where = sampler.during(sent, got)
    print(f"longest input wait while starting: {got - sent:.3f} s at +{sent - t0:.2f} s")  # (pytest -rP)
    # the probe's whole timeout held the window before; an input posted as Start begins was seen waiting
    # 0.57-0.62 s in the full suite (Debian 12 and 13) while the GUI thread sat in its event loop, each event
    # waiting for the GIL: likely the application-wide Undo-keys filter (a Python call per event; now on the
    # focused plan field only), 0.169 s in the whole tests/gui after it
    assert got - sent < 1.0, (
        f"an input waited {got - sent:.2f} s, from +{sent - t0:.2f} s; the GUI thread:\n{where}"
    )
    assert f"{STARTING}: Starting…" in states, set(states)  # the status bar said so meanwhile
    assert window.controller.state == IDLE_STATE


def test_stop_all_while_starting_cancels_the_start(window: MainWindow, tmp_path, qtbot):
    server = silent_host()
    finished: list[str] = []
    window.controller.finished.connect(finished.append)
    seen: list[str] = []

    def stop_while_starting() -> None:
        seen.append(window.controller.state)
        seen.append(window.run_control.status.state.text())
        window.action_map["stop_all"].trigger()

    try:
        window.doc.replace(plan_with(tmp_path, server))
        QTimer.singleShot(300, stop_while_starting)
        t0 = time.monotonic()
        started = window.run_control.start_run()
    finally:
        server.close()
    assert seen[:2] == [STARTING, "Starting…"], seen
    assert not started
    assert finished == [CANCELLED]
    assert window.controller.state == IDLE_STATE and window.controller.last_status == CANCELLED
    assert time.monotonic() - t0 < 8  # the probe's own timeout at most; nothing ran


def test_closing_while_starting_closes_the_window_and_runs_nothing(window: MainWindow, tmp_path, qtbot):
    server = silent_host()
    try:
        window.doc.replace(plan_with(tmp_path, server))
        QTimer.singleShot(300, window.close)  # the fixture answers the close question "discard"
        started = window.run_control.start_run()
    finally:
        server.close()
    assert not started
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=10000)
    assert window.controller.last_status == CANCELLED and window.controller.run_end is None
