"""A run in a process of its own (app.session.run_apart): real fio (null engine), a real child process, a real store.

No Qt (app.live.data computes chart rows with numpy): this file also runs under Windows Python in Wine (the child is `python -m app.session.run_apart_child` there too).
"""

from __future__ import annotations

import functools
import pickle
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from app.engine.run.curve_runner import CurveRunner
from app.engine.run.runner import RunListener, RunOptions
from app.engine.transports.fio_binary import FioNotFound, find_fio
from app.engine.transports.remote_host import CREATE_NO_WINDOW, child_command
from app.live.data import ChartedBatch, chart_rows, charted
from app.model.plan import LOCAL, SpecLine, Target
from app.session.run_apart import RunApart
from app.session.run_session import RunEnd, RunRequest
from app.store import open_store
from app.store.queries import get_run
from app.store.run_extras import CURVE, extra
from tests.helpers import grid


class Heard(RunListener):
    """Every call the window would get, in order, with the thread it came on."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple]] = []
        self.first_samples = threading.Event()

    def _add(self, name: str, *args: object) -> None:
        self.calls.append((name, args))

    def run_started(self, *a) -> None:
        self._add("run_started", *a)

    def step_started(self, *a) -> None:
        self._add("step_started", *a)

    def samples(self, *a) -> None:
        self._add("samples", *a)
        self.first_samples.set()

    def message(self, *a) -> None:
        self._add("message", *a)

    def manager_finished(self, *a) -> None:
        self._add("manager_finished", *a)

    def step_finished(self, *a) -> None:
        self._add("step_finished", *a)

    def run_finished(self, *a) -> None:
        self._add("run_finished", *a)

    def names(self) -> list[str]:
        return [n for n, _ in self.calls]

    def texts(self) -> list[str]:
        return [a[1].text for n, a in self.calls if n == "message"]


@pytest.fixture
def fio() -> str:
    try:
        return str(find_fio())
    except FioNotFound:
        pytest.skip("no fio on this machine")


def plan_here(tmp_path: Path, managers: int = 2):
    plan = grid(managers, 2, 1, qd=2)
    plan.specs[0].lines = [SpecLine(4096, 100, 70, 100, 0, 1, 4096, 0)]
    for m in plan.managers:
        m.host = LOCAL
        for wi, w in enumerate(m.workers):
            w.targets = [Target(str(tmp_path / f"{m.name}-{wi}.tst"))]
    return plan


def start(tmp_path: Path, run_time: int, prepare=None, make=None) -> tuple[RunApart, Heard, list[RunEnd]]:
    heard, ended = Heard(), []
    done = threading.Event()
    options = RunOptions(engine="null", run_time=run_time, status_interval=0.5)
    request = RunRequest(plan_here(tmp_path), options, make, tmp_path / "runs.db", True, None, None, prepare)
    apart = RunApart(request, heard, lambda end: (ended.append(end), done.set()))
    apart.done = done  # type: ignore[attr-defined]
    return apart, heard, ended


def test_a_run_apart_runs_records_and_says_everything_in_order(tmp_path: Path, fio: str) -> None:
    apart, heard, ended = start(tmp_path, 2, prepare=charted)
    assert apart.wait(120), "the run's process did not end"
    (end,) = ended
    assert end.status == "complete", heard.texts()
    names = heard.names()
    assert names[0] == "run_started" and names[-1] == "run_finished"
    assert names.index("step_started") < names.index("samples") < names.index("step_finished")
    batches = [a[1] for n, a in heard.calls if n == "samples"]
    assert batches and all(isinstance(b, ChartedBatch) and len(b) for b in batches)
    for batch in batches:  # the chart rows computed there arrive with the numbers they belong to
        for smp in batch:
            if smp.level != "target":
                for m in (smp.whole, smp.interval):
                    assert np.array_equal(batch.rows[id(m)], chart_rows([m])[0], equal_nan=True)
    endpoints = next(a for n, a in heard.calls if n == "run_started")[2]
    assert set(endpoints) == {"M1", "M2"} and all(ep.close is None for ep in endpoints.values())
    (outcome,) = [a[0] for n, a in heard.calls if n == "step_finished"]
    assert outcome.status == "complete" and set(outcome.finished) == {"M1", "M2"}
    assert end.summary is not None and end.summary.complete == 1
    assert end.run_id is not None and end.stored_in == tmp_path / "runs.db"
    with open_store(tmp_path / "runs.db") as store:
        run = get_run(store, end.run_id)
        assert run.status == "complete" and [m.name for m in run.managers] == ["M1", "M2"]
        (step,) = run.steps
        per = {r.manager for r in step.results if r.level == "manager"}
        assert per == {"M1", "M2"}  # the child stored what it measured


def test_stop_all_reaches_the_run_apart(tmp_path: Path, fio: str) -> None:
    apart, heard, ended = start(tmp_path, 120)
    assert heard.first_samples.wait(60), heard.texts()
    t0 = time.monotonic()
    apart.stop()
    assert apart.wait(60)
    assert time.monotonic() - t0 < 30
    (end,) = ended
    assert end.status == "stopped" and end.run_id is not None, heard.texts()


def test_a_killed_run_process_ends_the_run_failed_and_says_so(tmp_path: Path, fio: str) -> None:
    apart, heard, ended = start(tmp_path, 120)
    assert heard.first_samples.wait(60), heard.texts()
    apart.kill()
    assert apart.wait(30)
    (end,) = ended
    assert end.status == "failed"
    assert heard.names()[-1] == "run_finished" and heard.calls[-1][1] == ("failed",)
    assert any("the run's own process ended unexpectedly" in t for t in heard.texts())


def test_starting_does_not_wait_for_the_run_process_to_read_its_request(monkeypatch) -> None:
    """A request bigger than the pipe's buffer (a plan of 128 managers) is not read until the child's Python has
    started: the window's Start went on only then (0.34 s at 128 managers). Here a child that never reads."""
    import sys

    import app.session.run_apart as run_apart

    never_reads = [sys.executable, "-c", "import time; time.sleep(60)"]
    monkeypatch.setattr(run_apart, "child_command", lambda *a, **k: (list(never_reads), {}))
    heard, ended = Heard(), []
    t0 = time.monotonic()
    apart = RunApart(b"x" * (4 << 20), heard, ended.append)  # type: ignore[arg-type]
    took = time.monotonic() - t0
    try:
        assert took < 10, took  # it returned without the child reading (before: held until the child ended)
    finally:
        apart.kill()
    assert apart.wait(30)
    assert [e.status for e in ended] == ["failed"]  # the child ended without an end of its own: said so


