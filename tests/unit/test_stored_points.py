"""A stored run's chart points read on demand (SQLite computes them) equal what replaying every stored
sample through the live charts' LiveResults gives, as History did before; long runs are peak-decimated."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from app.live.data import ALL_KEY, CHART_FIELDS, KINDS, LAST, WHOLE, LiveResults
from app.model.metrics import Metrics
from app.store import ManagerInfo, Recorder, SampleRow, TargetInfo, WorkerInfo, open_store, step_samples
from app.ui.history.stored_series import ReplaySample, load_points, load_run

WORKERS = ("w1", "w2")


def _m(rng: np.random.Generator, seconds: float = 1.0, hist: bool = True) -> Metrics:
    r, w = int(rng.integers(1000, 5000)), int(rng.integers(0, 2000))
    return Metrics(
        seconds=seconds,
        read_ios=r,
        write_ios=w,
        read_bytes=4096 * r,
        write_bytes=4096 * w,
        read_iops=r / 1.0003,
        write_iops=w / 0.9991,
        read_bps=4096 * r / 1.0003,
        write_bps=4096 * w / 0.9991,
        read_lat_sum_ns=r * rng.uniform(1e5, 3e5),
        write_lat_sum_ns=w * rng.uniform(1e5, 3e5),
        read_lat_n=r,
        write_lat_n=w,
        read_lat_max_ns=float(rng.integers(10**6, 10**7)),
        write_lat_max_ns=float(rng.integers(10**6, 10**7)),
        read_hist={int(b): int(rng.integers(1, 99)) for b in rng.integers(10**4, 10**6, 30)} if hist else {},
        write_hist={int(b): int(rng.integers(1, 99)) for b in rng.integers(10**4, 10**6, 20)} if hist else {},
        usr_cpu=float(rng.uniform(0, 9)),
        sys_cpu=float(rng.uniform(0, 30)),
        disk_util=None,
        errors=int(rng.integers(0, 3)),
    )


def _write(path, seconds: int = 30, end: bool = True) -> int:
    rng = np.random.default_rng(11)
    with open_store(path) as store:
        rec = Recorder(store)
        run_id = rec.begin_run({"p": 1}, name="points")
        rec.add_managers(run_id, [ManagerInfo("M1")])
        rec.add_workers(run_id, [WorkerInfo("M1", w) for w in WORKERS])
        rec.add_targets(run_id, [TargetInfo("M1", w, f"{w}t1") for w in WORKERS])
        for index in range(2):
            step = rec.begin_step(run_id, index, spec_name=f"spec {index}", run_s=seconds)
            whole: dict[str, Metrics] = {}
            for t in range(1, seconds + 1):
                final = t == seconds and index == 1
                rows = []
                workers = []
                for w in WORKERS:
                    m = _m(rng, seconds=0.0 if final else 1.0)  # step 2 ends with fio's repeated report
                    whole[w] = wh = replace(_m(rng, seconds=float(t), hist=False))
                    rows += [
                        SampleRow("M1", "target", f"{w}t1", float(t), m, wh),
                        SampleRow("M1", "worker", w, float(t), m, wh),
                    ]
                    workers.append(m)
                mm = Metrics.combine(workers)
                mw = Metrics.combine([whole[w] for w in WORKERS])
                rows += [
                    SampleRow("M1", "manager", "M1", float(t), mm, mw),
                    SampleRow(None, "all", "ALL", float(t), mm, mw),
                ]
                rec.add_samples(step, rows)
            if end:
                rec.end_step(step)
        if end:
            rec.end_run(run_id, "complete")
    return run_id


def _replayed(store, data, step_id):
    """History's former way: every sample as Metrics through LiveResults, one step after another."""
    live = LiveResults(update_seconds=1)
    for step in data.run.steps:
        if step_id is not None and step.id != step_id:
            continue
        offset = 0.0 if step_id is not None else data.offsets[step.id]
        live.start_step(offset, step.spec_name)
        samples = []
        for level, key in (("all", "ALL"), ("manager", "M1"), *(("worker", w) for w in WORKERS)):
            manager = None if level == "all" else "M1"
            inter = step_samples(store, step.id, level, key, "interval", manager=manager)
            whole = dict(step_samples(store, step.id, level, key, "whole", manager=manager))
            samples += [
                ReplaySample(level, manager, key, t, m, whole[t], final=i == len(inter) - 1)
                for i, (t, m) in enumerate(inter)
            ]
        live.add(offset, samples)
    return live


