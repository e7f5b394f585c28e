"""Remote managers decoded in another process (app.engine.transports.remote_host), against real `fio --server`
processes on 127.0.0.x: the same run, stop and abort as in the window's process, and nothing left running
on the servers when that process or the window's goes away."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from app.engine.run.managers import build_endpoints
from app.engine.run.runner import ManagerEndpoint, RunListener, Runner, RunOptions
from app.engine.transports.remote_host import HostedRemote, RemoteHost
from app.engine.transports.transport import ANSWERING_AGAIN, SENT_NOTHING, Finished, Message, Snapshot
from app.model import planfile
from app.model.plan import SpecLine, Target
from tests.fio_servers import free_port, job_processes
from tests.helpers import grid, prepared

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")]

HOSTS = ("127.0.0.2", "127.0.0.3")
LONG_JOB = "[global]\nioengine=null\nsize=1g\ntime_based=1\nruntime=60\n[w1]\nrw=randread\n"


def server_plan(addresses, tmp_path):
    plan = grid(len(addresses), 2, 1, qd=2)
    plan.specs[0].lines = [SpecLine(4096, 100, 70, 100, 0, 1, 4096, 0)]
    for m, address in zip(plan.managers, addresses, strict=True):
        m.host = address
        for w in m.workers:
            w.targets = [Target(str(tmp_path / f"{m.name}-{w.name}.tst"))]
    return plan


class Counts(RunListener):
    """Live manager samples per manager; ``first`` is set at the first one."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        self.first = threading.Event()

    def samples(self, step, samples):
        for s in samples:
            if s.level == "manager":
                self.seen[s.manager] = self.seen.get(s.manager, 0) + 1
                self.first.set()


def hosted_runner(servers, tmp_path, seconds, listener=None):
    plan = server_plan([f"{h}:{p}" for h, p, _ in servers], tmp_path)
    options = RunOptions(engine="null", run_time=seconds, decode_apart=1)
    return prepared(Runner(plan, build_endpoints(plan), listener, options))


@pytest.fixture
def servers(fio_server):
    return [fio_server(h) for h in HOSTS]


def test_stop_keeps_final_numbers_and_abort_leaves_nothing_running(servers, tmp_path):
    listener = Counts()
    runner = hosted_runner(servers, tmp_path, 60, listener)
    threading.Thread(target=lambda: (listener.first.wait(20), time.sleep(1.5), runner.stop())).start()
    t0 = time.monotonic()
    assert runner.run() == "stopped"
    assert time.monotonic() - t0 < 20
    (outcome,) = runner.outcomes
    assert all(f.ok for f in outcome.finished.values()) and all(outcome.raw_output[m] for m in ("M1", "M2"))

    listener = Counts()
    runner = hosted_runner(servers, tmp_path, 60, listener)
    threading.Thread(target=lambda: (listener.first.wait(20), runner.abort())).start()
    runner.run()
    assert all(not f.ok for f in runner.outcomes[0].finished.values())
    for _h, _p, proc in servers:
        assert wait_for(lambda proc=proc: not job_processes(proc)), "a job ran on after Abort"


