"""Issue 35.4: Start prepares the run, connects the window's handlers, and only then lets it go. Here the
window's side is held back after ``RunDriver.start`` until the run has emitted its first step's start (as
a loaded machine may hold it): the step must still reach the charts, for a run on the window's thread and for
one in a process of its own (real fio; a real ``fio --server`` on 127.0.0.60)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import SIGNAL

from app.engine.run.runner import RunOptions
from app.model.plan import Target
from app.session.run_apart import RunApart
from app.session.run_session import RunSession
from app.ui.run import run_driver
from app.ui.run.run_driver import QtRunListener, RunDriver
from tests.fio_servers import fio_servers
from tests.gui.conftest import local_plan
from tests.gui.test_window_parts import Parts

pytestmark = pytest.mark.fio


@pytest.fixture
def fio_server():
    yield from fio_servers()


def hold_the_window_until_the_first_step(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """After ``start`` returns, the window's thread waits until the run's first ``step_started`` was emitted
    (on the run's thread, or the reader of its process): whatever is connected after that point misses it."""
    emitted = threading.Event()
    real_step_started, real_start = QtRunListener.step_started, RunDriver.start

    def step_started(self: QtRunListener, step, jobfiles) -> None:
        real_step_started(self, step, jobfiles)
        emitted.set()

    def start(self: RunDriver, *args, **kwargs):
        listener = real_start(self, *args, **kwargs)
        if listener is not None:
            assert emitted.wait(60), "the run's first step did not start"
        return listener

    monkeypatch.setattr(QtRunListener, "step_started", step_started)
    monkeypatch.setattr(RunDriver, "start", start)
    return emitted


def run_and_check(parts: Parts, qtbot, session_kind: type) -> None:
    control = parts.run_control()
    with qtbot.waitSignal(parts.controller.finished, timeout=120000) as finished:
        assert control.start_run()
        assert isinstance(parts.controller.session, session_kind)
    assert finished.args == ["complete"], parts.desk.messages
    assert [m.label for m in parts.live.steps] == ["1: S"]  # the first step's start reached the charts
    parts.live.flush()
    assert parts.live.series  # and its samples
    said = [text for text, _level in parts.desk.messages]
    assert any(text.startswith("Step 1 (S): complete") for text in said), said


def test_a_run_on_the_windows_thread_loses_no_first_event(qtbot, tmp_path: Path, monkeypatch) -> None:
    emitted = hold_the_window_until_the_first_step(monkeypatch)
    parts = Parts(qtbot, tmp_path)
    parts.doc.replace(local_plan(tmp_path, workers=1))
    _with_options(parts, RunOptions(engine="null", run_time=1, ramp_up=0, file_size=1 << 20))
    run_and_check(parts, qtbot, RunSession)
    assert emitted.is_set()


def test_a_run_in_its_own_process_loses_no_first_event(
    qtbot, tmp_path: Path, monkeypatch, fio_server
) -> None:
    emitted = hold_the_window_until_the_first_step(monkeypatch)
    parts = Parts(qtbot, tmp_path)
    plan = local_plan(tmp_path, workers=1)
    host, port, _proc = fio_server("127.0.0.60")
    plan.managers[0].host = f"{host}:{port}"
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "remote.tst"))]
    parts.doc.replace(plan)
    _with_options(parts, RunOptions(engine="null", run_time=1, ramp_up=0, file_size=1 << 20, run_apart=1))
    run_and_check(parts, qtbot, RunApart)
    assert emitted.is_set()


def _with_options(parts: Parts, options: RunOptions) -> None:
    real = parts.run_control

    def run_control():
        control = real()
        control.run_options = options
        return control

    parts.run_control = run_control  # type: ignore[method-assign]


def test_the_window_connects_before_the_run_goes(qtbot, tmp_path: Path) -> None:
    """The order itself: when the controller says it runs (just before its thread starts), RunControl's
    handlers are already connected to the run's listener."""
    parts = Parts(qtbot, tmp_path)
    parts.doc.replace(local_plan(tmp_path, workers=1))
    _with_options(parts, RunOptions(engine="null", run_time=1, ramp_up=0, file_size=1 << 20))
    control = parts.run_control()
    seen: list[dict[str, int]] = []

    def on_state(state: str) -> None:
        listener = parts.controller.listener
        if state == run_driver.RUNNING and listener is not None:
            seen.append({name: listener.receivers(SIGNALS[name]) for name in SIGNALS})

    parts.controller.state_changed.connect(on_state)
    with qtbot.waitSignal(parts.controller.finished, timeout=120000):
        assert control.start_run()
    # stepStarted: the controller's progress and RunControl's; the others: RunControl's
    assert seen == [
        {"stepStarted": 2, "samplesArrived": 1, "messageArrived": 1, "stepFinished": 1, "managerFinished": 1}
    ]


SIGNALS = {
    "stepStarted": SIGNAL("stepStarted(int,double,PyObject)"),
    "samplesArrived": SIGNAL("samplesArrived(int,double,PyObject)"),
    "messageArrived": SIGNAL("messageArrived(PyObject,PyObject)"),
    "stepFinished": SIGNAL("stepFinished(PyObject)"),
    "managerFinished": SIGNAL("managerFinished(PyObject,PyObject)"),
}


def test_the_window_connects_before_the_run_process_starts(
    qtbot, tmp_path: Path, monkeypatch, fio_server
) -> None:
    """The order for a run in a process of its own: when that process is started (RunApart, which sends
    its first events at once), RunControl's handlers are already connected to the run's listener."""
    seen: list[dict[str, int]] = []

    class Watched(RunApart):
        def __init__(self, request, listener, ended) -> None:
            seen.append({name: listener.receivers(SIGNALS[name]) for name in SIGNALS})
            super().__init__(request, listener, ended)

    monkeypatch.setattr(run_driver, "RunApart", Watched)
    parts = Parts(qtbot, tmp_path)
    plan = local_plan(tmp_path, workers=1)
    host, port, _proc = fio_server("127.0.0.64")
    plan.managers[0].host = f"{host}:{port}"
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "remote.tst"))]
    parts.doc.replace(plan)
    _with_options(parts, RunOptions(engine="null", run_time=1, ramp_up=0, file_size=1 << 20, run_apart=1))
    control = parts.run_control()
    with qtbot.waitSignal(parts.controller.finished, timeout=120000) as finished:
        assert control.start_run()
        assert isinstance(parts.controller.session, Watched)
    assert finished.args == ["complete"], parts.desk.messages
    assert seen == [
        {"stepStarted": 2, "samplesArrived": 1, "messageArrived": 1, "stepFinished": 1, "managerFinished": 1}
    ]
