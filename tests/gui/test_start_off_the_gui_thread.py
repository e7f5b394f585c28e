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

from PySide6.QtCore import QTimer

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


def test_the_window_keeps_its_event_loop_while_a_silent_host_is_probed(window: MainWindow, tmp_path, qtbot):
    server = silent_host()
    sampler = StackSampler()
    try:
        window.doc.replace(plan_with(tmp_path, server))
        ticks: list[float] = []
        states: list[str] = []
        timer = QTimer()
        timer.setInterval(10)
        timer.timeout.connect(
            lambda: (
                ticks.append(time.monotonic()),
                states.append(f"{window.controller.state}: {window.run_control.status.state.text()}"),
            )
        )
        timer.start()
        sampler.start()
        t0 = time.monotonic()
        started = window.run_control.start_run()
        held = time.monotonic() - t0
        timer.stop()
    finally:
        sampler.done.set()
        server.close()
    assert not started  # the silent host is refused after the probe's timeout, said in words
    assert held > 2.0, held  # the probe waited for the silent host
    gaps = [b - a for a, b in zip([t0, *ticks], ticks, strict=False)]
    assert len(ticks) > held / 0.01 * 0.3, (len(ticks), held)  # the event loop went on: ticks every ~10 ms
    worst = max(range(len(gaps)), key=gaps.__getitem__)
    stall_end = ticks[worst]
    where = sampler.during(stall_end - gaps[worst], stall_end)
    assert gaps[worst] < 0.5, f"{gaps[worst]:.2f} s without a tick, tick {worst}; the GUI thread:\n{where}"
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
