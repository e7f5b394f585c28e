"""Faults of remote managers, with real `fio --server` processes on loopback: stuck jobs, text floods,
slow links, impossible values; and managers that start together and add up to ALL.

Each test prints what it measured (run with -s to see the figures)."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import time
from pathlib import Path

import pytest

from app.engine.common.message_gate import MESSAGE_CAP
from app.engine.run.managers import remote_endpoint
from app.engine.run.runner import RunListener, Runner, RunOptions
from app.engine.run.step_watch import STOP_GRACE_S
from app.model.plan import SpecLine, Target
from tests.fio_proxy import FioProxy
from tests.helpers import grid, prepared
from tests.integration.test_remote_fio import FIO_BINARIES

pytestmark = [pytest.mark.fio, pytest.mark.slow]


class Collect(RunListener):
    def __init__(self, on_samples=None):
        self.samples_by_step: list = []
        self.messages: list = []
        self.outcomes: list = []
        self.on_samples = on_samples

    def samples(self, step, samples):
        self.samples_by_step.extend(samples)
        if self.on_samples:
            self.on_samples(samples)

    def message(self, step, message):
        self.messages.append(message)

    def step_finished(self, outcome):
        self.outcomes.append(outcome)


def plan_for(tmp_path: Path, managers: int = 1):
    plan = grid(managers, 1, 1, qd=4)
    plan.specs[0].lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]
    for m in plan.managers:
        m.host = None
        m.workers[0].targets = [Target(str(tmp_path / f"{m.name}.tst"))]
    return plan


def runner_for(plan, addresses: dict[str, str], listener, run_time: int) -> Runner:
    endpoints = {name: remote_endpoint(name, addr) for name, addr in addresses.items()}
    return prepared(
        Runner(plan, endpoints, listener, RunOptions(run_time=run_time, engine="null", file_size=1 << 20))
    )


def run_through_proxy(tmp_path: Path, server: tuple[str, int], run_time: int, **proxy_options):
    """One manager reached through a FioProxy: (listener, run status, seconds taken, proxy)."""
    proxy = FioProxy(*server, "127.0.0.4", **proxy_options)
    try:
        listener = Collect()
        runner = runner_for(
            plan_for(tmp_path), {"M1": f"{proxy.host}:{proxy.port}"}, listener, run_time=run_time
        )
        t0 = time.monotonic()
        status = runner.run()
        return listener, status, time.monotonic() - t0, proxy
    finally:
        proxy.close()


def job_processes(server_pid: int) -> list[int]:
    """fio's job processes under a server: its descendants that made themselves session leaders."""
    out, todo = [], [server_pid]
    while todo:
        pid = todo.pop()
        for task in Path(f"/proc/{pid}/task").glob("*"):
            with contextlib.suppress(OSError, ValueError):
                for child in map(int, (task / "children").read_text().split()):
                    todo.append(child)
                    with contextlib.suppress(OSError):
                        if os.getsid(child) == child:
                            out.append(child)
    return out


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize("binary", FIO_BINARIES)
def test_stopped_job_processes_fail_the_manager_by_progress_not_by_messages(tmp_path, fio_server, binary):
    host, port, proc = fio_server("127.0.0.2", binary)
    stopped: list[int] = []
    at: list[float] = []

    def freeze(samples):
        if not stopped and any(s.level == "manager" and s.interval.ios > 0 for s in samples):
            stopped.extend(job_processes(proc.pid))
            for pid in stopped:
                os.kill(pid, signal.SIGSTOP)
            at.append(time.monotonic())

    listener = Collect(freeze)
    runner = runner_for(plan_for(tmp_path), {"M1": f"{host}:{port}"}, listener, run_time=30)
    t0 = time.monotonic()
    try:
        status = runner.run()
    finally:
        for pid in stopped:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    took = time.monotonic() - t0
    assert stopped, "no job process found under the server"
    assert status == "failed"
    fin = listener.outcomes[0].finished["M1"]
    assert not fin.ok and f"{host}:{port}" in fin.reason, fin.reason
    assert "no report and no report data" in fin.reason or "made no progress" in fin.reason, fin.reason
    ended_after = took - (at[0] - t0)
    print(f"\n{binary}: stopped job: step ended {ended_after:.1f} s after SIGSTOP (run time 30 s)")
    assert ended_after < 10 + STOP_GRACE_S + 5  # stall limit + stop grace + slack, far below the 30 s run