def wait_for(cond, timeout=10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return False


def test_the_host_process_dying_fails_each_manager_in_plain_words(servers, tmp_path):
    host = RemoteHost()
    try:
        transports = [host.transport((h, p), f"M{i}") for i, (h, p, _) in enumerate(servers, 1)]
        for t in transports:
            t.start(LONG_JOB)
            t.go()
        events = [t.events() for t in transports]
        assert wait_for(lambda: all(job_processes(p) for _h, _p, p in servers))
        host._proc.kill()  # the process that reads the servers dies
        for t, evs in zip(transports, events, strict=True):
            last = list(evs)[-1]
            assert isinstance(last, Finished) and not last.ok
            assert "ended unexpectedly" in last.reason and t.name in last.reason
    finally:
        host.close()


def test_the_window_s_process_going_away_aborts_the_servers_jobs(servers):
    host = RemoteHost()
    try:
        t = host.transport(servers[0][:2], "M1")
        t.start(LONG_JOB)
        t.go()
        proc = servers[0][2]
        assert wait_for(lambda: bool(job_processes(proc)))
        host._commands.close()  # what the child sees when the window's process is killed: the pipe's end
        assert host._proc.wait(timeout=15) == 0  # it told the server to end the job, then left
        assert wait_for(lambda: not job_processes(proc)), "the job ran on after its client went away"
    finally:
        host.close()


def test_a_server_that_refuses_says_so_through_the_host(tmp_path, servers):
    closed = free_port("127.0.0.2")
    plan = server_plan([f"{servers[0][0]}:{servers[0][1]}", f"127.0.0.2:{closed}"], tmp_path)
    endpoints = build_endpoints(plan, hosts={"M2": f"{servers[0][0]}:{servers[0][1]}"})
    endpoints["M2"] = ManagerEndpoint(
        "M2", "Linux", lambda: None, f"127.0.0.2:{closed}", server=("127.0.0.2", closed)
    )
    runner = prepared(Runner(plan, endpoints, None, RunOptions(engine="null", run_time=2, decode_apart=1)))
    assert runner.run() == "failed"
    finished = runner.outcomes[0].finished
    assert finished["M1"].ok
    assert not finished["M2"].ok and f"127.0.0.2:{closed}" in finished["M2"].reason
    assert isinstance(runner._remote_host, RemoteHost)


def test_ctrl_c_in_a_terminal_stops_gracefully_though_it_reaches_the_host_process_too(servers, tmp_path):
    """A terminal's Ctrl-C goes to the whole process group: the child must leave it to the CLI (Stop keeps
    fio's final numbers), not die of it."""
    plan = server_plan([f"{h}:{p}" for h, p, _ in servers], tmp_path)
    path = tmp_path / "plan.json"
    planfile.save(plan, path)
    managers = [a for i, (h, p, _) in enumerate(servers, 1) for a in ("--manager", f"M{i}={h}:{p}")]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(tmp_path / "r.db"),
            "run",
            str(path),
            *managers,
            "--run-time",
            "60",
            "--engine",
            "null",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    lines = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "M1:" in line and "M2:" in line:
                break
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: every process of the foreground group
        out, err = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    text = "".join(lines) + out
    assert proc.returncode == 3, text + err
    assert "Run stopped: 1 of 1 step ran (1 stopped)." in text and "Traceback" not in err, text + err


def test_few_servers_stay_in_the_window_s_process(servers, tmp_path):
    plan = server_plan([f"{h}:{p}" for h, p, _ in servers], tmp_path)
    runner = prepared(
        Runner(plan, build_endpoints(plan), None, RunOptions(engine="null", run_time=1, decode_apart=3))
    )
    transports = runner._make_transports(runner.jobfiles[0])
    assert not any(isinstance(t, HostedRemote) for t in transports.values()) and runner._remote_host is None


def test_a_frozen_server_s_notes_cross_the_host_process_with_their_kind(servers):
    """The client in the host process says a server is silent, then answering again; the notes reach this
    process with their kind (the step summarises them by it, whatever their wording)."""
    host_addr, port, proc = servers[0]
    host = RemoteHost()
    try:
        t = host.transport((host_addr, port), "M1")
        t.start(LONG_JOB)
        t.go()
        events: list = []
        frozen = False
        for ev in t.events():
            events.append(ev)
            if isinstance(ev, Snapshot) and not frozen:
                frozen = True
                os.killpg(proc.pid, signal.SIGSTOP)  # the whole server stops answering; TCP stays up
            elif isinstance(ev, Message) and ev.kind == SENT_NOTHING:
                os.killpg(proc.pid, signal.SIGCONT)
            elif isinstance(ev, Message) and ev.kind == ANSWERING_AGAIN:
                t.stop()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGCONT)
        host.close()
    notes = [(m.kind, m.text) for m in events if isinstance(m, Message) and m.kind]
    assert [k for k, _ in notes] == [SENT_NOTHING, ANSWERING_AGAIN], [str(e)[:200] for e in events[-5:]]
    where = f"manager M1 ({host_addr}:{port})"
    assert notes[0][1].startswith(f"{where} has sent nothing for ")
    assert notes[1][1].startswith(f"{where} is answering again after ")
    assert isinstance(events[-1], Finished) and events[-1].ok, events[-1]
