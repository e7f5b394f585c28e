"""How fast the store takes one interval, and how fast the database grows.

    python benchmarks/bench_store.py [--minutes 10] [--jobs 16] [--intervals 60]

(a) one interval of 256 jobs (4 managers x 8 workers x 8 targets: 256 target + 32 worker + 4 manager + 1
    ALL rows, both windows) stored as one transaction, timed over many intervals;
(b) growth per job-hour at 1 Hz: ``--minutes`` of 1 Hz samples for ``--jobs`` jobs written into a fresh
    file, growth divided by jobs and hours, for each choice of levels that keep interval histograms.
Latency histograms are realistic: lognormal latencies put in fio's json+ buckets (64 per power of two).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.model.metrics import Metrics  # noqa: E402
from app.store import (  # noqa: E402
    ManagerInfo,
    Recorder,
    SampleRow,
    TargetInfo,
    WorkerInfo,
    database,
    open_store,
)
from app.store.codec import encode_hist  # noqa: E402


def fio_bucket(ns: int) -> int:
    """The value fio's json+ output names the bucket holding ns by (64 buckets per power of two)."""
    if ns < 128:
        return ns
    error_bits = ns.bit_length() - 7
    index = ((error_bits + 1) << 6) + ((ns >> error_bits) & 63)
    error_bits = (index >> 6) - 1
    return (1 << (error_bits + 6)) + int(((index & 63) + 0.5) * (1 << error_bits))


def latency_hist(rng: random.Random, ios: int, median_ns: float, sigma: float) -> dict[int, int]:
    hist: dict[int, int] = {}
    for _ in range(ios):
        b = fio_bucket(int(rng.lognormvariate(0.0, sigma) * median_ns))
        hist[b] = hist.get(b, 0) + 1
    return hist


class Workload:
    """Per-job interval Metrics drawn from a small pool (drawing latencies is slower than storing them)."""

    def __init__(self, seed: int = 1, pool: int = 24, ios: int = 4000) -> None:
        rng = random.Random(seed)
        self.rng = rng
        self.pool = []
        for _ in range(pool):
            r, w = int(ios * rng.uniform(0.55, 0.75)), 0
            w = ios - r
            rh, wh = latency_hist(rng, r, 180_000, 0.5), latency_hist(rng, w, 90_000, 0.6)
            secs = rng.uniform(0.999, 1.002)
            self.pool.append(
                Metrics(
                    seconds=secs,
                    read_ios=r,
                    write_ios=w,
                    read_bytes=r * 4096,
                    write_bytes=w * 4096,
                    read_iops=r / secs,
                    write_iops=w / secs,
                    read_bps=r * 4096 / secs,
                    write_bps=w * 4096 / secs,
                    read_lat_sum_ns=sum(k * v for k, v in rh.items()) * rng.uniform(0.99, 1.01),
                    write_lat_sum_ns=sum(k * v for k, v in wh.items()) * rng.uniform(0.99, 1.01),
                    read_lat_n=r,
                    write_lat_n=w,
                    read_lat_max_ns=float(max(rh)),
                    write_lat_max_ns=float(max(wh)),
                    read_hist=rh,
                    write_hist=wh,
                    usr_cpu=rng.uniform(1, 9),
                    sys_cpu=rng.uniform(5, 30),
                    disk_util=rng.uniform(60, 100),
                )
            )

    def job(self) -> Metrics:
        return self.rng.choice(self.pool)


def topology(managers: int, workers: int, targets: int) -> list[tuple[str, str, str]]:
    return [
        (f"m{m}", f"m{m}/w{w}", f"m{m}/w{w}/t{t}")
        for m in range(managers)
        for w in range(workers)
        for t in range(targets)
    ]


def interval_rows(jobs: list[tuple[str, str, str]], load: Workload, t: float) -> list[SampleRow]:
    """What telemetry hands over for one interval: every level, interval and whole windows."""
    rows: list[SampleRow] = []
    by_worker: dict[tuple[str, str], list[Metrics]] = {}
    by_manager: dict[str, list[Metrics]] = {}
    for manager, worker, target in jobs:
        m = load.job()
        whole = Metrics(
            **{
                **vars(m),
                "seconds": t,
                "read_ios": int(m.read_ios * t),
                "write_ios": int(m.write_ios * t),
                "read_hist": {},
                "write_hist": {},
            }
        )
        rows.append(SampleRow(manager, "target", target, t, m, whole))
        by_worker.setdefault((manager, worker), []).append(m)
    for (manager, worker), parts in by_worker.items():
        m = Metrics.combine(parts)
        rows.append(SampleRow(manager, "worker", worker, t, m, m))
        by_manager.setdefault(manager, []).append(m)
    per_manager = []
    for manager, parts in by_manager.items():
        m = Metrics.combine(parts)
        per_manager.append(m)
        rows.append(SampleRow(manager, "manager", manager, t, m, m))
    total = Metrics.combine(per_manager)
    rows.append(SampleRow(None, "all", "ALL", t, total, total))
    return rows


