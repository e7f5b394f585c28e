"""Every stored second is its own, on fio's clock: two real `fio --server` managers, one of them behind a
proxy that holds its reports and passes them on in bunches (a slow, bunching link). The run is recorded
into a real database; every stored second of each manager is the one fio measured, and every stored
second of ALL is the sum of the managers' reports fio measured in that second — within the step's length,
late reports marked, none stored with another second's numbers."""

from __future__ import annotations

import io
import time
from collections import defaultdict

import pytest

from app.cli.progress import ProgressPrinter
from app.engine.run.managers import remote_endpoint
from app.engine.run.runner import Runner, RunOptions
from app.session.recording import Fanout, StoreRecorder
from app.store import get_run, open_store, step_samples, step_series
from tests.fio_proxy import FioProxy
from tests.helpers import prepared
from tests.integration.test_remote_faults import Collect, job_processes, plan_for
from tests.stored_vs_fio import check_manager

pytestmark = [pytest.mark.fio, pytest.mark.slow]

RUN_S = 8


def expected_all(manager_samples) -> tuple[dict[int, int], dict[int, int]]:
    """ALL per second from the managers' own reports, placed by fio's time (each manager's jobs' runtime,
    counted from its first report): (I/Os in second k, whole-step I/Os at second k)."""
    by_manager = defaultdict(list)
    for s in manager_samples:
        by_manager[s.manager].append(s)
    ios: dict[int, int] = defaultdict(int)
    whole_at: dict[str, dict[int, int]] = defaultdict(dict)
    for name, samples in by_manager.items():
        phase = samples[0].whole.seconds
        while phase > 1.5:
            phase -= 1.0
        for s in samples:
            k = max(round(s.whole.seconds - phase), 0)
            ios[k] += s.interval.ios
            whole_at[name][k] = s.whole.ios
    wholes = {}
    for k in ios:
        wholes[k] = sum(
            max(((j, w) for j, w in seconds.items() if j <= k), default=(0, 0))[1]
            for seconds in whole_at.values()
        )
    return dict(ios), wholes


def test_a_bunching_link_keeps_every_second_its_own_in_the_store(tmp_path, fio_server):
    direct = fio_server("127.0.0.2")
    behind = fio_server("127.0.0.3")
    proxy = FioProxy(
        behind[0], behind[1], "127.0.0.4", bunch=3.5
    )  # > ALL's patience: seconds go out without it
    plan = plan_for(tmp_path, 2)
    addresses = {"M1": f"{direct[0]}:{direct[1]}", "M2": f"{proxy.host}:{proxy.port}"}
    endpoints = {n: remote_endpoint(n, a) for n, a in addresses.items()}
    collect = Collect()
    try:
        with open_store(tmp_path / "seconds.db") as store:
            recorder = StoreRecorder(store)
            runner = prepared(
                Runner(
                    plan,
                    endpoints,
                    Fanout(recorder, collect),
                    RunOptions(run_time=RUN_S, engine="null", file_size=1 << 20),
                )
            )
            assert runner.run() == "complete", [m.text for m in collect.messages]
            step = get_run(store, recorder.run_id, raw_output=True).steps[0]
            stored_managers = {n: step_samples(store, step.id, "manager", n, manager=n) for n in addresses}
            stored_all = step_samples(store, step.id, "all", "ALL")
            stored_all_whole = dict(step_samples(store, step.id, "all", "ALL", "whole"))
            checks = {n: check_manager(store, step, n) for n in addresses}
            messages = [m.text for m in step.messages]
    finally:
        proxy.close()
    clock = runner.last_telemetry.all_clock
    print(f"\nproxy passed reports on in {proxy.bunches} bunches; late reports: {clock.late}")
    assert proxy.bunches >= 2
    assert clock.late.get("M2"), "no report of M2 came after its second was shown: the test did not bunch"

    # each manager's stored seconds are its own reports, as fio measured them, and add up to fio's own totals
    for name in addresses:
        own = [
            (s.t, s.interval.ios)
            for s in collect.samples_by_step
            if s.level == "manager" and s.manager == name
        ]
        assert [(t, x.ios) for t, x in stored_managers[name]] == own, name
        assert checks[name].complete, checks[name].why

    # every stored second of ALL: the sum of what fio measured in that second, within the step's length
    want_ios, want_whole = expected_all([s for s in collect.samples_by_step if s.level == "manager"])
    got = {round(t): x.ios for t, x in stored_all}
    assert got == want_ios
    assert {round(t): x.ios for t, x in stored_all_whole.items()} == want_whole
    assert max(t for t, _ in stored_all) <= RUN_S
    assert len(set(got.values())) > 1  # not every second holding one second's numbers
    late_samples = [s for s in collect.samples_by_step if s.level == "all" and s.late]
    assert late_samples, "the seconds M2 filled late are marked"
    final_all = next(r.whole for r in runner_results(collect) if r.level == "all")
    assert final_all.ios == sum(c.own.ios for c in checks.values())
    assert any("arrived after their second was shown" in m and "M2" in m for m in messages), messages


def runner_results(collect):
    return collect.outcomes[0].results


