"""Bounds on one step: report checks, message gate, ALL per interval slot, the step watch."""

import math

import numpy as np
import pytest

from app.engine.common.message_gate import MessageGate
from app.engine.run.step_watch import BEHIND_S, STOP_GRACE_S, StepWatch
from app.engine.sampling.all_clock import AllClock, consecutive
from app.engine.sampling.report_checks import ReportChecker
from app.engine.sampling.telemetry import JobTracker, StepTelemetry
from app.model.bucket_hist import BucketHist
from app.model.metrics import Metrics
from tests.fio_fixtures import snapshots
from tests.helpers import prepared


def job(ios=100, nbytes=409600, runtime=1000, name="j", **lat):
    d = {
        "total_ios": ios,
        "io_bytes": nbytes,
        "runtime": runtime,
        "lat_ns": {"N": ios, "mean": 1000.0, "max": 5000.0, "min": 10.0, **lat},
    }
    return {
        "jobname": name,
        "read": d,
        "write": {"total_ios": 0, "io_bytes": 0, "runtime": 0},
        "usr_cpu": 1.0,
    }


# --- report checks ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bad,words",
    [
        (job(ios=2**64 - 1), "read.total_ios = 18446744073709551615"),
        (job(nbytes=-1), "read.io_bytes = -1"),
        (job(mean=math.nan), "read.lat_ns.mean = nan"),
        (job(max=-3.0), "read.lat_ns.max = -3.0"),
        (job(runtime=60_000), "read.runtime = 60000 ms, but the step has run for only 2.0 s"),
    ],
)
def test_impossible_values_are_named(bad, words):
    problem = ReportChecker().check([bad], elapsed_s=2.0)
    assert problem is not None and words in problem and "job 'j'" in problem


def test_counters_going_backwards_are_refused_unless_a_ramp_may_reset_them_once():
    plain = ReportChecker()
    assert plain.check([job(ios=100)]) is None
    assert "read.total_ios went backwards from 100 to 50" in plain.check([job(ios=50)])
    ramped = ReportChecker(ramp=True)
    assert ramped.check([job(ios=100)]) is None
    assert ramped.check([job(ios=50)]) is None  # ramp_time ended
    assert ramped.check([job(ios=60)]) is None
    assert "went backwards" in ramped.check([job(ios=10)])


def test_a_runtime_one_ms_shorter_is_accepted():
    c = ReportChecker()
    assert c.check([job(ios=100, runtime=2000)]) is None
    assert c.check([job(ios=120, runtime=1999)]) is None


def test_final_report_one_ms_shorter_is_not_a_ramp_reset():
    """fio 3.31: the final report's runtime can be 1 ms below the last interim one."""
    tracker = JobTracker()
    tracker.update(job(ios=1000, nbytes=4096000, runtime=1000))
    tracker.update(job(ios=2000, nbytes=8192000, runtime=2000))
    iv, whole = tracker.update(job(ios=2010, nbytes=8232960, runtime=1999))
    assert tracker.resets == 0
    assert iv.read_ios == 10  # not 2010 (a reset would count the whole run again)
    assert whole.read_ios == 2010


# --- message gate ---------------------------------------------------------------------------------------
def test_gate_drops_repeats_limits_the_rate_and_caps():
    now = [0.0]
    gate = MessageGate(cap=30, per_second=5, burst=10, clock=lambda: now[0])
    kept = [gate.admit(f"line {i}") for i in range(100)]
    assert sum(kept) == 10 and gate.over_rate == 90
    assert not gate.admit("line 0") and gate.repeats == 1
    for _ in range(100):
        now[0] += 1.0
        gate.admit(f"later {now[0]}")
    assert gate.admitted == 30 and gate.over_cap == 100 - 20
    note = gate.summary("M1")
    assert note.startswith(f"{gate.dropped} more messages from M1 were not kept") and "1 repeated" in note


# --- ALL on one clock -------------------------------------------------------------------------------------
def m(ios, seconds=1.0):
    rate = 1 / seconds if seconds else 0.0
    return Metrics(
        seconds=seconds, read_ios=ios, read_bytes=ios * 4096, read_iops=ios * rate, read_bps=ios * 4096 * rate
    )


