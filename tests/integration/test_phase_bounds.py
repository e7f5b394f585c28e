"""Every phase of a step is bounded: a real `fio --server` whose job processes are stopped (SIGSTOP: a hung
job, a hung SAN path) in the probe, the layout, the start, the ramp, the run or the final report ends the
manager within ramp + run + the documented grace, failed, the phase named; so does a local fio.

The faults are placed by events, not by time: a job process of the server that has the test file open (the
layout), the first job process after the step started (the start), (the ramp, by the step watch's own phase), the step's first sample (the run). The bounds are scaled down (``RunOptions.bounds``) so that
each case takes a few seconds; the rule is the same as with the documented defaults."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from app.engine.common.phase_bounds import FINAL, RAMP, RUN, START, STOP, Bounds
from app.engine.run.managers import local_endpoint, remote_endpoint
from app.engine.run.runner import RunListener, Runner, RunOptions, RunRefused
from app.model.plan import SpecLine, Target
from tests.fio_servers import job_processes, server_processes
from tests.helpers import grid, prepared

pytestmark = [pytest.mark.fio, pytest.mark.slow]

SHORT = Bounds(stall=3.0, grace=3.0, setup=8.0, stop_grace=2.0, late_data=4.0, behind=4.0)
INTERVAL = 0.5
SLACK = 4.0  # the machine is shared: reading, deciding and ending take a little time


class WatchedRunner(Runner):
    """A Runner that hands each step's StepWatch to the test, to place a fault by the watch's own phase."""

    def __init__(self, *args, watches: list, **kwargs) -> None:
        self._watches = watches
        super().__init__(*args, **kwargs)

    def _step_watch(self, files, go_at):
        watch = super()._step_watch(files, go_at)
        self._watches.append(watch)
        return watch


def in_phase(watches: list, phase: str) -> bool:
    return bool(watches) and watches[-1].phase("M1", time.monotonic()) == phase


class Listener(RunListener):
    def __init__(self) -> None:
        self.started = threading.Event()
        self.first_sample = threading.Event()
        self.messages: list = []
        self.outcomes: list = []
        self.step_t0: float | None = None
        self.starts = 0

    def step_started(self, step, jobfiles):
        self.starts += 1
        if self.step_t0 is None:
            self.step_t0 = time.monotonic()
        self.started.set()

    def samples(self, step, samples):
        if any(s.level == "manager" and s.interval.ios > 0 for s in samples):
            self.first_sample.set()

    def message(self, step, message):
        self.messages.append(message)

    def step_finished(self, outcome):
        self.outcomes.append(outcome)


def plan_for(tmp_path: Path, steps: int = 2):
    plan = grid(1, 1, 1, specs=tuple(f"S{i}" for i in range(steps)), qd=2)
    for s in plan.specs:
        s.lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]
    plan.managers[0].host = None
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "M1.tst"))]
    return plan


def opens(pid: int, path: str) -> bool:
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                if os.readlink(fd) == path:
                    return True
    return False


class Freezer:
    """Stops the server's job processes (SIGSTOP) when ``ready(pid)`` first holds for one of them; kills
    them at the end."""

    def __init__(self, jobs, ready, then=None, resume_after: float | None = None) -> None:
        self.jobs, self.ready, self.then, self.resume_after = jobs, ready, then, resume_after
        self.stopped: list[int] = []
        self.at: float | None = None
        self._end = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._end.is_set():
            pids = self.jobs()
            if any(self.ready(p) for p in pids):
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGSTOP)
                self.stopped, self.at = pids, time.monotonic()
                if self.then is not None:
                    self.then()
                if self.resume_after is not None:  # a host short of CPU for a while, not a hang
                    self._end.wait(self.resume_after)
                    for pid in pids:
                        with contextlib.suppress(OSError):
                            os.kill(pid, signal.SIGCONT)
                    self.stopped = []
                return
            time.sleep(0.002)

    def close(self) -> None:
        self._end.set()
        self._thread.join(2)
        for pid in self.stopped:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


# the server's reports decoded on the run's thread, or in a child process (the default: the command line and
# the window run so; issue 35's hung job was seen there)
APART = pytest.mark.parametrize("apart", [0, 1], ids=["decoded in the runner", "decoded in a child process"])


def run_frozen(
    tmp_path,
    fio_server,
    host,
    ready,
    *,
    ramp=0,
    run=3,
    size=1 << 20,
    whole_server=False,
    apart=0,
    then_stop=False,
    resume_after=None,
):
    """A 2-step plan with a new remote test file; the server's jobs (``whole_server``: every process of it
    but its listener) stopped when ``ready(pid, listener, watches)`` (``then_stop``: and the run's Stop
    pressed right after). Returns (listener, status or the refusal, seconds from the fault to the end,
    freezer)."""
    h, port, proc = fio_server(host)
    listener = Listener()
    watches: list = []

    def frozen() -> list[int]:
        return [p for p in server_processes(proc) if p != proc.pid] if whole_server else job_processes(proc)

    freezer = Freezer(
        frozen,
        lambda pid: ready(pid, listener, watches),
        (lambda: listener.runner.stop()) if then_stop else None,
        resume_after,
    )
    options = RunOptions(
        run_time=run,
        ramp_up=ramp,
        file_size=size,
        status_interval=INTERVAL,
        bounds=SHORT,
        decode_apart=apart,
        allow_unverified={"M1"},  # a plain fio --server: writes there armed (issue 36)
    )
    try:
        try:
            endpoints = {"M1": remote_endpoint("M1", f"{h}:{port}")}
            runner = prepared(
                WatchedRunner(plan_for(tmp_path), endpoints, listener, options, watches=watches)
            )
            listener.runner = runner
            status: object = runner.run()
        except RunRefused as e:
            status = e
        ended = time.monotonic()
    finally:
        freezer.close()
    assert freezer.at is not None, "the fault was never placed"
    return listener, status, ended - freezer.at, freezer


def failed_in(listener: Listener, phase: str) -> str:
    assert listener.outcomes, "no step ended"
    fin = listener.outcomes[0].finished["M1"]
    assert not fin.ok, fin.reason
    assert f"phase: {phase}" in fin.reason and "M1 (127.0.0." in fin.reason, fin.reason
    return fin.reason


@APART
def test_a_hung_layout_fails_the_manager_naming_the_layout(tmp_path, fio_server, apart):
    """The regression: the remote layout job (before the step) stopped; the run used to wait forever."""
    path = str(tmp_path / "M1.tst")
    listener, status, took, _ = run_frozen(
        tmp_path, fio_server, "127.0.0.40", lambda pid, lst, w: opens(pid, path), size=1 << 30, apart=apart
    )
    reason = failed_in(listener, "layout")
    print(f"\nlayout stopped: ended {took:.1f} s later: {reason[:160]}")
    assert status == "failed" and "lay out the test file" in reason
    assert took < SHORT.stall + SHORT.stop_grace + SLACK
    assert listener.outcomes[0].status == "failed" and len(listener.outcomes) == 1  # step 2 never started
    # no fio of the step started: it did not run (issue 35: it was counted as "ran (1 failed)")
    assert (
        listener.outcomes[0].refused
        and listener.runner.summary.text() == "0 of 2 steps ran; 1 refused before fio started; 1 skipped"
    )


@APART
@pytest.mark.parametrize("where", ["layout", "run"])
def test_a_whole_server_without_cpu_for_a_while_is_waited_for(tmp_path, fio_server, apart, where):
    """Every process of the server stopped for longer than the stall limit (while it lays out the test file,
    or once the step's numbers show), then let go: a host short of CPU. It did not answer either, so it is
    not hung (its silence is the transport's watchdog's to judge); the layout and the run go on. (The layout
    was failed as 'I/O counters unmoved while its reports came' though no report came.)"""
    path = str(tmp_path / "M1.tst")
    listener, status, _took, _ = run_frozen(
        tmp_path,
        fio_server,
        "127.0.0.48",
        (lambda pid, lst, w: opens(pid, path))
        if where == "layout"
        else (lambda pid, lst, w: lst.first_sample.is_set()),
        size=64 << 20 if where == "layout" else 1 << 20,
        run=8,
        whole_server=True,
        apart=apart,
        resume_after=SHORT.stall + 2.0,
    )
    said = [m.text for m in listener.messages]
    print(f"\nserver without CPU in the {where}: {status}; {said[:3]}")
    assert status == "complete", said
    assert [o.status for o in listener.outcomes] == ["complete", "complete"], said


@APART
def test_a_hung_probe_refuses_the_run_naming_the_probe(tmp_path, fio_server, apart):
    """The check before the run (the folder probe: the first job the server runs) stopped."""
    listener, status, took, _ = run_frozen(
        tmp_path, fio_server, "127.0.0.41", lambda pid, lst, w: not lst.started.is_set(), apart=apart
    )
    assert isinstance(status, RunRefused), status
    print(f"\nprobe stopped: refused {took:.1f} s later: {str(status)[:160]}")
    assert "phase: probe" in str(status) and "M1 (127.0.0.41" in str(status)
    assert took < SHORT.stall + SHORT.stop_grace + SLACK


@APART
def test_a_hung_probe_before_the_second_step_fails_that_step_naming_the_probe(tmp_path, fio_server, apart):
    """The check of the remote test files before step 2 (its probe job: the first job after step 1 ended)
    stopped: step 2 fails before anything is written, the probe named; step 1 stays complete."""
    listener, status, took, _ = run_frozen(
        tmp_path,
        fio_server,
        "127.0.0.39",
        lambda pid, lst, w: len(lst.outcomes) == 1 and lst.starts == 1,
        apart=apart,
    )
    assert [o.status for o in listener.outcomes] == ["complete", "failed"], listener.outcomes
    fin = listener.outcomes[1].finished["M1"]
    print(f"\nprobe before step 2 stopped: ended {took:.1f} s later: {fin.reason[:200]}")
    assert (
        status == "failed" and not fin.ok and "phase: probe" in fin.reason and "M1 (127.0.0.39" in fin.reason
    )
    assert listener.outcomes[1].refused  # nothing of step 2 ran
    assert took < SHORT.stall + SHORT.stop_grace + SLACK


@APART
def test_jobs_stopped_at_their_start_fail_the_manager_naming_the_start(tmp_path, fio_server, apart):
    path = str(tmp_path / "M1.tst")
    listener, status, took, _ = run_frozen(
        tmp_path,
        fio_server,
        "127.0.0.42",
        lambda pid, lst, w: lst.started.is_set() and opens(pid, path),
        apart=apart,
    )
    reason = failed_in(listener, "start")
    print(f"\nstart stopped: ended {took:.1f} s later: {reason[:160]}")
    assert status == "failed"
    assert took < SHORT.stall + SHORT.stop_grace + SLACK


@APART
def test_jobs_stopped_in_the_ramp_fail_the_manager_naming_the_ramp(tmp_path, fio_server, apart):
    listener, status, took, _ = run_frozen(
        tmp_path,
        fio_server,
        "127.0.0.43",
        lambda pid, lst, w: in_phase(w, RAMP),
        ramp=6,
        run=2,
        apart=apart,
    )
    reason = failed_in(listener, "ramp")
    print(f"\nramp stopped: ended {took:.1f} s later: {reason[:160]}")
    assert status == "failed"
    assert took < SHORT.stall + SHORT.stop_grace + SLACK


@APART
def test_jobs_stopped_in_the_run_fail_the_manager_naming_the_run(tmp_path, fio_server, apart):
    listener, status, took, _ = run_frozen(
        tmp_path, fio_server, "127.0.0.44", lambda pid, lst, w: lst.first_sample.is_set(), run=6, apart=apart
    )
    reason = failed_in(listener, "run")
    print(f"\nrun stopped: ended {took:.1f} s later: {reason[:160]}")
    assert status == "failed"
    assert took < SHORT.stall + SHORT.stop_grace + SLACK


@APART
def test_a_server_frozen_before_its_final_report_fails_by_the_deadline(tmp_path, fio_server, apart):
    """The whole server (connection handler and backend too) stopped two report intervals before the end of its run
    time: no final report, no answer at all. The step still ends by ramp + run + grace + the stop's grace,
    the phase named (run, or final report where fio's clock in its last report had reached the end)."""
    run = 3

    def near_the_end(
        pid, lst, watches
    ) -> bool:  # two report intervals before the end: ahead of its final one
        clock = watches[-1]._m["M1"].fio_clock_s if watches else None
        return clock is not None and clock >= run - 2 * INTERVAL

    listener, status, _took, _ = run_frozen(
        tmp_path, fio_server, "127.0.0.45", near_the_end, run=run, whole_server=True, apart=apart
    )
    ended = time.monotonic()
    fin = listener.outcomes[0].finished["M1"]
    assert listener.step_t0 is not None
    print(f"\nserver frozen: step ended {ended - listener.step_t0:.1f} s after its start: {fin.reason[:200]}")
    assert status == "failed" and not fin.ok
    assert f"phase: {RUN}" in fin.reason or f"phase: {FINAL}" in fin.reason, fin.reason
    assert ended - listener.step_t0 < run + SHORT.grace + SHORT.late_data + SLACK


@APART
def test_jobs_that_hang_when_stop_is_pressed_end_naming_the_stop(tmp_path, fio_server, apart):
    """Stop pressed while the server's job processes are stopped: fio cannot end its jobs; the manager is
    given up on ``stop_grace`` after the Stop, the phase named, and the run ends stopped by the user."""
    listener, status, took, _ = run_frozen(
        tmp_path,
        fio_server,
        "127.0.0.47",
        lambda pid, lst, w: lst.first_sample.is_set(),
        run=30,
        apart=apart,
        then_stop=True,
    )
    reason = failed_in(listener, STOP)
    print(f"\nstopped, then Stop: ended {took:.1f} s later: {reason[:200]}")
    assert status == "stopped" and listener.outcomes[0].status == "stopped", status
    assert took < SHORT.stop_grace + SLACK


LOCAL_STOP_GRACE = 15.0  # the local transport's own, from its SIGINT to the kill (local_fio.STOP_GRACE_S)
LOCAL_WATCHDOG = 10.0  # the local transport's own: no report for this long, fio is ended (its phase named)


@pytest.mark.parametrize("phase", [START, RAMP, RUN, STOP])
def test_a_local_fio_whose_jobs_stop_fails_naming_the_phase(tmp_path, phase):
    """The local fio transport: fio's job processes (its children) stopped in each phase: at the start (fio
    laying out the test file itself, no I/O yet), in the ramp, at the step's first sample, or there with
    Stop pressed right after."""
    listener = Listener()
    plan = plan_for(tmp_path, steps=1)
    path = str(tmp_path / "M1.tst")
    watches: list = []

    def fio_pids() -> list[int]:
        """The job processes (children) of every fio this process runs."""
        out = []
        for fio in (p for p in Path("/proc").iterdir() if p.name.isdigit() and _our_fio(p)):
            with contextlib.suppress(OSError):
                for task in (fio / "task").iterdir():
                    out += [int(c) for c in (task / "children").read_text().split()]
        return out

    ready = {
        START: lambda pid: opens(pid, path) and not listener.first_sample.is_set(),
        RAMP: lambda pid: in_phase(watches, RAMP),
        RUN: lambda pid: listener.first_sample.is_set(),
        STOP: lambda pid: listener.first_sample.is_set(),
    }[phase]
    ramp, run = (6, 2) if phase == RAMP else (0, 6)
    size = 1 << 30 if phase == START else 1 << 20
    runner: list[Runner] = []
    freezer = Freezer(fio_pids, ready, (lambda: runner[0].stop()) if phase == STOP else None)
    options = RunOptions(run_time=run, ramp_up=ramp, file_size=size, status_interval=INTERVAL, bounds=SHORT)
    try:
        runner.append(
            prepared(WatchedRunner(plan, {"M1": local_endpoint("M1")}, listener, options, watches=watches))
        )
        status = runner[0].run()
        ended = time.monotonic()
    finally:
        freezer.close()
    assert freezer.at is not None and freezer.stopped
    fin = listener.outcomes[0].finished["M1"]
    took = ended - freezer.at
    print(f"\nlocal fio's jobs stopped ({phase}): ended {took:.1f} s later: {fin.reason[:240]}")
    assert not fin.ok and f"phase: {phase}" in fin.reason, fin.reason
    if phase == STOP:
        assert status == "stopped" and took < LOCAL_STOP_GRACE + SLACK
    elif phase == START:  # no I/O yet: the step's deadline, counted from the setup allowance
        assert status == "failed" and took < SHORT.setup + ramp + run + SHORT.grace + SHORT.stop_grace + SLACK
    else:  # fio stops printing reports when its jobs stop: its watchdog, or the step's deadline first
        assert status == "failed" and took < LOCAL_WATCHDOG + SHORT.stop_grace + SLACK


def _our_fio(proc: Path) -> bool:
    """A fio process started by this test's process (the local transport's)."""
    with contextlib.suppress(OSError, IndexError):
        cmd = (proc / "cmdline").read_bytes().split(b"\0")
        ppid = next(ln for ln in (proc / "status").read_text().splitlines() if ln.startswith("PPid:"))
        return os.path.basename(cmd[0]) == b"fio" and int(ppid.split()[1]) == os.getpid()
    return False


def test_the_command_line_run_of_the_issue_ends_by_the_documented_bounds(tmp_path, fio_server):
    """Issue 35's check as it was made, with the documented bounds (no scaling): `fiometer run` of a 2-step
    plan with a new remote test file, --run-time 6 --ramp-up 0, the server's job processes stopped once
    the first step's numbers show. It ran for over 400 s; the step must end by ramp + run + grace (+ the
    stop's grace), the manager failed and named, and the command must end."""
    import subprocess
    import sys

    from app.engine.common.phase_bounds import DEFAULT
    from app.model import planfile

    h, port, proc = fio_server("127.0.0.49")
    plan = plan_for(tmp_path)
    planfile.save(plan, tmp_path / "plan.json")
    run_time = 6
    cli = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(tmp_path / "r.db"),
            "run",
            str(tmp_path / "plan.json"),
            "--manager",
            f"M1={h}:{port}",
            "--allow-unverified-writes",
            "M1",
            "--run-time",
            str(run_time),
            "--ramp-up",
            "0",
            "--test-file-size",
            "1M",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    stopped: list[int] = []
    try:
        assert cli.stdout is not None
        for line in cli.stdout:
            lines.append(line)
            if line.lstrip().startswith("[1/2") and "M1:" in line and " IOPS" in line:
                break  # step 1's first numbers
        stopped = job_processes(proc)
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        fault_at = time.monotonic()
        out, err = cli.communicate(timeout=120)
        took = time.monotonic() - fault_at
    finally:
        for pid in stopped:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if cli.poll() is None:
            cli.kill()
            cli.communicate()
    text = "".join(lines) + out + err
    print(f"\ncommand line, jobs stopped: ended {took:.1f} s later, exit {cli.returncode}\n{text[-700:]}")
    assert stopped, text
    assert cli.returncode == 1, text
    assert f"M1 ({h}:{port})" in text and "phase: run" in text and "internal error" not in text, text
    assert took < run_time + DEFAULT.grace + DEFAULT.stop_grace + SLACK, took
