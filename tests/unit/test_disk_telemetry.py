"""Disk statistics per interval, on recorded real fio 3.33 runs (tests/fixtures/disk-stats)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from app.engine.jobs.jobfile import JobInfo
from app.engine.sampling.disk_telemetry import NO_DISKS_REASON, DiskContext, DiskTracker, step_disk_context
from app.engine.sampling.telemetry import StepTelemetry
from app.engine.transports.fioproto.decode import decode_du
from app.live.disks import LAST, WHOLE, LiveDisks
from app.model.disk_metrics import DiskCounts
from tests.disk_fixtures import (
    local_documents,
    local_snapshots,
    remote_packets,
    remote_snapshots,
    stock_client_json,
)


# --- iostat's arithmetic ---------------------------------------------------------------------------
def test_iostat_figures_of_a_window():
    c = DiskCounts(
        window_ms=2000,
        read_ios=300,
        write_ios=100,
        read_ticks=600,
        write_ticks=100,
        in_queue=3000,
        busy_ms=500,
    )
    assert c.util_pct == 25.0  # 500 ms busy in 2 s
    assert c.aqu_sz == 1.5  # 3000 ms of queue time over 2000 ms
    assert c.await_ms == 700 / 400 and c.r_await_ms == 2.0 and c.w_await_ms == 1.0
    assert c.read_iops == 150.0 and c.write_iops == 50.0
    later = DiskCounts(3000, 400, 100, 0, 0, 700, 100, 3500, 1500)
    step = later.minus(c)
    assert (step.window_ms, step.read_ios, step.write_ios, step.busy_ms) == (1000, 100, 0, 1000)
    assert step.util_pct == 100.0 and step.w_await_ms is None  # no writes: no write await
    assert c.plus(step) == later
    assert DiskCounts(0).util_pct is None and DiskCounts(1000).await_ms is None
    assert DiskCounts(1000, busy_ms=None).util_pct is None  # a stored total without fio's io_ticks


# --- a local fio (JSON) ----------------------------------------------------------------------------
def test_local_reports_give_one_window_per_report_adding_up_to_the_step():
    docs = local_documents("loop-randrw")
    tracker = DiskTracker(interval=1.0)
    rows = [tracker.update(s).disks for s in local_snapshots("loop-randrw")]
    assert all([d.disk for d in r] == ["loop0"] for r in rows)
    windows = [r[0].interval for r in rows]
    last = docs[-1]["disk_util"][0]
    assert sum(w.read_ios for w in windows) == last["read_ios"]
    assert sum(w.write_ios for w in windows) == last["write_ios"]
    assert sum(w.in_queue for w in windows) == last["in_queue"]
    whole = rows[-1][0].whole
    assert whole.util_pct == pytest.approx(last["util"])  # the step so far is fio's own utilisation
    assert rows[0][0].estimated and windows[0].window_ms == pytest.approx(
        1000
    )  # counted from one interval before
    # a window is the difference of two reports over their time apart (fio's own report times here)
    a, b = docs[1], docs[2]
    dt = b["timestamp_ms"] - a["timestamp_ms"]
    da = {k: b["disk_util"][0][k] - a["disk_util"][0][k] for k in ("read_ios", "read_ticks", "in_queue")}
    w = windows[2]
    assert w.window_ms == pytest.approx(dt)
    assert w.read_iops == pytest.approx(da["read_ios"] * 1000 / dt)
    assert w.aqu_sz == pytest.approx(da["in_queue"] / dt)
    assert w.r_await_ms == pytest.approx(da["read_ticks"] / da["read_ios"])
    assert all(0 < x.util_pct <= 100 for x in windows)


def test_a_report_whose_disk_counters_did_not_move_gives_no_window():
    snaps = local_snapshots("loop-randrw")
    repeat = dataclasses.replace(
        snaps[-2], received=snaps[-2].received + 0.15, fio_ms=snaps[-2].fio_ms + 150, final=True
    )  # later, but fio did not refresh the disk: same counters
    tracker = DiskTracker()
    for s in snaps[:-1]:
        tracker.update(s)
    (d,) = tracker.update(repeat).disks
    assert d.interval is None and d.whole.read_ios == snaps[-2].disk_util[0]["read_ios"]


# --- a fio server (DU messages) --------------------------------------------------------------------
def test_server_reports_carry_the_disks_clock_and_give_exact_windows(tmp_path):
    snaps = remote_snapshots(tmp_path)
    dus = [decode_du(p.packet.payload) for p in remote_packets(tmp=tmp_path) if p.packet.opcode == 13]
    assert len(snaps) == len(dus) >= 4  # one DU per report: per-interval disk statistics do arrive
    tracker = DiskTracker()
    rows = [tracker.update(s).disks[0] for s in snaps]
    assert not any(r.estimated for r in rows)
    for i in range(1, len(dus) - 1):
        w, a, b = rows[i].interval, dus[i - 1], dus[i]
        assert w.window_ms == b["msec"] - a["msec"]
        assert w.util_pct == pytest.approx(100 * (b["io_ticks"] - a["io_ticks"]) / (b["msec"] - a["msec"]))
        assert w.read_ios == b["ios"][0] - a["ios"][0] and w.write_ios == b["ios"][1] - a["ios"][1]
    assert rows[-1].interval is None  # the final report repeats the last refreshed counters
    stock = stock_client_json()["disk_util"][-1]  # what the stock client printed for the same bytes
    whole = rows[-1].whole
    assert (whole.read_ios, whole.write_ios, whole.in_queue) == (
        stock["read_ios"],
        stock["write_ios"],
        stock["in_queue"],
    )
    assert whole.util_pct == pytest.approx(stock["util"], abs=1e-6)


def test_the_local_estimate_stays_close_to_the_exact_figures_of_the_same_run(tmp_path):
    """The same real run decoded twice: with the disk's clock (server) and without it (as a local fio's JSON)."""
    snaps = remote_snapshots(tmp_path)
    exact, estimate = DiskTracker(), DiskTracker()
    pairs = []
    for s in snaps:
        bare = dataclasses.replace(
            s, disk_util=[{k: v for k, v in d.items() if k not in ("msec", "io_ticks")} for d in s.disk_util]
        )
        pairs.append((exact.update(s).disks[0], estimate.update(bare).disks[0]))
    for e, g in pairs:
        assert g.estimated and not e.estimated
        if e.interval is not None:
            assert g.interval.util_pct == pytest.approx(e.interval.util_pct, abs=3.0)
            assert g.interval.aqu_sz == pytest.approx(e.interval.aqu_sz, rel=0.1)


# --- no disks: why ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["tmpfs-file", "null-engine"])
def test_runs_without_disks_say_why(name):
    snaps = local_snapshots(name)
    assert not any(s.disk_util for s in snaps)  # fio 3.33 reports no disk at all here
    job = snaps[0].jobs[0]["jobname"]
    told = StepTelemetry(
        {job: ("m1", "w1", "w1.t1")}, 1.0, DiskContext(reasons={"m1": "the null engine does no disk I/O"})
    )
    plain = StepTelemetry({job: ("m1", "w1", "w1.t1")})
    for s in snaps:
        for tel, reason in ((told, "the null engine does no disk I/O"), (plain, NO_DISKS_REASON)):
            manager = [x for x in tel.update(s) if x.level == "manager"]
            if manager:
                assert manager[0].disks.disks == () and manager[0].disks.reason == reason
                assert manager[0].interval.disk_util is None


def _job(manager, worker, target, path, network=False):
    return JobInfo(
        f"{manager}.{worker}.{target}",
        manager,
        worker,
        worker.upper(),
        f"{worker}.{target}",
        target,
        path,
        path.startswith("/dev/"),
        "S",
        1,
        network=network,
    )


def test_what_is_known_before_a_step():
    shm = "/dev/shm/fiometer-none.tst"
    jobs = [
        _job("L", "w1", "t1", shm),
        _job("N", "w1", "t1", "/tmp/x"),
        _job("W", "w1", "t1", "C:\\x"),
        _job("R", "w1", "t1", "/data/x"),
        _job("T", "w1", "t1", "tcp://h:1", network=True),
    ]
    os_names = {"L": "Linux", "N": "Linux", "W": "Windows", "R": "linux", "T": "Linux"}
    ctx = step_disk_context(jobs[:1], os_names, ["L"])
    if Path("/dev/shm").is_dir() and os.path.ismount("/dev/shm"):
        assert (
            "tmpfs" in ctx.reasons["L"] and ctx.unwatched["L"] == (("w1", "t1"),) and ctx.targets["L"] == {}
        )
    ctx = step_disk_context(jobs[1:], os_names, ["N"], engine="null")
    assert "null engine" in ctx.reasons["N"] and "null engine" in ctx.reasons["R"]
    ctx = step_disk_context(jobs[2:], os_names, [])
    assert "Linux only" in ctx.reasons["W"] and "W runs Windows" in ctx.reasons["W"]
    assert "R" not in ctx.reasons and "R" not in ctx.targets  # remote Linux: fio names its disks when it runs
    assert "T" not in ctx.reasons and ctx.no_storage == {
        "T"
    }  # network workers only: nothing to say about disks
    snap = local_snapshots("null-engine", manager="T")[1]
    assert (
        DiskTracker(ctx).update(snap).reason is None and DiskTracker().update(snap).reason == NO_DISKS_REASON
    )


# --- live rows -------------------------------------------------------------------------------------
def test_live_rows_follow_the_update_frequency_and_the_steps():
    snaps = local_snapshots("loop-randrw")
    tel = StepTelemetry(
        {snaps[0].jobs[0]["jobname"]: ("m1", "w1", "w1.t1")},
        1.0,
        DiskContext(targets={"m1": {"loop0": (("w1", "T1"), ("w2", "T1"))}}),
    )
    batches = [tel.update(s) for s in snaps]
    live = LiveDisks()
    live.add(batches[0], 2)
    (row,) = live.rows.values()
    assert row.targets == (("w1", "T1"), ("w2", "T1")) and not row.latest  # 1 s of 2: no point yet
    live.add(batches[1], 2)
    first, second = (b[-2].disks.disks[0].interval for b in batches[:2])
    assert row.latest[LAST] == first.plus(second)  # two windows joined, like the other live numbers
    assert row.latest[WHOLE] == batches[1][-2].disks.disks[0].whole
    assert live.for_scope(None, ("m1", "w2")) == [row] and live.for_scope(None, ("m1", "w3")) == []
    assert live.for_scope({"m2"}) == []
    live.start_step()
    nulls = StepTelemetry(
        {local_snapshots("null-engine")[0].jobs[0]["jobname"]: ("m1", "w1", "w1.t1")},
        1.0,
        DiskContext(reasons={"m1": "why"}, unwatched={"m1": (("w1", "T1"),)}),
    )
    for s in local_snapshots("null-engine"):
        live.add(nulls.update(s), 1)
    (only,) = live.rows.values()  # the new step's fio has no disk: the old row is gone, the reason shown
    assert only.disk is None and only.reason == "why" and only.targets == (("w1", "T1"),)