def test_all_is_the_sum_of_the_managers_in_each_slot_and_a_missing_manager_is_missing():
    clock = AllClock(1.0, ["A", "B"])
    assert clock.add("A", 0.98, m(100), m(100)) == []  # B has not reported for second 1 yet
    ((t, iv, _),) = clock.add("B", 1.05, m(200), m(200))
    assert t == 1.0 and iv.read_ios == 300 and iv.read_iops == pytest.approx(300)
    assert clock.add("A", 2.01, m(100), m(200)) == []
    assert clock.tick(2.4) == []  # not overdue yet
    ((t, iv, whole),) = clock.tick(2.0 + 0.5 + 2.0)  # B never reported for second 2
    assert t == 2.0 and iv.read_ios == 100  # not B's last value
    assert whole.read_ios == 400
    ((t, iv, _),) = clock.add("A", 2.1, m(10, 0.1), m(210))  # A's final report, same second: shown again
    assert t == 2.0 and iv.read_ios == 110


def test_with_one_manager_all_keeps_the_managers_times_and_the_final_report_replaces_its_slot():
    clock = AllClock(1.0, ["A"])
    ((t0, _, _),) = clock.add("A", 0.0, m(90, 0.9), m(90, 0.9))
    ((t1, iv, _),) = clock.add("A", 1.002, m(100), m(190, 1.9))
    assert (t0, t1) == (0.0, 1.002) and iv.read_ios == 100  # the manager's own times, not the grid's
    ((t2, iv, whole),) = clock.add("A", 1.124, m(10, 0.12), m(200, 2.02))  # fio's final report
    assert t2 == t1 and iv.read_ios == 110 and whole.read_ios == 200  # the same sample, replaced
    two = AllClock(1.0, ["A", "B"])
    two.add("A", 1.002, m(100), m(100))
    ((t, _, _),) = two.add("B", 0.995, m(100), m(100))
    assert t == 1.0  # several managers: the grid's time


def test_a_manager_that_ended_is_not_waited_for():
    clock = AllClock(1.0, ["A", "B"])
    clock.add("A", 1.0, m(100), m(100))
    clock.add("B", 1.0, m(100), m(100))
    assert clock.add("A", 2.0, m(100), m(200)) == []
    ((t, iv, _),) = clock.done("B")
    assert t == 2.0 and iv.read_ios == 100


def test_two_reports_of_one_manager_in_a_slot_are_one_window():
    both = consecutive(m(100, 1.0), m(10, 0.1))
    assert both.seconds == pytest.approx(1.1) and both.read_ios == 110
    assert both.read_iops == pytest.approx(110 / 1.1)
    assert consecutive(m(100), m(0, 0.0)).read_iops == pytest.approx(100)


def test_two_windows_with_count_array_histograms_keep_them_as_arrays():
    values = np.array([1000, 2000, 4000], dtype=np.int64)
    a, b = m(100, 1.0), m(10, 0.1)
    a.read_hist = BucketHist(values, np.array([60, 40, 0], dtype=np.int64))
    b.read_hist = BucketHist(values, np.array([0, 5, 5], dtype=np.int64))
    both = consecutive(a, b)
    assert hasattr(both.read_hist, "bucket_arrays")  # ALL's roll-up of the slot stays on the numpy path
    assert dict(both.read_hist) == {1000: 60, 2000: 45, 4000: 5} and both.write_hist == {}
    assert both.read_lat_max_ns == max(a.read_lat_max_ns, b.read_lat_max_ns)


def test_telemetry_all_samples_sit_on_the_interval_grid():
    tel = StepTelemetry({"plain": ("A", "w", "t1"), "ramped": ("A", "w", "t2"), "b.clones": ("B", "w", "t")})
    a, b = snapshots("two_jobs_ramp", "A"), snapshots("numjobs", "B", rename="b.")
    for s in b:
        s.received += 0.3  # B reports 0.3 s after A, every second
    alls = [
        s for snap in sorted(a + b, key=lambda s: s.received) for s in tel.update(snap) if s.level == "all"
    ]
    assert all(s.t == round(s.t) for s in alls)