def test_a_plan_refused_in_the_run_process_ends_failed_with_the_reason(tmp_path: Path) -> None:
    heard, ended = Heard(), []
    plan = plan_here(tmp_path)
    plan.managers[1].host = None  # no host: the runner refuses the steps of this manager
    request = RunRequest(
        plan, RunOptions(engine="null", run_time=1), None, tmp_path / "r.db", True, None, None
    )
    apart = RunApart(request, heard, ended.append)
    assert apart.wait(60)
    assert ended[0].status == "failed" and ended[0].run_id is None
    assert any("The run did not start" in t and "'M2'" in t for t in heard.texts()), heard.texts()


def test_a_load_search_runs_apart_and_keeps_what_it_found(tmp_path: Path, fio: str) -> None:
    make = functools.partial(CurveRunner, p99_max_ms=50.0, metric="iops", max_load=4)
    apart, heard, ended = start(tmp_path, 1, make=make)
    assert apart.wait(240)
    (end,) = ended
    assert end.status == "complete" and end.run_id is not None, heard.texts()
    assert sum(n == "step_finished" for n in heard.names()) >= 2  # the search chose its steps there
    with open_store(tmp_path / "runs.db") as store:
        found = extra(get_run(store, end.run_id), CURVE)
    assert found and found["p99_max_ms"] == 50.0, found


def test_what_crosses_to_the_run_process_pickles() -> None:
    """A load search's maker is a partial of the class (a closure would not cross)."""
    make = functools.partial(CurveRunner, p99_max_ms=5.0, metric="iops", max_load=8)
    assert pickle.loads(pickle.dumps(make)).keywords == make.keywords
    assert pickle.loads(pickle.dumps(charted)) is charted


def test_the_run_process_command_line() -> None:
    argv, kwargs = child_command(
        "Windows",
        True,
        r"C:\Program Files\Fiometer\fiometer.exe",
        "app.session.run_apart_child",
        "--run-apart",
        False,
    )
    assert Path(argv[0]).name == "fiometer-cli.exe" and argv[1:] == ["--run-apart"]
    assert kwargs["creationflags"] == CREATE_NO_WINDOW  # normal priority, no window
    argv, _ = child_command(
        "Linux", False, "/venv/bin/python", "app.session.run_apart_child", "--run-apart", False
    )
    assert argv == ["/venv/bin/python", "-m", "app.session.run_apart_child"]


def test_the_runs_own_process_imports_nothing_of_the_window():
    """The run's child process unpickles what the window sends (the chart rows' maker among it) and runs it
    with ``app.ui`` made unimportable: the live series are below the window (app.live), not in it."""
    import pickle
    import subprocess
    import sys

    from app.live.data import charted

    code = (
        "import pickle, sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'app.ui' or name.startswith('app.ui.') or name.split('.')[0] == 'PySide6':\n"
        "            raise ImportError('the window is blocked in this test: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import app.session.run_apart_child\n"
        "f = pickle.loads(sys.stdin.buffer.read())\n"
        "print(f.__module__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input=pickle.dumps(charted), capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "app.live.data"
