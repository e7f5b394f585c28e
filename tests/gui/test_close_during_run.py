"""Issue 38.4 / 35.6: closing the window during a run closes as promised. The hard moment is a step's start
(X near the end of a step, answered as the next one starts): the stop then reaches a fio that has not installed
its stop handler yet, and its default action killed it ("fio was killed (signal 2)", no row for the step).
Real fio (null engine), a real window, a real results database."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from app.engine.run.runner import RunOptions
from app.model.plan import Target
from app.store import get_run, open_store
from app.ui.main_window import MainWindow
from tests.fio_servers import fio_servers, job_processes
from tests.gui.conftest import local_plan
from tests.platform_marks import posix_only

pytestmark = pytest.mark.fio


# fio.exe under Wine warns at every step that it cannot read its CPU affinity: fio's words, not a failure
WINE_AFFINITY = "fio_getaffinity: failed to get single group affinity"


def test_closing_as_the_next_step_starts_stops_it_as_the_user_asked(
    window: MainWindow, tmp_path: Path, qtbot
) -> None:
    """The close is answered while step 2's fio is being started (held there by the test hook, released
    once the window has asked to stop): the window closes when fio has ended, without the abort after the
    stop grace; the run is stored as stopped, step 2 as stopped with its results, nothing failed."""
    starting, asked = threading.Event(), threading.Event()

    def hold_step_two(step) -> None:
        if step.index == 1:
            starting.set()
            asked.wait(30)  # fio starts right after this, with the stop already asked for

    window.doc.replace(local_plan(tmp_path, workers=1, specs=("S", "T", "U", "V")))
    window.run_control.run_options = RunOptions(
        engine="null", run_time=5, ramp_up=0, file_size=1 << 20, before_fio_start=hold_step_two
    )
    aborted: list[bool] = []
    real_abort = window.controller.abort
    window.controller.abort = lambda: (aborted.append(True), real_abort())  # type: ignore[method-assign]
    assert window.run_control.start_run()
    qtbot.waitUntil(starting.is_set, timeout=60000)
    window.close()  # the fixture's question answers "discard"
    assert window.controller.state == "stopping"
    asked.set()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=30000)
    assert not aborted, "the window closed only when the stop grace ran out"
    end = window.controller.run_end
    assert end is not None and end.run_id is not None
    with open_store(Path(os.environ["FIOMETER_DB"])) as store:
        run = get_run(store, end.run_id)
    texts = [m.text for s in run.steps for m in s.messages]
    assert run.status == "stopped", texts
    assert [s.status for s in run.steps] == ["complete", "stopped"], texts
    own = [t for t in texts if not t.startswith(WINE_AFFINITY)]
    assert not any("killed" in t or "failed" in t for t in own), texts
    rows = {(r.level, r.key) for r in run.steps[1].results}
    assert ("manager", "M1") in rows and ("all", "ALL") in rows, rows  # the stopped step's row
    assert all(r.metrics.ios > 0 for r in run.steps[1].results if r.level == "manager")


def test_the_close_question_follows_the_running_step(window: MainWindow, tmp_path: Path, qtbot) -> None:
    """Asked in step 1 and left open: when step 2 starts, the question says so (it said "step 1" for
    good before); Cancel then changes nothing."""
    window.doc.replace(local_plan(tmp_path, workers=1, specs=("S", "T")))
    window.run_control.run_options = RunOptions(engine="null", run_time=2, ramp_up=0, file_size=1 << 20)
    assert window.run_control.start_run()
    qtbot.waitUntil(lambda: window.controller.progress.step == 1, timeout=60000)
    seen: list[str] = []

    def read_then_cancel() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        seen.append(box.text())
        qtbot.waitUntil(lambda: window.controller.progress.step == 2, timeout=60000)
        qtbot.waitUntil(lambda: "step 2 of 2" in box.text(), timeout=5000)
        seen.append(box.text())
        box.reject()

    QTimer.singleShot(100, read_then_cancel)
    assert MainWindow.close_question(window) == "cancel"  # the real question (the fixture answers others)
    assert "step 1 of 2" in seen[0] and "step 2 of 2" in seen[1], seen
    assert window.controller.running and window.isVisible()
    window.controller.abort()
    qtbot.waitUntil(lambda: not window.controller.running, timeout=30000)


def test_a_run_that_ends_while_the_close_question_is_open_still_closes(
    window: MainWindow, tmp_path: Path, qtbot
) -> None:
    window.doc.replace(local_plan(tmp_path, workers=1))
    window.run_control.run_options = RunOptions(engine="null", run_time=1, ramp_up=0, file_size=1 << 20)
    assert window.run_control.start_run()

    def answer_after_the_end() -> str:
        qtbot.waitUntil(lambda: not window.controller.running, timeout=60000)
        return "discard"

    window.close_question = answer_after_the_end  # type: ignore[method-assign]
    window.close()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=10000)
    assert window.controller.last_status == "complete"


@pytest.mark.parametrize("when", ["mid-step", "near the step's end"])
def test_closing_during_a_step_closes_within_the_stop_grace_and_stores_a_user_stop(
    window: MainWindow, tmp_path: Path, qtbot, when: str
) -> None:
    """Issue 35.6: X answered in the middle of step 1, or in its last second (fio about to end by itself):
    the window closes once fio has ended, well within the stop grace, without the abort; the run is stored
    as the user's stop with step 1's row, step 2 never started. It stayed open 25 s and the step was stored
    as "fio was killed (signal 2)" before."""
    from app.ui.main_window import STOP_GRACE_MS

    run_time = 4
    close_at = 1.0 if when == "mid-step" else run_time - 0.3
    window.doc.replace(local_plan(tmp_path, workers=1, specs=("S", "T")))
    window.run_control.run_options = RunOptions(
        engine="null", run_time=run_time, ramp_up=0, file_size=1 << 20, status_interval=0.1
    )
    aborted: list[bool] = []
    real_abort = window.controller.abort
    window.controller.abort = lambda: (aborted.append(True), real_abort())  # type: ignore[method-assign]
    reached: list[float] = []
    assert window.run_control.start_run()
    listener = window.controller.listener
    assert listener is not None
    listener.samplesArrived.connect(
        lambda step, _offset, samples: reached.extend(
            s.t for s in samples if step == 0 and s.level == "manager" and not s.late
        )
    )
    qtbot.waitUntil(lambda: any(t >= close_at for t in reached), timeout=60000)
    closed_at = time.monotonic()
    window.close()  # the fixture's question answers "discard"
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=STOP_GRACE_MS + 10000)
    took = time.monotonic() - closed_at
    print(f"\n{when}: closed {took:.1f} s after X (fio's clock at {max(reached):.1f} s of {run_time})")
    assert not aborted, "the window closed only when the stop grace ran out"
    assert took < STOP_GRACE_MS / 1000 / 2, took
    end = window.controller.run_end
    assert end is not None and end.run_id is not None
    with open_store(Path(os.environ["FIOMETER_DB"])) as store:
        run = get_run(store, end.run_id)
    texts = [m.text for s in run.steps for m in s.messages]
    assert run.status == "stopped", (run.status, texts)
    assert [s.status for s in run.steps] in (["stopped"], ["complete"]), texts  # fio may end first
    assert not any("killed" in t or "failed" in t for t in texts), texts
    rows = {(r.level, r.key) for r in run.steps[0].results}
    assert ("manager", "M1") in rows and ("all", "ALL") in rows, rows  # the stopped step's row
    assert all(r.metrics.ios > 0 for r in run.steps[0].results if r.level == "manager")


@pytest.fixture
def fio_server():
    yield from fio_servers()


@posix_only("a Linux fio --server whose job processes are stopped with SIGSTOP")
def test_closing_while_a_servers_jobs_hang_closes_by_the_engines_stop_grace(
    window: MainWindow, tmp_path: Path, qtbot, fio_server
) -> None:
    """Issue 35.1 x 35.6: X answered while the remote server's job processes are stopped (SIGSTOP: a hung
    SAN path): fio cannot end its jobs, so the manager is given up on the engine's stop grace (5 s) after
    the Stop, not at the window's own abort (15 s); the run is stored as the user's stop, the step's row
    kept, the manager failed with the stop phase named."""
    from app.engine.common.phase_bounds import DEFAULT
    from app.ui.main_window import STOP_GRACE_MS

    host, port, proc = fio_server("127.0.0.65")
    plan = local_plan(tmp_path, workers=1, specs=("S", "T"))
    plan.managers[0].host = f"{host}:{port}"
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "remote.tst"))]
    window.doc.replace(plan)
    window.run_control.run_options = RunOptions(
        engine="null", run_time=60, ramp_up=0, file_size=1 << 20, allow_unverified={"M1"}
    )
    aborted: list[bool] = []
    real_abort = window.controller.abort
    window.controller.abort = lambda: (aborted.append(True), real_abort())  # type: ignore[method-assign]
    assert window.run_control.start_run()
    listener = window.controller.listener
    assert listener is not None
    reached: list[float] = []
    listener.samplesArrived.connect(
        lambda step, _offset, samples: reached.extend(s.t for s in samples if s.level == "manager")
    )
    qtbot.waitUntil(lambda: bool(reached), timeout=60000)
    stopped = job_processes(proc)
    try:
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        closed_at = time.monotonic()
        window.close()  # the fixture's question answers "discard"
        qtbot.waitUntil(lambda: not window.isVisible(), timeout=STOP_GRACE_MS + 10000)
        took = time.monotonic() - closed_at
    finally:
        for pid in stopped:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    print(f"\nclosed {took:.1f} s after X with the server's jobs stopped")
    assert stopped and not aborted, "the window closed only when its own abort ran out"
    assert took < DEFAULT.stop_grace + 4.0, took
    end = window.controller.run_end
    assert end is not None and end.run_id is not None
    with open_store(Path(os.environ["FIOMETER_DB"])) as store:
        run = get_run(store, end.run_id)
    texts = [m.text for s in run.steps for m in s.messages]
    assert run.status == "stopped" and [s.status for s in run.steps] == ["stopped"], texts
    assert any("phase: stop" in t and f"M1 ({host}:{port})" in t for t in texts), texts
    rows = {(r.level, r.key) for r in run.steps[0].results}
    assert ("manager", "M1") in rows and ("all", "ALL") in rows, rows