# --- step watch --------------------------------------------------------------------------------------------
def test_watch_stops_a_manager_whose_counters_stand_still_then_aborts_it():
    w = StepWatch({"M": "M (h:1)"}, run_s=60, ramp_s=0, interval=1.0, ramp=False, go_at=0.0)
    for t in range(1, 4):
        assert w.on_snapshot("M", [job(ios=100 * t, runtime=1000 * t)], float(t)) == []
    t = 3.0
    actions = []
    while not actions:
        t += 1.0
        w.on_snapshot("M", [job(ios=300, runtime=1000 * int(t))], t)
        actions = w.due(t, {"M": None})
    assert actions[0].kind == "stop" and "made no progress for 10 s" in actions[0].text and t == 13.0
    assert w.forced_reason("M") == actions[0].text
    assert w.due(t + STOP_GRACE_S, {"M": None})[0].kind == "abort"


def test_watch_deadline_asks_to_stop_and_a_manager_ending_well_is_only_late():
    w = StepWatch({"M": "M"}, run_s=5, ramp_s=1, interval=1.0, ramp=True, go_at=0.0)
    w.on_snapshot("M", [job(ios=1, runtime=1)], 1.0)
    n = 1
    for t in range(2, 30):
        n += 100
        w.on_snapshot("M", [job(ios=n, runtime=t * 1000)], float(t))
        actions = w.due(float(t), {"M": 10 * t})
        if actions:
            break
    assert t == 17 and actions[0].kind == "stop" and "16 s after its jobs started" in actions[0].text
    assert w.forced_reason("M", ok=True) is None  # ended with its final numbers: fine
    assert "did not end when asked" in w.forced_reason("M", ok=False)


def test_watch_waits_for_a_manager_behind_on_fios_clock_then_stops_it():
    """Reports still arriving but lagging fio's own clock (a busy host): told once and waited for up to
    BEHIND_S past the deadline; a manager past its run time on fio's clock is stopped at the deadline."""

    def run(lag_s: float) -> list[tuple[int, str, str]]:
        w = StepWatch({"M": "M (h:1)"}, run_s=20, ramp_s=0, interval=1.0, ramp=False, go_at=0.0)
        out = []
        for t in range(1, 80):
            clock = max(t - lag_s, 0.5)  # fio's clock in the report arriving at t
            w.on_snapshot(
                "M",
                [{**job(ios=100 * t, runtime=int(clock * 1000)), "job_runtime": int(clock * 1000)}],
                float(t),
            )
            out += [(t, a.kind, a.text) for a in w.due(float(t), {"M": 1000 * t})]
            if any(kind == "stop" for _, kind, _ in out):
                break
        return out

    lagging = run(lag_s=15)  # jobs started at t=1 (first report); deadline 1 + 20 + 10 = 31
    (t, kind, text), (t2, kind2, _) = lagging
    assert (
        (t, kind) == (31, "message")
        and "M (h:1) is behind" in text
        and "16 s of 20 s on fio's own clock" in text
    )
    assert (t2, kind2) == (45, "stop")  # its clock reached 20 s at 35: the usual 10 s grace from there
    ontime = run(lag_s=0)
    assert [(t, kind) for t, kind, _ in ontime] == [(31, "stop")]
    stuck = run(lag_s=1000)  # never gets anywhere on its clock: waited for BEHIND_S, then stopped
    assert [(t, kind) for t, kind, _ in stuck] == [(31, "message"), (31 + int(BEHIND_S), "stop")]


def test_watch_judges_a_server_by_its_own_reports_not_by_our_queue():
    """fio's reports reach the socket on time (the transport's fio_side says so: arrival, fio's clock,
    ended) while our own process is behind with them: from t=5 nothing more is processed here. That is
    not late, not a stall, and past the deadline it is not stopped: its part ended at the server at t=21.
    Without fio_side the same step says 'late' and stops it (the old rule, kept for local fio)."""

    def run(with_side: bool) -> list[tuple[int, str]]:
        w = StepWatch({"M": "M (h:1)"}, run_s=20, ramp_s=0, interval=1.0, ramp=False, go_at=0.0)
        out = []
        for t in range(1, 60):
            if t < 5:  # processed in time
                w.on_snapshot(
                    "M", [{**job(ios=100 * t, runtime=1000 * t), "job_runtime": 1000 * t}], float(t)
                )
            side = {"M": (float(min(t, 21)), float(min(t, 20)), t >= 21, False)} if with_side else None
            out += [(t, a.kind) for a in w.due(float(t), {"M": 1000 * min(t, 21)}, {"M": float(t)}, side)]
        return out

    assert run(with_side=True) == []
    old = run(with_side=False)
    assert (8, "message") in old and any(kind == "stop" for _, kind in old)