def test_a_manager_killed_mid_step_counts_in_all_over_the_steps_time(tmp_path, fio_server):
    import os
    import signal

    first = fio_server("127.0.0.2")
    second = fio_server("127.0.0.3")
    killed: list[bool] = []

    def kill_second(samples):
        if not killed and any(
            s.level == "manager" and s.manager == "M2" and s.whole.seconds > 1.5 for s in samples
        ):
            killed.append(True)
            for pid in job_processes(second[2].pid):  # (its own session: not in the server's group)
                os.kill(pid, signal.SIGKILL)
            os.killpg(second[2].pid, signal.SIGKILL)

    collect = Collect(kill_second)
    printed = TimedLines()
    runner = prepared(
        Runner(
            plan_for(tmp_path, 2),
            {n: remote_endpoint(n, f"{h}:{p}") for n, (h, p, _) in (("M1", first), ("M2", second))},
            Fanout(collect, ProgressPrinter(printed)),
            RunOptions(run_time=5, engine="null", file_size=1 << 20),
        )
    )
    runner.run()
    failed = [(t, line) for t, line in printed.lines if "manager M2 failed" in line]
    step_end = next(t for t, line in printed.lines if "step 1 partial" in line)
    assert len(failed) == 1 and failed[0][0] < step_end - 1.0, (
        printed.lines
    )  # the CLI says so when it happens
    outcome = collect.outcomes[0]
    assert outcome.status == "partial", [m.text for m in collect.messages]
    results = {(s.level, s.key): s for s in outcome.results}
    m1, m2, total = (results[k].whole for k in (("manager", "M1"), ("manager", "M2"), ("all", "ALL")))
    assert not results[("manager", "M2")].final and m2.seconds < m1.seconds - 1
    print(
        f"\nM2 ran {m2.seconds:.1f} s of {m1.seconds:.1f} s: ALL {total.iops:,.0f} IOPS "
        f"(all I/Os over the step's time {(m1.ios + m2.ios) / m1.seconds:,.0f}; M2's own rate added: "
        f"{m1.iops + m2.iops:,.0f})"
    )
    assert total.ios == m1.ios + m2.ios
    assert total.iops == pytest.approx((m1.ios + m2.ios) / m1.seconds, rel=0.01)
    assert any("partial share" in m.text and "M2 ran" in m.text for m in collect.messages)


class TimedLines(io.StringIO):
    """What the CLI printed, each line with the time it was written."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[tuple[float, str]] = []

    def write(self, text: str) -> int:
        self.lines += [(time.monotonic(), line) for line in text.splitlines() if line]
        return len(text)


class Arrivals(Collect):
    """Collect, and when each manager sample reached the listener (the bunches show here)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived: dict[str, list[float]] = defaultdict(list)

    def samples(self, step, samples):
        now = time.monotonic()
        for s in samples:
            if s.level == "manager":
                self.arrived[s.manager].append(now)
        super().samples(step, samples)


def test_behind_a_bunching_link_every_level_is_stored_on_fios_clock(tmp_path, fio_server):
    """Issue 35.5: the manager's, its worker's and its target's stored seconds are where fio's runtime puts
    them (each manager's first measured report at 0), not at the bunch's arrival; the reports that came after
    ALL had shown their second are marked late at every level."""
    direct = fio_server("127.0.0.61")
    behind = fio_server("127.0.0.62")
    proxy = FioProxy(behind[0], behind[1], "127.0.0.63", bunch=3.5)
    plan = plan_for(tmp_path, 2)
    addresses = {"M1": f"{direct[0]}:{direct[1]}", "M2": f"{proxy.host}:{proxy.port}"}
    collect = Arrivals()
    try:
        with open_store(tmp_path / "seconds.db") as store:
            recorder = StoreRecorder(store)
            runner = prepared(
                Runner(
                    plan,
                    {n: remote_endpoint(n, a) for n, a in addresses.items()},
                    Fanout(recorder, collect),
                    RunOptions(run_time=RUN_S, engine="null", file_size=1 << 20),
                )
            )
            assert runner.run() == "complete", [m.text for m in collect.messages]
            step = get_run(store, recorder.run_id).steps[0]
            stored = {
                (level, manager, key): (
                    step_samples(store, step.id, level, key, manager=manager),
                    dict(step_samples(store, step.id, level, key, "whole", manager=manager)),
                )
                for level, manager, key in step_series(store, step.id)
                if level != "all"
            }
    finally:
        proxy.close()
    assert proxy.bunches >= 2
    gaps = [b - a for a, b in zip(collect.arrived["M2"], collect.arrived["M2"][1:], strict=False)]
    assert sum(g < 0.3 for g in gaps) >= 2, gaps  # M2's reports did arrive in bunches
    levels = {level for level, _m, _k in stored}
    assert levels == {"manager", "worker", "target"}, stored.keys()
    for (level, manager, key), (rows, wholes) in stored.items():
        assert len(rows) >= RUN_S - 1, (level, manager, key)
        # fio's own time of each stored row: its whole-step runtime as fio reported it, from the first report
        phase = wholes[rows[0][0]].seconds
        while phase > 1.5:
            phase -= 1.0
        fio_seconds = [wholes[t].seconds - phase for t, _ in rows]
        assert [t for t, _ in rows] == pytest.approx(fio_seconds, abs=0.0015), (level, manager, key)
        assert max(t for t, _ in rows) <= RUN_S
    m2 = [t for t, _ in stored[("manager", "M2", "M2")][0]]
    assert all(0.8 < b - a < 1.2 for a, b in zip(m2, m2[1:-1], strict=False)), (
        m2
    )  # a second apart, not bunched
    late = {(s.level, s.manager) for s in collect.samples_by_step if s.late}
    assert {("manager", "M2"), ("worker", "M2"), ("target", "M2"), ("all", None)} <= late, late
    assert not any(s.late for s in collect.samples_by_step if s.manager == "M1"), "M1 was never late"
