"""The step watch's bounds as a family: every phase of a step (start, ramp, run, final report) x every fault
(the reports stop while the server still answers; the reports come but fio's counters stay put). Each ends
the manager within the stall limit with the phase named; scripted reports, fio's clock as fio reports it
(its jobs' runtime starts again from 0 when the ramp ends: seen on fio 3.33, test_phase_bounds)."""

from __future__ import annotations

import pytest

from app.engine.common.phase_bounds import FINAL, RAMP, RUN, START, Bounds
from app.engine.run.step_watch import StepWatch

RAMP_S, RUN_S, STALL = 4.0, 6.0, 3.0
BOUNDS = Bounds(stall=STALL, grace=5.0, setup=20.0, stop_grace=1.0, late_data=2.0, behind=4.0)


def report(t: float, ios: int) -> list[dict]:
    """fio's report at t s after its jobs began: the runtime restarts at the ramp's end (so do counters)."""
    runtime_ms = int((t if t < RAMP_S else t - RAMP_S) * 1000)
    d = {"total_ios": ios, "io_bytes": 4096 * ios, "runtime": runtime_ms}
    return [{"jobname": "j", "read": d, "write": {}, "job_runtime": runtime_ms}]


def until(phase: str) -> float:
    """When (s after RUN, reports every 0.5 s from 1 s) the manager is in ``phase``."""
    return {START: 0.0, RAMP: 2.0, RUN: 6.0, FINAL: 11.5}[phase]


def drive(phase: str, fault: str) -> tuple[float, str]:
    """Reports until ``phase``, then the fault; (seconds from the fault to the stop, the reason)."""
    w = StepWatch(
        {"M1": "M1 (h:1)"}, run_s=RUN_S, ramp_s=RAMP_S, interval=0.5, ramp=True, go_at=0.0, bounds=BOUNDS
    )
    fault_at = until(phase)
    got, ios, t = 0, 0, 0.5
    while t < 60:
        t += 0.5
        healthy = t <= fault_at
        if healthy or fault == "counters stay put":  # (a stuck job's report: the last one again)
            if healthy:
                ios = ios + 100 if t != RAMP_S + 0.5 else 100  # counters restart at the ramp's end
                last = report(t - 1.0, ios)
            got += 1000
            for a in w.on_snapshot("M1", last, t):
                assert a.kind == "message", a
        if t > 1.0 and healthy:
            assert w.phase("M1", t) in (START, RAMP, RUN, FINAL)
        acts = [a for a in w.due(t, {"M1": got}, {"M1": t}) if a.kind in ("stop", "abort")]
        if acts:
            return t - fault_at, acts[0].text
    raise AssertionError("never stopped")


@pytest.mark.parametrize("phase", [START, RAMP, RUN, FINAL])
def test_reports_that_stop_while_the_server_answers_end_the_manager_naming_the_phase(phase):
    took, text = drive(phase, "reports stop")
    assert f"phase: {phase}" in text and "M1 (h:1)" in text, text
    assert took <= STALL + 1.0, (took, text)


@pytest.mark.parametrize("phase", [RAMP, RUN, FINAL])
def test_reports_whose_counters_stay_put_end_the_manager_naming_the_phase(phase):
    took, text = drive(phase, "counters stay put")
    assert f"phase: {phase}" in text and "made no progress" in text, text
    assert took <= STALL + 1.0, (took, text)


def test_after_the_ramp_fio_s_clock_counts_the_ramp_too():
    """fio restarts its jobs' runtime when the ramp ends; the watch's clock goes on from the ramp."""
    w = StepWatch({"M1": "M1"}, run_s=RUN_S, ramp_s=RAMP_S, interval=0.5, ramp=True, go_at=0.0, bounds=BOUNDS)
    w.on_snapshot("M1", report(3.5, 500), 4.5)
    assert w.phase("M1", 4.5) == RAMP
    w.on_snapshot("M1", report(4.5, 100), 5.5)  # 0.5 s into the run: runtime 500 ms, counters restarted
    assert w.phase("M1", 5.5) == RUN and w._m["M1"].fio_clock_s == pytest.approx(4.5)
    w.on_snapshot("M1", report(10.0, 900), 11.0)
    assert w.phase("M1", 11.0) == FINAL


