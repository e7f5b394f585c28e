"""Stored runs with chosen numbers, written through the real Recorder (no fio needed)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

from app.model import planfile
from app.model.metrics import Metrics
from app.model.plan import Target
from app.store.database import Store
from app.store.recorder import Recorder
from app.store.records import ManagerInfo, ResultRow, TargetInfo, WorkerInfo
from tests.helpers import grid


@dataclass
class StepSpec:
    spec: str
    iops: float
    mbps: float
    avg_ms: float
    max_ms: float
    p99_ms: float
    qd: int = 64
    workers: int = 1
    targets: int = 1
    lines: str = (
        ""  # the spec's stored definition; by default one derived from the name (distinct names differ)
    )
    status: str = "complete"  # how the step ended: complete | stopped | failed

    @property
    def definition(self) -> str:
        return self.lines or f"{512 * (1 + zlib.crc32(self.spec.encode()) % 128)},100,70,100,0,1,0,0"


def metrics(s: StepSpec, seconds: float = 10.0) -> Metrics:
    """A read-only step whose headline numbers are exactly the given ones (p99 via a two-bucket histogram)."""
    ios = max(100, round(s.iops * seconds))
    p99_ns = round(s.p99_ms * 1e6)
    low = max(1, p99_ns // 2)
    return Metrics(
        seconds=seconds,
        read_ios=ios,
        read_bytes=round(s.mbps * 1e6 * seconds),
        read_iops=s.iops,
        read_bps=s.mbps * 1e6,
        read_lat_sum_ns=s.avg_ms * 1e6 * ios,
        read_lat_n=ios,
        read_lat_max_ns=s.max_ms * 1e6,
        read_hist={low: ios - 2 * (ios // 100), p99_ns: 2 * (ios // 100)},
    )


@dataclass
class RunSpec:
    steps: list[StepSpec]
    name: str = "run"
    tags: list[str] = field(default_factory=list)
    fio_version: str = "3.33"
    hostname: str = "lab1"
    target_path: str = "/mnt/data/iobw.tst"
    plan_name: str = "IO-Test"
    plan_variant: int = 64  # the worker's queue depth in the plan: runs with the same value share a plan hash
    kernel: str = "6.1"
    engine: str = "libaio"
    size: int = 0  # the test file's size in the job files (0: none given)
    run_s: float = 10
    notes: str = ""


def record(store: Store, spec: RunSpec) -> int:
    plan = grid(1, 1, 1, specs=tuple(dict.fromkeys(s.spec for s in spec.steps)), qd=spec.plan_variant)
    plan.name = spec.plan_name
    plan.managers[0].workers[0].targets = [Target("C:", spec.target_path)]
    rec = Recorder(store)
    host = {"hostname": spec.hostname, "os": "Linux", "kernel": spec.kernel, "cpus": 8, "fiometer": "0.1.0"}
    run_id = rec.begin_run(
        planfile.to_dict(plan),
        plan_name=plan.name,
        name=spec.name,
        tags=spec.tags,
        host=host,
        notes=spec.notes,
    )
    rec.add_managers(run_id, [ManagerInfo("M1", "local", "Linux", spec.fio_version)])
    rec.add_workers(run_id, [WorkerInfo("M1", "w1", "Worker 1", {"queue_depth": spec.plan_variant})])
    rec.add_targets(run_id, [TargetInfo("M1", "w1", "w1.t1", "C:", spec.target_path, {"direct": True})])
    for i, s in enumerate(spec.steps):
        step_id = rec.begin_step(
            run_id,
            i,
            spec_name=s.spec,
            spec_text=s.definition,
            queue_depth=s.qd,
            active_workers=[["M1", f"w{w + 1}"] for w in range(s.workers)],
            active_targets=[["M1", f"w1.t{t + 1}"] for t in range(s.targets)],
            run_s=spec.run_s,
        )
        size = f"size={spec.size}\n" if spec.size else ""
        rec.set_step_output(
            step_id,
            "M1",
            job_text=f"[global]\nioengine={spec.engine}\ndirect=1\n"
            f"runtime={spec.run_s:g}\n[m1.w1.t1]\nfilename={spec.target_path}\n"
            f"iodepth={s.qd}\n{size}",
        )
        m = metrics(s)
        rec.add_step_results(
            step_id,
            [
                ResultRow("M1", "target", "w1.t1", m),
                ResultRow("M1", "worker", "w1", m),
                ResultRow("M1", "manager", "M1", m),
                ResultRow(None, "all", "ALL", m),
            ],
        )
        rec.end_step(step_id, s.status)
    rec.end_run(run_id, "complete")
    return run_id


# The seed example (examples/before-after.md): EVA 4400, 32 disks Vraid5 -> 36 disks Vraid1.
BEFORE = [
    StepSpec("Max Throughput-100%Read", 10809, 337.78, 2.67, 40.0, 6.0),
    StepSpec("RealLife-60%Rand-65%Read", 3055, 23.87, 8.29, 120.0, 30.0),
    StepSpec("Max Throughput-50%Read", 1530, 47.81, 34.03, 300.0, 90.0),
    StepSpec("Random-8k-70%Read", 2866, 22.39, 8.64, 110.0, 28.0),
]
AFTER = [
    StepSpec("Max Throughput-100%Read", 11686, 365.20, 5.09, 41.0, 9.0),
    StepSpec("RealLife-60%Rand-65%Read", 4284, 33.47, 10.84, 119.0, 31.0),
    StepSpec("Max Throughput-50%Read", 5113, 159.78, 6.63, 80.0, 20.0),
    StepSpec("Random-8k-70%Read", 4783, 37.37, 10.41, 100.0, 29.0),
]
