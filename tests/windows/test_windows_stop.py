"""Stop on Windows, with the real fio.exe under Windows Python: fio ends with its final numbers and the step
is stopped, not failed. The process running these tests has no console of its own to share with fio (as
the window and the packaged fiometer.exe), where CTRL_BREAK_EVENT cannot reach fio (fio_stop)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from app.engine.run.managers import local_endpoint
from app.engine.run.runner import RunListener, Runner, RunOptions
from app.engine.transports.fio_binary import fio_version
from app.engine.transports.fio_stop import TRIGGER_FILE_CRASHES
from app.engine.transports.local_fio import LocalFio
from app.engine.transports.transport import Message, Snapshot
from app.model.plan import LOCAL, SpecLine, Target
from tests.helpers import grid, prepared
from tests.platform_marks import under_wine, wine_limit


@pytest.fixture
def stoppable_fio(windows_fio: Path) -> Path:
    version = fio_version(windows_fio)
    if version in TRIGGER_FILE_CRASHES:
        pytest.skip(
            f"fio.exe {version} crashes on its trigger file for jobs without verify (fio PR #2081): a window's "
            "Stop without a console reaching fio ends it at once with its last report's numbers (tested above); "
            "build fio.exe from another release to see Stop keep its final numbers"
        )
    return windows_fio


def _job(runtime: int) -> str:
    return f"[j]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\nthread\ntime_based\nruntime={runtime}\n"


def _stopped_after_two_reports(fio: Path) -> list:
    """A 60-s fio.exe job's events, Stop pressed after its second report, to its end."""
    lf = LocalFio("m", str(fio), stop_grace=20.0)
    lf.start(_job(60), status_interval=0.5)
    events = []
    for ev in lf.events():
        events.append(ev)
        if isinstance(ev, Snapshot) and sum(isinstance(e, Snapshot) for e in events) == 2:
            lf.stop()
    return events


def _stop_all_after_4_s(fio: Path, tmp_path: Path) -> tuple[Runner, str, float]:
    """A one-step run of 60 s on fio.exe with Stop all 4 s in: the runner, its status and how long it took."""
    plan = grid(1, 1, 1, qd=4)
    plan.specs[0].lines = [SpecLine(4096, 100, 70, 100, 0, 1, 4096, 0)]
    manager = plan.managers[0]
    manager.host = LOCAL
    manager.workers[0].targets = [Target(str(tmp_path / "t.tst"))]
    endpoints = {manager.name: local_endpoint(manager.name, str(fio))}
    runner = prepared(
        Runner(plan, endpoints, RunListener(), RunOptions(run_time=60, engine="null", file_size=1 << 20))
    )
    threading.Timer(4.0, runner.stop).start()
    t0 = time.monotonic()
    status = runner.run()
    return runner, status, time.monotonic() - t0


def test_stop_ends_fio_exe_with_its_final_numbers(stoppable_fio: Path) -> None:
    t0 = time.monotonic()
    events = _stopped_after_two_reports(stoppable_fio)
    fin = events[-1]
    assert time.monotonic() - t0 < 20, "fio.exe was ended after the grace, not stopped"
    assert fin.ok and fin.stopped and fin.returncode == 0, fin
    final = [e for e in events if isinstance(e, Snapshot) and e.final]
    assert len(final) == 1 and final[0].jobs[0]["read"]["total_ios"] > 0
    assert final[0].jobs[0]["job_runtime"] < 60_000


def test_stop_mid_step_marks_the_step_stopped_with_fio_exes_numbers(
    stoppable_fio: Path, tmp_path: Path
) -> None:
    runner, status, took = _stop_all_after_4_s(stoppable_fio, tmp_path)
    assert status == "stopped"
    assert took < 30, "fio.exe was ended after the grace, not stopped"
    (outcome,) = runner.outcomes
    assert outcome.status == "stopped", outcome.finished
    assert all(f.ok and f.stopped and f.returncode == 0 for f in outcome.finished.values()), outcome.finished
    manager_numbers = [s.whole for s in outcome.results if s.level == "manager"]
    assert len(manager_numbers) == 1 and manager_numbers[0].ios > 0


def test_stop_is_a_stop_with_every_fio_exe_even_where_fio_cannot_be_asked(windows_fio: Path) -> None:
    """Every release: Stop ends the step at once, stopped and not failed, with numbers. Where nothing can
    ask fio to stop (3.41/3.42, whose trigger file crashes, with no console reaching fio: under Wine), fio
    is ended at once and its last report (at most one status interval old) is the step's final numbers,
    and the user is told; elsewhere fio ends itself with its final report."""
    t0 = time.monotonic()
    events = _stopped_after_two_reports(windows_fio)
    assert time.monotonic() - t0 < 15, "Stop waited for the grace (20 s) instead of ending the step"
    fin = events[-1]
    assert fin.ok and fin.stopped, fin
    final = [e for e in events if isinstance(e, Snapshot) and e.final]
    assert len(final) == 1 and final[0].jobs[0]["read"]["total_ios"] > 0
    assert final[0].jobs[0]["job_runtime"] < 60_000
    said = [e.text for e in events if isinstance(e, Message)]
    if fin.returncode != 0:  # ended by Fiometer: said so, in words
        assert any("cannot be asked to stop" in t and "last report" in t for t in said), said


def test_stop_all_in_a_run_marks_the_step_stopped_with_every_fio_exe(
    windows_fio: Path, tmp_path: Path
) -> None:
    runner, status, took = _stop_all_after_4_s(windows_fio, tmp_path)
    assert status == "stopped"
    assert took < 25, "the step ran on after Stop"
    (outcome,) = runner.outcomes
    assert outcome.status == "stopped", outcome.finished
    assert all(f.ok and f.stopped for f in outcome.finished.values()), outcome.finished
    manager_numbers = [s.whole for s in outcome.results if s.level == "manager"]
    assert len(manager_numbers) == 1 and manager_numbers[0].ios > 0


@wine_limit("console control events between processes (GenerateConsoleCtrlEvent fails with error 6 or 12)")
def test_stop_keeps_the_numbers_of_every_fio_exe_without_a_shared_console(windows_fio: Path) -> None:
    """Every release, 3.41/3.42 included (their trigger file crashes): where the trigger file is not used,
    CTRL_BREAK goes through fio's own console (windows_console) and fio still ends with its final report."""
    events = _stopped_after_two_reports(windows_fio)
    fin = events[-1]
    assert fin.ok and fin.stopped and fin.returncode == 0, fin
    assert any(isinstance(e, Snapshot) and e.final for e in events)


def test_breaking_through_fios_console_says_when_it_cannot(windows_fio: Path) -> None:
    """The attaching way returns False, never raises, where it cannot be used (this process has a console,
    or fio has none of its own, as under Wine): the caller then ends fio at once with its last numbers."""
    from app.engine.transports.windows_console import break_by_attaching

    lf = LocalFio("m", str(windows_fio), stop_grace=5.0)
    lf.start(_job(3), status_interval=0.5)
    try:
        done = break_by_attaching(lf._proc.pid)  # type: ignore[union-attr]
        if under_wine():
            assert done is False
    finally:
        for _ in lf.events():
            pass