def stopped_at(t_stop: float, *, sending_until: float, counted: bool = True) -> tuple[float | None, str]:
    """Reports until 3 s, Stop pressed at ``t_stop``; report bytes keep arriving until ``sending_until``.
    (seconds from the Stop to the abort or None, its text)."""
    w = StepWatch({"M1": "M1 (h:1)"}, run_s=60, ramp_s=0, interval=0.5, ramp=False, go_at=0.0, bounds=BOUNDS)
    got, t = 0, 0.0
    while t < 40:
        t += 0.25
        if t <= 3.0:
            w.on_snapshot("M1", report(t, int(t * 100)), t)
        if t <= sending_until:
            got += 100
        if t >= t_stop:
            w.stop_asked(t)
        for a in w.due(t, {"M1": got if counted else None}, {"M1": t}):
            if a.kind == "abort":
                return t - t_stop, a.text
            assert a.kind != "stop" or t < t_stop, a  # after the Stop only its own bound ends it
    return None, ""


def test_a_manager_silent_after_stop_is_ended_by_the_stop_grace_naming_the_stop():
    took, text = stopped_at(3.0, sending_until=3.0)
    assert took is not None and BOUNDS.stop_grace <= took <= BOUNDS.stop_grace + 0.5, (took, text)
    assert "phase: stop, in its run" in text and "M1 (h:1)" in text, text


def test_a_manager_still_sending_after_stop_is_waited_for_up_to_the_late_data_bound():
    took, text = stopped_at(3.0, sending_until=30.0)
    assert took is not None and BOUNDS.late_data <= took <= BOUNDS.late_data + 0.5, (took, text)
    assert "phase: stop" in text, text


def test_a_manager_whose_bytes_are_not_counted_is_left_to_its_transports_stop_grace():
    """A local fio: its transport ends it (SIGINT, then its own grace), not the watch."""
    assert stopped_at(3.0, sending_until=3.0, counted=False) == (None, "")


def test_a_server_reporting_less_often_than_the_stop_grace_is_given_two_reports_after_stop():
    """Reports every 4 s (Update Frequency 4): quiet for the 1 s stop grace is no sign of a hang yet."""
    w = StepWatch({"M1": "M1 (h:1)"}, run_s=60, ramp_s=0, interval=4.0, ramp=False, go_at=0.0, bounds=BOUNDS)
    w.on_snapshot("M1", report(4.0, 400), 4.0)
    w.stop_asked(4.5)
    t = 4.5
    while t < 20:
        t += 0.25
        if any(a.kind == "abort" for a in w.due(t, {"M1": 1000}, {"M1": t})):
            break
    assert t >= 4.5 + 2 * 4.0, t


def test_a_whole_server_without_cpu_for_longer_than_the_stall_is_not_stopped_when_it_returns():
    """No report and no answer for stall + 2 s in the run (a host short of CPU), then its answers come a
    moment before its reports, whose first shows the counters where they were: it goes on."""
    w = StepWatch({"M1": "M1 (h:1)"}, run_s=60, ramp_s=0, interval=0.5, ramp=False, go_at=0.0, bounds=BOUNDS)
    silent_from, back = 3.0, 3.0 + STALL + 2.0
    got, ios, heard, t = 0, 0, 0.0, 0.0
    while t < back + 2 * STALL:
        t = round(t + 0.25, 3)
        away = silent_from <= t < back
        if not away:
            heard = t
        if not away and not back <= t < back + 0.5:  # the answers first, the reports half a second later
            if t < silent_from or t >= back + 1.0:
                ios += 100  # (the first report back shows the counters where they were)
            got += 1000
            for a in w.on_snapshot("M1", report(t, ios), t):
                assert a.kind == "message", a
        acts = [a for a in w.due(t, {"M1": got}, {"M1": heard}) if a.kind in ("stop", "abort")]
        assert not acts, (t, acts)