def test_watch_still_stops_a_server_whose_reports_stop_reaching_the_socket():
    """fio_side helps only a server that reports: one whose reports stop at the socket (while it answers
    its ETA polls) is stopped as before, and one that says it ended is no longer judged."""
    w = StepWatch({"M": "M (h:1)"}, run_s=60, ramp_s=0, interval=1.0, ramp=False, go_at=0.0)
    w.on_snapshot("M", [{**job(ios=100), "job_runtime": 1000}], 1.0)
    kinds = []
    for t in range(2, 20):
        kinds += [
            a.kind for a in w.due(float(t), {"M": 1000}, {"M": float(t)}, {"M": (1.0, 1.0, False, False)})
        ]
    assert kinds[:2] == [
        "message",
        "stop",
    ]  # late at 5 s, stopped 10 s after the last report reached the socket


def test_watch_gives_no_verdict_while_our_reader_is_behind_up_to_the_behind_limit():
    """Bytes wait unread on the socket (our reader starved; the server blocked only by us, so the byte
    counter stands still while it still 'answers'): not stalled, not late, not stopped at the deadline;
    BEHIND_S past the deadline the usual rules apply again."""
    w = StepWatch({"M": "M (h:1)"}, run_s=20, ramp_s=0, interval=1.0, ramp=False, go_at=0.0)
    w.on_snapshot("M", [{**job(ios=100), "job_runtime": 1000}], 1.0)
    out = []
    for t in range(2, 80):
        out += [
            (t, a.kind) for a in w.due(float(t), {"M": 5000}, {"M": float(t)}, {"M": (2.0, 2.0, False, True)})
        ]
    assert out[0] == (1 + 30 + int(BEHIND_S), "stop")  # nothing said or done before: jobs from 1, deadline 31


def _backlog_run(per_report_s: float, side: bool) -> tuple[list[tuple[float, str]], float]:
    """A 20 s step whose server reports on time and ends at t=21, while our side (a loaded Fiometer) hands
    on report k (fio's clock k s) only at 1 + per_report_s * k: the backlog grows past the deadline (31)
    and BEHIND_S. Returns the watch's stop/abort actions and when the final report was processed."""
    w = StepWatch({"M": "M (h:1)"}, run_s=20, ramp_s=0, interval=1.0, ramp=False, go_at=0.0)
    out: list[tuple[float, str]] = []
    k, t = 0, 1.0
    while t < 200 and not out:
        while k < 20 and 1 + per_report_s * (k + 1) <= t:
            k += 1
            w.on_snapshot("M", [{**job(ios=100 * k, runtime=1000 * k), "job_runtime": 1000 * k}], t)
        if k == 20:
            return out, t  # the final report and Finished are processed: the manager ended well
        fio = {"M": (min(t, 21.0), min(t, 20.0), t >= 21, False)} if side else None
        out += [
            (t, a.kind)
            for a in w.due(t, {"M": 1000 * int(min(t, 21))}, {"M": min(t, 21.0)}, fio)
            if a.kind != "message"
        ]
        t += 0.25
    return out, t


def test_watch_waits_for_our_own_backlog_past_the_behind_limit_while_it_moves():
    """Under load our side fell 50 s behind a server that did its part on time (it ended at t=21): while
    its reports still come through our pipes and move, it is not stopped, even past deadline + BEHIND_S
    (jobs from its first report here, 4.5: 34.5 + 30); the step ends when its final report is processed
    (t=71). The old rule (BEHIND_S, then stop) stopped it at 64.5 and aborted it later: a manager lost to
    our own slowness."""
    out, done_at = _backlog_run(3.5, side=True)
    assert out == [] and done_at == 71.0
    # the same backlog without fio's side of the story (a transport that cannot tell it): fio's clock
    # in the reports still moves, so it is waited for too, and stopped only if that clock stops moving
    out, done_at = _backlog_run(3.5, side=False)
    assert out == [] and done_at == 71.0


