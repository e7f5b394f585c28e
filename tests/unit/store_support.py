"""Shared by the store tests and the child processes they start: a small run, written the runner's way."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from app.model.metrics import Metrics
from app.store import ManagerInfo, Recorder, ResultRow, SampleRow, TargetInfo, WorkerInfo

MANAGERS = [
    ManagerInfo("local", "local", "Linux 6.1", "fio-3.33"),
    ManagerInfo("san-host", "10.0.0.7:8765", "Windows Server 2022", "fio-3.38", 115),
]
WORKERS = [
    WorkerInfo(m.name, f"{m.name}/w{w}", f"Worker {w}", {"type": "disk"}) for m in MANAGERS for w in (1, 2)
]
TARGETS = [
    TargetInfo(
        w.manager,
        w.key,
        f"{w.key}/t{t}",
        f"Disk {t}",
        f"/dev/sd{'ab'[t - 1]}",
        {"queue_depth": 8 * t, "size": 1 << 30, "direct": True},
    )
    for w in WORKERS
    for t in (1, 2)
]
PLAN = {"name": "EVA before", "specs": ["4K; 65% Read; 60% random", "64K sequential read"], "ramp": 2}


def metrics(rng: random.Random, *, hist: bool = True, seconds: float = 1.0) -> Metrics:
    """Numbers of every kind a column can hold: fractions, large ints, None disk_util, sparse histograms."""
    r, w = rng.randrange(0, 50_000), rng.randrange(0, 20_000)
    return Metrics(
        seconds=seconds + rng.random() / 1000,
        read_ios=r,
        write_ios=w,
        read_bytes=r * 4096,
        write_bytes=w * 65536,
        read_iops=r / 1.0003,
        write_iops=w / 0.9997,
        read_bps=r * 4096 / 1.0003,
        write_bps=w * 65536 / 0.9997,
        read_lat_sum_ns=r * rng.uniform(1e5, 1e7),
        write_lat_sum_ns=float(w * 250_000),
        read_lat_n=r,
        write_lat_n=w,
        read_lat_max_ns=rng.uniform(1e6, 1e9),
        write_lat_max_ns=float(rng.randrange(10**9)),
        read_hist={rng.randrange(1000, 10**9): rng.randrange(1, 500) for _ in range(40)} if hist else {},
        write_hist={rng.randrange(1000, 10**9): rng.randrange(1, 500) for _ in range(25)} if hist else {},
        errors=rng.randrange(3),
        usr_cpu=rng.uniform(0, 100),
        sys_cpu=rng.uniform(0, 100),
        disk_util=None if rng.random() < 0.3 else rng.uniform(0, 100),
    )


def level_keys() -> list[tuple[str | None, str, str]]:
    """(manager, level, key) for every level of the topology, in the order telemetry reports them."""
    return (
        [(t.manager, "target", t.key) for t in TARGETS]
        + [(w.manager, "worker", w.key) for w in WORKERS]
        + [(m.name, "manager", m.name) for m in MANAGERS]
        + [(None, "all", "ALL")]
    )


def interval(rng: random.Random, t: float) -> list[SampleRow]:
    return [
        SampleRow(manager, level, key, t, metrics(rng), metrics(rng, seconds=t))
        for manager, level, key in level_keys()
    ]


@dataclass
class WrittenStep:
    step_id: int
    samples: list[list[SampleRow]] = field(default_factory=list)
    results: list[ResultRow] = field(default_factory=list)


@dataclass
class WrittenRun:
    run_id: int
    steps: list[WrittenStep] = field(default_factory=list)


def begin_run(rec: Recorder, name: str = "EVA 4400 Vraid5") -> int:
    run_id = rec.begin_run(
        PLAN,
        plan_name="EVA before",
        name=name,
        description="32 disks, Vraid5",
        tags=["eva", "before"],
        notes="firmware XCS 0953",
    )
    rec.add_managers(run_id, MANAGERS)
    rec.add_workers(run_id, WORKERS)
    rec.add_targets(run_id, TARGETS)
    return run_id


def begin_step(rec: Recorder, run_id: int, index: int) -> int:
    return rec.begin_step(
        run_id,
        index,
        spec_name=PLAN["specs"][index % 2],
        spec_text=f"spec {index}",
        queue_depth=8,
        active_workers=[w.key for w in WORKERS],
        active_targets=[t.key for t in TARGETS],
        ramp_s=2,
        run_s=30.5,
    )


def write_run(
    rec: Recorder, *, seed: int = 1, steps: int = 2, intervals: int = 3, end: bool = True
) -> WrittenRun:
    rng = random.Random(seed)
    run = WrittenRun(begin_run(rec))
    for index in range(steps):
        step = WrittenStep(begin_step(rec, run.run_id, index))
        run.steps.append(step)
        for m in MANAGERS:
            rec.set_step_output(
                step.step_id, m.name, job_text=f"[global]\nioengine=libaio\n[{m.name}-{index}]\n"
            )
        for i in range(intervals):
            rows = interval(rng, i + 1.0)
            rec.add_samples(step.step_id, rows)
            step.samples.append(rows)
        for m in MANAGERS:
            rec.set_step_output(step.step_id, m.name, raw_output=f'{{"fio version": "{m.fio_version}"}}')
        step.results = [ResultRow(manager, level, key, metrics(rng)) for manager, level, key in level_keys()]
        rec.add_step_results(step.step_id, step.results)
        if end:
            rec.end_step(step.step_id, "complete")
    if end:
        rec.end_run(run.run_id, "complete")
    return run


def without_hists(m: Metrics) -> Metrics:
    return replace(m, read_hist={}, write_hist={})
