"""Disk statistics per interval in real runs: a local fio and a real `fio --server` on 127.0.0.2, both reading
a loop device whose kernel counters (/sys/block/loopN/stat) are read around the run to check fio's figures."""

from __future__ import annotations

import os
import shutil

import pytest

from app.analysis.disk_stats import run_disk_stats
from app.engine.run.managers import build_endpoints
from app.engine.run.runner import RunListener, Runner, RunOptions
from app.model.plan import LOCAL, SpecLine, Target
from app.session.recording import Fanout, StoreRecorder
from app.store.database import open_store
from app.store.queries import get_run, step_samples
from tests.helpers import grid, prepared
from tests.loop_disk import NEEDS_LOOP, kernel_delta, loop_device_in

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")]


@pytest.fixture
def loop_device(tmp_path):
    yield from loop_device_in(tmp_path)


class Collect(RunListener):
    def __init__(self) -> None:
        self.managers = []  # every manager sample, in order

    def samples(self, step, samples):
        self.managers += [s for s in samples if s.level == "manager"]


def reading_plan(dev: str, host: str | None = LOCAL):
    """Two workers reading the same device: one disk, shared by two targets."""
    plan = grid(1, 2, 1, qd=4)
    plan.specs[0].lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]
    plan.managers[0].host = host
    for w in plan.managers[0].workers:
        w.targets = [Target(dev)]
    return plan


def run(plan, tmp_path, **options):
    listener = Collect()
    store = open_store(tmp_path / "r.db")
    try:
        recorder = StoreRecorder(store)
        runner = prepared(
            Runner(plan, build_endpoints(plan), Fanout(recorder, listener), RunOptions(run_time=4, **options))
        )
        assert runner.run() == "complete"
        stored = [m for _t, m in step_samples(store, get_run(store, 1).steps[0].id, "manager", "M1")]
        totals = run_disk_stats(get_run(store, 1, raw_output=True))
    finally:
        store.close()
    return listener.managers, stored, totals


def check_against_kernel(samples, dev, kernel, exact: bool):
    name = os.path.basename(dev)
    disks = [s.disks for s in samples]
    assert all(d is not None and [x.disk for x in d.disks] == [name] for d in disks)
    rows = [d.disks[0] for d in disks]
    assert all(r.estimated is not exact for r in rows)
    whole = rows[-1].whole
    kernel_reads = kernel["reads"]
    assert 0.95 * kernel_reads <= whole.read_ios <= kernel_reads  # fio's counters are the kernel's
    windows = [r.interval for r in rows if r.interval is not None]
    assert len(windows) >= 3  # one per report, not only the step's total
    assert sum(w.read_ios for w in windows) == whole.read_ios  # the windows add up to the step
    assert sum(w.in_queue for w in windows) == whole.in_queue
    for w in windows[1:-1]:  # whole intervals (fio's reports are 1 s apart)
        assert 400 <= w.window_ms <= 1600  # (a busy machine delays fio's reports)
        assert 0 < w.util_pct <= 100 and w.aqu_sz > 0 and w.await_ms > 0 and w.read_iops > 0
        assert w.write_iops == 0
        assert w.read_iops == pytest.approx(w.read_ios * 1000 / w.window_ms)
    busy = sum(w.busy_ms for w in windows)
    assert busy == pytest.approx(kernel["io_ticks"], rel=0.15)  # exact remotely, estimated locally
    return windows


@NEEDS_LOOP
def test_local_fio_gives_disk_figures_every_interval(tmp_path, loop_device):
    dev = loop_device
    with kernel_delta(dev) as kernel:
        samples, stored, _totals = run(reading_plan(dev), tmp_path)
    windows = check_against_kernel(samples, dev, kernel, exact=False)
    rows = [s.disks.disks[0] for s in samples]
    assert rows[0].targets == (("w1", dev), ("w2", dev))  # the disk once, with both workers' targets
    # the per-interval utilisation is what the store keeps for the manager, beside fio's whole-step one
    ivs = [m.disk_util for m in stored if m.seconds > 0]
    assert ivs[:-1] and all(v is not None and 0 < v <= 100 for v in ivs[:-1])
    assert ivs[-1] is None or 0 < ivs[-1] <= 100  # fio's final report may not have refreshed the disk
    assert {round(w.util_pct, 6) for w in windows} >= {round(v, 6) for v in ivs[1:-1]}


@NEEDS_LOOP
def test_remote_fio_server_gives_exact_disk_figures_every_interval(tmp_path, loop_device, fio_server):
    dev = loop_device
    host, port, _proc = fio_server("127.0.0.2")
    with kernel_delta(dev) as kernel:
        samples, _stored, totals = run(reading_plan(dev, f"{host}:{port}"), tmp_path)
    windows = check_against_kernel(samples, dev, kernel, exact=True)
    # the DU messages carry the disk's own clock: windows are fio's msec, busy time its io_ticks
    assert all(float(w.window_ms).is_integer() and float(w.busy_ms).is_integer() for w in windows)
    assert samples[0].disks.disks[0].targets == ()  # fio names the disk only; the paths are the server's
    # the stored step totals use the same clock: the step's figures are the last live "whole" ones
    (total,) = totals
    whole = samples[-1].disks.disks[0].whole
    assert total.window_s == whole.window_ms / 1000 and total.aqu_sz == pytest.approx(whole.aqu_sz)


def test_null_engine_says_why_there_are_no_disk_figures(tmp_path):
    plan = grid(1, 1, 1)
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "t.tst"))]
    samples, stored, totals = run(plan, tmp_path, engine="null", file_size=1 << 20)
    assert samples and all(s.disks.disks == () for s in samples)
    assert "null engine" in samples[-1].disks.reason
    assert [w for w, _name in samples[-1].disks.unwatched] == ["w1"]  # the targets it concerns
    assert stored and all(m.disk_util is None for m in stored) and totals == []
