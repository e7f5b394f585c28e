"""Replays two real 8-second fio recordings as two managers, one of them on a link that holds its reports
and passes them on in bunches, with the runner's loop stalling for a while (its overdue ticks then emit
several ALL seconds at once): every second stored in a real database must be the one fio measured —
each manager's seconds equal to fio's own cumulative numbers differenced, ALL's the sum of the reports fio
measured in that second, within the step's length."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import pytest

from app.engine.sampling.telemetry import StepTelemetry, completed_ios
from app.store import ManagerInfo, Recorder, SampleRow, WorkerInfo, open_store, step_samples
from tests.fio_fixtures import documents, snapshots

RUN_S = 8
STALL = (102.2, 106.1)  # the runner's loop ticks nothing in between (a busy machine)
# B's link: "bunched" holds its reports and passes them on at these times (while the loop also stalls);
# "silent" passes its first three on time, then nothing: B is given up before ALL's patience ran out
SCENARIOS = {"bunched": (107.0, 109.2), "silent": None}
SILENT_AFTER = 3
GIVE_UP = 105.2


def fio_seconds(name: str) -> list[tuple[float, int, int]]:
    """(fio's runtime in s, I/Os in the report's interval, I/Os so far) per report, from fio's own JSON (its
    completed I/Os: telemetry.completed_ios)."""
    out, before = [], 0
    for doc in documents(name):
        runtime = max(max(j["read"]["runtime"], j["write"]["runtime"]) for j in doc["jobs"])
        ios = sum(completed_ios(j["read"]) + completed_ios(j["write"]) for j in doc["jobs"])
        out.append((runtime / 1000, ios - before, ios))
        before = ios
    return out


def expected_all(delivered: dict[str, int]) -> tuple[dict[int, int], dict[int, int]]:
    """ALL per second straight from fio's JSON: each delivered report in the second fio measured it (its
    runtime, from its first report), and the whole step so far at each second."""
    per, whole_at = defaultdict(int), []
    for name, count in delivered.items():
        reports = fio_seconds(name)[:count]
        phase = reports[0][0]
        seconds = {}
        for runtime, ios, so_far in reports:
            k = round(runtime - phase)
            per[k] += ios
            seconds[k] = so_far
        whole_at.append(seconds)
    wholes = {
        k: sum(next((s[j] for j in sorted(s, reverse=True) if j <= k), 0) for s in whole_at) for k in per
    }
    return dict(per), wholes


def arrivals(scenario: str) -> list[tuple[float, object]]:
    a = snapshots("eight_a", "A")  # on time: 100 s, 101 s, ...
    b = snapshots("eight_b", "B", rename="b.")
    releases = SCENARIOS[scenario]
    if releases is None:
        held = b[:SILENT_AFTER]
    else:
        held = []
        for snap in b:  # sent on time, passed on at the next release
            release = next(r for r in releases if r >= snap.received)
            held.append(replace(snap, received=release + 0.001 * len(held)))
    return sorted([(s.received, s) for s in a + held], key=lambda x: x[0])


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_bunched_late_and_lost_reports_store_every_second_as_fio_measured_it(tmp_path, scenario):
    tel = StepTelemetry({"a": ("A", "wA", "tA"), "b.b": ("B", "wB", "tB")})
    batches: list[list] = []
    with open_store(tmp_path / "replay.db") as store:
        rec = Recorder(store)
        run = rec.begin_run({"name": "replay"})
        rec.add_managers(run, [ManagerInfo("A"), ManagerInfo("B")])
        rec.add_workers(run, [WorkerInfo("A", "wA"), WorkerInfo("B", "wB")])
        step = rec.begin_step(run, 0, run_s=RUN_S)

        def store_batch(samples):
            if samples:
                batches.append(samples)
                rec.add_samples(
                    step, [SampleRow(s.manager, s.level, s.key, s.t, s.interval, s.whole) for s in samples]
                )

        now = 100.0
        stall = STALL if scenario == "bunched" else (0.0, 0.0)
        given_up = scenario != "silent"

        def loop_at(t: float) -> None:
            nonlocal given_up
            if not given_up and t >= GIVE_UP:
                given_up = True
                store_batch(tel.manager_done("B"))  # the watch gave the silent manager up
            store_batch(tel.tick(t))

        for at, snap in arrivals(scenario):  # the runner's loop: ticks every 0.25 s, except while it stalls
            if stall[0] < at < stall[1]:
                at = stall[1]  # what arrived meanwhile is read once the loop runs again
            while now + 0.25 < at:
                now += 0.25
                if not stall[0] < now < stall[1]:
                    loop_at(now)
            now = at
            store_batch(tel.update(snap))
            if snap.final:
                store_batch(tel.manager_done(snap.manager))
            loop_at(now)
        store_batch(tel.flush())

        got_all = {round(t): m.ios for t, m in step_samples(store, step, "all", "ALL")}
        got_whole = {round(t): m.ios for t, m in step_samples(store, step, "all", "ALL", "whole")}
        got_times = [t for t, _ in step_samples(store, step, "all", "ALL")]
        managers = {n: [m.ios for _, m in step_samples(store, step, "manager", n, manager=n)] for n in "AB"}

    assert any(sum(s.level == "all" for s in b) > 1 for b in batches), "no batch held several ALL seconds"
    delivered = {
        "eight_a": len(documents("eight_a")),
        "eight_b": SILENT_AFTER if scenario == "silent" else len(documents("eight_b")),
    }
    if scenario == "bunched":
        assert tel.all_clock.late.get("B"), "no report of B came after its second was shown"
    for n, name in (("A", "eight_a"), ("B", "eight_b")):
        own = [ios for _, ios, _ in fio_seconds(name)][: delivered[name]]
        assert managers[n] == own, n  # fio's own numbers, differenced
    want, want_whole = expected_all(delivered)
    assert got_all == want
    assert got_whole == want_whole
    assert max(got_times) <= RUN_S
    assert sum(got_all.values()) == sum(fio_seconds(n)[c - 1][2] for n, c in delivered.items())
    final_all = next(s for s in tel.final_results() if s.level == "all")
    assert final_all.whole.ios == sum(got_all.values())
    assert final_all.whole.iops == pytest.approx(
        sum(s.whole.iops for s in tel.final_results() if s.level == "manager")
    )


def test_a_failed_managers_share_of_all_is_its_ios_over_the_steps_time():
    """B fails after its third report (killed: no final report): ALL's whole step is every I/O completed
    over the step's time, not B's rate over its 2.9 s added as if it had run all 8 s."""
    tel = StepTelemetry({"a": ("A", "wA", "tA"), "b.b": ("B", "wB", "tB")})
    a, b = snapshots("eight_a", "A"), snapshots("eight_b", "B", rename="b.")[:SILENT_AFTER]
    for snap in sorted(a + b, key=lambda s: s.received):
        tel.update(snap)
    tel.manager_done("B", failed=True)
    tel.manager_done("A")
    tel.flush()
    results = {(s.level, s.key): s.whole for s in tel.final_results()}
    ma, mb, total = results[("manager", "A")], results[("manager", "B")], results[("all", "ALL")]
    step_s = ma.seconds
    assert total.ios == ma.ios + mb.ios
    assert total.iops == pytest.approx(ma.iops + mb.ios / step_s, rel=1e-9)
    assert total.iops == pytest.approx((ma.ios + mb.ios) / step_s, rel=2e-3)  # all I/Os over the step's time
    assert total.iops < ma.iops + mb.iops * 0.5  # not B's own rate as if it had run the whole step
    note = tel.all_clock.partial_summary()
    assert "B ran 2.9 s" in note and f"{mb.ios:,} I/Os" in note


def test_a_manager_that_ended_with_its_final_report_is_not_partial():
    tel = StepTelemetry({"a": ("A", "wA", "tA"), "b.b": ("B", "wB", "tB")})
    for snap in sorted(
        snapshots("eight_a", "A") + snapshots("eight_b", "B", rename="b."), key=lambda s: s.received
    ):
        tel.update(snap)
    tel.manager_done("B", failed=True)  # e.g. fio reported errors, but ran the whole step
    results = {(s.level, s.key): s.whole for s in tel.final_results()}
    assert results[("all", "ALL")].iops == pytest.approx(
        results[("manager", "A")].iops + results[("manager", "B")].iops
    )
    assert tel.all_clock.partial_summary() == ""