def test_watch_still_stops_a_backlog_that_stops_moving():
    """Past BEHIND_S the wait lasts only while our side delivers: a manager whose reports stop coming
    through (a lost Finished, a wedged reader) is stopped and aborted as before."""
    w = StepWatch({"M": "M (h:1)"}, run_s=20, ramp_s=0, interval=1.0, ramp=False, go_at=0.0)
    for k in range(1, 15):  # processed until t=45, fio's clock at 14 s; then nothing more here
        w.on_snapshot("M", [{**job(ios=100 * k, runtime=1000 * k), "job_runtime": 1000 * k}], 3.0 * k + 3)
    out = []
    for t in range(46, 120):
        side = {"M": (21.0, 20.0, True, False)}
        out += [(t, a.kind) for a in w.due(float(t), {"M": 21000}, {"M": 21.0}, side) if a.kind != "message"]
    # jobs from t=6 (its first report here): deadline 6 + 20 + 10, BEHIND_S later it is stopped, then aborted
    assert out[:2] == [(66, "stop"), (66 + int(STOP_GRACE_S), "abort")]


def test_watch_aborts_on_an_impossible_value():
    w = StepWatch({"M": "M (h:1)"}, run_s=5, ramp_s=0, interval=1.0, ramp=False, go_at=0.0)
    (action,) = w.on_snapshot("M", [job(ios=2**64 - 1)], 1.0)
    assert action.kind == "abort" and "M (h:1) sent an impossible value" in action.text
    assert "18446744073709551615" in action.text


def test_watch_says_when_numbers_are_late():
    w = StepWatch({"M": "M"}, run_s=60, ramp_s=0, interval=1.0, ramp=False, go_at=0.0)
    w.on_snapshot("M", [job(ios=100)], 1.0)
    assert w.due(2.0, {"M": 1000}) == []
    (late,) = w.due(5.0, {"M": 5000})
    assert late.kind == "message" and "last report 4 s ago (data still arriving)" in late.text
    (back,) = w.on_snapshot("M", [job(ios=200, runtime=2000)], 6.0)
    assert "arrived again" in back.text


def test_watch_stops_a_server_answering_without_reports_but_leaves_a_silent_one_to_the_transport():
    """No report and no report data for 10 s: a server still answering its ETA polls has stuck jobs
    (stopped); one that sends nothing at all may be busy, and the transport's silence limit decides."""

    def quiet_run(heard_each_second: bool) -> list:
        w = StepWatch({"M": "M (h:1)"}, run_s=60, ramp_s=0, interval=1.0, ramp=False, go_at=0.0)
        w.on_snapshot("M", [job(ios=100)], 1.0)
        actions: list = []
        for t in range(2, 20):
            heard = float(t) if heard_each_second else 1.0
            actions += [a for a in w.due(float(t), {"M": 1000}, {"M": heard}) if a.kind != "message"]
        return actions

    stop, abort = quiet_run(heard_each_second=True)
    assert stop.kind == "stop" and "sent no report and no report data for 10 s" in stop.text
    assert abort.kind == "abort"
    assert quiet_run(heard_each_second=False) == []


# --- --map, remembered protocols ---------------------------------------------------------------------------
def test_map_entry_matching_no_target_is_refused():
    from app.engine.run.runner import ManagerEndpoint, Runner, RunOptions, RunRefused
    from app.model.plan import Target
    from tests.helpers import grid

    plan = grid(1, 1, 1)
    plan.managers[0].workers[0].targets = [Target("data")]
    endpoints = {"M1": ManagerEndpoint("M1", "Linux", lambda: None)}
    opts = RunOptions(mapping={"data": "/tmp/x.tst", "dta": "/tmp/y.tst"})
    with pytest.raises(
        RunRefused,
        match=r"--map dta=/tmp/y.tst: no target of the plan is named 'dta'; its targets are 'data'",
    ):
        prepared(Runner(plan, endpoints, options=opts))


def test_protocol_learnt_per_server_is_kept_in_the_settings(tmp_path):
    from app import user_settings

    path = tmp_path / "s.json"
    user_settings.remember_protocol("10.0.0.5:8765", 120, path)
    assert user_settings.load(path).fio_protocols == {"10.0.0.5:8765": 120}
    user_settings.forget_protocol("10.0.0.5:8765", path)
    assert user_settings.load(path).fio_protocols == {}