def test_text_flood_is_bounded_and_the_step_still_ends_on_time(tmp_path, fio_server):
    host, port, _ = fio_server("127.0.0.2")
    before = rss_mib()
    listener, status, took, proxy = run_through_proxy(tmp_path, (host, port), 3, flood=2000, hold_end=True)
    grew = rss_mib() - before
    flood = [m for m in listener.messages if "flood line" in m.text]
    print(
        f"\ntext flood: {proxy.injected} lines sent, {len(flood)} kept, step ended after {took:.1f} s, "
        f"peak RSS grew {grew:.0f} MiB"
    )
    assert proxy.injected > 5000
    assert 0 < len(flood) <= MESSAGE_CAP
    assert any("were not kept" in m.text and "repeated" in m.text for m in listener.messages)
    assert status == "failed"  # its end (STOP/QUIT) never arrived
    fin = listener.outcomes[0].finished["M1"]
    # after the job ended only text arrives: no progress, caught before the deadline
    assert not fin.ok and "no report and no report data" in fin.reason, fin.reason
    assert took < 3 + 10 + STOP_GRACE_S + 10  # run + stall limit + stop grace + setup slack
    assert grew < 200


@pytest.mark.parametrize("binary", FIO_BINARIES)
def test_slow_link_manager_is_late_not_dead(tmp_path, fio_server, binary):
    host, port, _ = fio_server("127.0.0.2", binary)
    # 320 kbit/s; one report is ~184 KB
    listener, status, took, proxy = run_through_proxy(tmp_path, (host, port), 2, rate=40_000)
    late = [m.text for m in listener.messages if "are late" in m.text]
    print(
        f"\n{binary}: slow link: {proxy.sent_to_client} bytes at 40 kB/s, step took {took:.1f} s, late notes: {late[:2]}"
    )
    fin = listener.outcomes[0].finished["M1"]
    assert status == "complete" and fin.ok, fin.reason
    assert late and "data still arriving" in late[0]
    assert listener.outcomes[0].raw_output["M1"]  # the final report made it


@pytest.mark.parametrize("binary", FIO_BINARIES)
def test_an_impossible_counter_fails_the_manager_naming_server_and_value(tmp_path, fio_server, binary):
    host, port, _ = fio_server("127.0.0.2", binary)
    listener, status, took, proxy = run_through_proxy(
        tmp_path, (host, port), 20, corrupt=("io_bytes", 2**64 - 1)
    )
    assert proxy.corrupted >= 1
    fin = listener.outcomes[0].finished["M1"]
    print(f"\n{binary}: impossible value: step ended after {took:.1f} s: {fin.reason[:90]}")
    assert status == "failed" and not fin.ok
    assert f"manager M1 ({proxy.host}:{proxy.port}) sent an impossible value" in fin.reason
    assert "read.io_bytes = 18446744073709551615" in fin.reason and "internal error" not in fin.reason
    assert took < 15  # failed at the bad report, not at the end of the 20 s run
    stored = [s for s in listener.samples_by_step if s.manager == "M1" and s.level == "manager"]
    assert all(s.whole.read_bytes < 2**62 for s in stored)  # the bad report was not used


@pytest.mark.parametrize("binary", FIO_BINARIES)
def test_managers_start_together_and_all_is_the_sum_per_second(tmp_path, fio_server, binary):
    addresses = {}
    for i, host in enumerate(("127.0.0.2", "127.0.0.3", "127.0.0.5")):
        h, p, _ = fio_server(host, binary)
        addresses[f"M{i + 1}"] = f"{h}:{p}"
    listener = Collect()
    runner = runner_for(plan_for(tmp_path, 3), addresses, listener, run_time=4)
    assert runner.run() == "complete"
    outcome = listener.outcomes[0]
    spread = outcome.start_spread
    assert spread is not None and set(outcome.job_started) == set(addresses)
    print(f"\n{binary}: managers' jobs started within {spread * 1000:.0f} ms")
    assert spread < 0.5  # goal < 0.1 s on loopback; generous for a busy machine
    assert any("started within" in m.text for m in listener.messages)

    clock = runner.last_telemetry.all_clock
    kept: dict[float, object] = {}
    for s in listener.samples_by_step:
        if s.level == "all":
            kept[s.t] = s.interval  # a slot's last ALL sample is the one the store keeps
    per_slot: dict[float, list] = {}
    for s in listener.samples_by_step:
        if s.level == "manager":
            per_slot.setdefault(clock.fio_slot(s.manager, s.whole.seconds) * clock.interval, []).append(s)
    assert set(kept) == set(per_slot) and len(kept) >= 3
    for t, got in kept.items():
        parts = per_slot[t]
        assert got.ios == pytest.approx(sum(m.interval.ios for m in parts), rel=0.01), t
        if len({m.manager for m in parts}) == len(parts):  # one report per manager in this second
            assert got.iops == pytest.approx(sum(m.interval.iops for m in parts), rel=0.01), t
    full = [t for t, parts in per_slot.items() if {m.manager for m in parts} == set(addresses)]
    assert len(full) >= 3  # seconds where every manager reported
    results = {(s.level, s.key): s.whole for s in outcome.results}
    total = results[("all", "ALL")]
    managers = [results[("manager", m)] for m in addresses]
    assert total.ios == sum(m.ios for m in managers)
    assert total.iops == pytest.approx(sum(m.iops for m in managers), rel=0.01)
    assert sum(m.ios for m in kept.values()) == total.ios