@pytest.mark.parametrize("one_step", [False, True])
def test_points_read_on_demand_equal_the_replayed_samples(tmp_path, one_step):
    run_id = _write(tmp_path / "r.db")
    with open_store(tmp_path / "r.db") as store:
        data = load_run(store, run_id)
        step_id = data.run.steps[1].id if one_step else None
        before = _replayed(store, data, step_id)
        keys = [ALL_KEY, ("manager", "M1", "M1"), *(("worker", "M1", w) for w in WORKERS)]
        assert set(data.keys()) == set(keys)
        for kind in KINDS:
            now = load_points(store, data, keys, step_id, kind)
            assert [(m.x, m.label.split(": ")[1]) for m in now.steps] == [
                (m.x, m.label) for m in before.steps
            ]
            for k in keys:
                a, b = before.series[k], now.series[k]
                np.testing.assert_array_equal(b.xs(), a.xs())
                for f in CHART_FIELDS:
                    np.testing.assert_allclose(b.ys(kind, f), a.ys(kind, f), rtol=1e-6, equal_nan=True)
        assert np.isfinite(now.series[ALL_KEY].ys(LAST, "p99_ms")).sum() >= 29  # histograms kept for ALL
        assert not np.isfinite(now.series[("worker", "M1", "w1")].ys(LAST, "p99_ms")).any()


@pytest.mark.parametrize("ended", [True, False])
def test_a_long_run_is_peak_decimated_keeping_every_spike(tmp_path, ended):
    """Kept peaks (ended steps) or, for a run cut short, the same computed from the samples."""
    run_id = _write(tmp_path / "r.db", seconds=120, end=ended)
    with open_store(tmp_path / "r.db") as store:
        data = load_run(store, run_id)
        assert store.conn.execute("SELECT count(*) FROM sample_peaks").fetchone()[0] == (
            2 * 3 * 13 if ended else 0
        )  # 2 workers + manager, 13 bins
        before = _replayed(store, data, None)
        for kind in (LAST, WHOLE):
            now = load_points(store, data, [ALL_KEY], None, kind, bins=10)
            a, b = before.series[ALL_KEY], now.series[ALL_KEY]
            assert b.n < a.n / 2
            for f in ("iops", "mbps", "lat_max_ms"):
                ya, yb = a.ys(kind, f), b.ys(kind, f)
                assert np.nanmax(yb) == pytest.approx(np.nanmax(ya), rel=1e-6)
                assert np.nanmin(yb) == pytest.approx(np.nanmin(ya), rel=1e-6)
            assert not np.isnan(b.ys(kind, "iops")).any()  # one line through both steps, as live


@pytest.mark.parametrize("ended", [True, False])
def test_cpu_and_errors_of_a_long_run_are_read_when_charted(tmp_path, ended):
    """No peaks are kept for fio's CPU and the errors: a long run's are decimated from the samples, and
    only when a chart shows them (the kept peaks stay the fast path otherwise)."""
    run_id = _write(tmp_path / "r.db", seconds=120, end=ended)
    with open_store(tmp_path / "r.db") as store:
        data = load_run(store, run_id)
        before = _replayed(store, data, None)
        for kind in (LAST, WHOLE):
            a = before.series[ALL_KEY]
            plain = load_points(store, data, [ALL_KEY], None, kind, bins=10).series[ALL_KEY]
            assert not np.isfinite(plain.ys(kind, "cpu_pct")).any()  # not asked for
            b = load_points(store, data, [ALL_KEY], None, kind, bins=10, fields=("iops", "cpu_pct", "errors"))
            b = b.series[ALL_KEY]
            assert b.n < a.n / 2
            for f in ("iops", "cpu_pct", "errors"):
                ya, yb = a.ys(kind, f), b.ys(kind, f)
                assert np.nanmax(yb) == pytest.approx(np.nanmax(ya), rel=1e-6)
                assert np.nanmin(yb) == pytest.approx(np.nanmin(ya), rel=1e-6)
            assert np.nanmax(b.ys(kind, "errors")) > 0
            if not ended:  # both from the samples, on the same bins
                np.testing.assert_array_equal(b.ys(kind, "iops"), plain.ys(kind, "iops"))