def begin(rec: Recorder, jobs: list[tuple[str, str, str]]) -> int:
    run_id = rec.begin_run({"bench": True}, name="bench")
    managers = sorted({m for m, _, _ in jobs})
    workers = sorted({(m, w) for m, w, _ in jobs})
    rec.add_managers(run_id, [ManagerInfo(m) for m in managers])
    rec.add_workers(run_id, [WorkerInfo(m, w) for m, w in workers])
    rec.add_targets(run_id, [TargetInfo(m, w, t, path=f"/dev/bench{i}") for i, (m, w, t) in enumerate(jobs)])
    return rec.begin_step(run_id, 0, spec_name="4K; 65% Read; 60% random", queue_depth=16, run_s=600)


def bench_interval(intervals: int, hist_levels: tuple[str, ...]) -> None:
    jobs = topology(4, 8, 8)
    load = Workload()
    batches = [interval_rows(jobs, load, float(i + 1)) for i in range(intervals)]
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp, "bench.db")) as store:
        rec = Recorder(store, sample_hist_levels=hist_levels)
        step = begin(rec, jobs)
        times = []
        cpu0 = time.process_time()
        for rows in batches:
            t0 = time.perf_counter()
            rec.add_samples(step, rows)
            times.append((time.perf_counter() - t0) * 1000)
        cpu = (time.process_time() - cpu0) * 1000 / len(batches)
    first, rest = times[0], sorted(times[1:])
    print(
        f"(a) one interval of {len(jobs)} jobs = {len(batches[0])} rows x 2 windows, one transaction, "
        f"interval histograms for {hist_levels or 'no'} levels:\n"
        f"    median {statistics.median(rest):.1f} ms, p95 {rest[int(len(rest) * 0.95)]:.1f} ms, "
        f"max {rest[-1]:.1f} ms; first interval (creates the series) {first:.1f} ms; mean CPU {cpu:.1f} ms"
    )


def bench_growth(minutes: int, n_jobs: int, hist_levels: tuple[str, ...]) -> None:
    workers = 4 if n_jobs % 4 == 0 else 1
    jobs = topology(1, workers, n_jobs // workers)
    load = Workload(seed=2)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "growth.db")
        with open_store(path) as store:
            rec = Recorder(store, sample_hist_levels=hist_levels)
            step = begin(rec, jobs)
        before = path.stat().st_size
        with open_store(path) as store:
            rec = Recorder(store, sample_hist_levels=hist_levels)
            for i in range(minutes * 60):
                rec.add_samples(step, interval_rows(jobs, load, float(i + 1)))
        after = path.stat().st_size  # closing checkpointed the WAL into the file
        database._checked_this_process.clear()  # time the full check a fresh Fiometer does on opening
        t0 = time.perf_counter()
        open_store(path).close()
        open_check = time.perf_counter() - t0
    grown = after - before
    hours = minutes / 60
    rows = len(interval_rows(jobs, load, 1.0))
    print(
        f"(b) {minutes} min at 1 Hz, {n_jobs} jobs ({rows} rows per interval), interval histograms for "
        f"{hist_levels or 'no'} levels: grew {grown / 1e6:.2f} MB = "
        f"{grown / n_jobs / hours / 1e6:.2f} MB per job-hour ({grown / n_jobs / hours:,.0f} bytes), "
        f"{grown / (rows * minutes * 60):.0f} bytes per row; reopening this file took "
        f"{open_check * 1000:.0f} ms"
    )


def hist_sizes() -> None:
    load = Workload(seed=3)
    jobs = [load.job() for _ in range(16)]
    one = statistics.mean(
        len(encode_hist(m.read_hist) or "") + len(encode_hist(m.write_hist) or "") for m in jobs
    )
    merged = Metrics.combine(jobs)
    print(
        f"    histogram JSON per row (read + write): one job {one:.0f} bytes, 16 jobs merged "
        f"{len(encode_hist(merged.read_hist) or '') + len(encode_hist(merged.write_hist) or '')} bytes"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--intervals", type=int, default=60)
    args = ap.parse_args()
    from app.store.recorder import DEFAULT_SAMPLE_HIST_LEVELS

    bench_interval(args.intervals, DEFAULT_SAMPLE_HIST_LEVELS)
    bench_interval(args.intervals, ("target", "worker", "manager", "all"))
    for levels in ((), DEFAULT_SAMPLE_HIST_LEVELS, ("target", "worker", "manager", "all")):
        bench_growth(args.minutes, args.jobs, levels)
    hist_sizes()


if __name__ == "__main__":
    main()
