"""Stored runs for the History tests: the before/after example through the real Recorder, runs that ended
every way, and samples over time (no fio needed)."""

from __future__ import annotations

import math
from pathlib import Path

from app.model import planfile
from app.model.metrics import Metrics
from app.store import Store, open_store
from app.store.recorder import Recorder
from app.store.records import ManagerInfo, ResultRow, SampleRow
from tests.helpers import grid
from tests.stored_runs import AFTER, BEFORE, RunSpec, StepSpec, metrics, record


def add_samples(store: Store, run_id: int, seconds: int = 10, wobble: float = 0.05) -> None:
    """One sample a second for every step (ALL and manager level), around the step's final numbers."""
    from app.store import get_run

    run = get_run(store, run_id)
    rec = Recorder(store)
    for step in run.steps:
        final = next(r.metrics for r in step.results if r.level == "all")
        for i in range(1, seconds + 1):
            f = 1 + wobble * math.sin(i * 1.7 + run_id)
            m = Metrics(
                seconds=1.0,
                read_ios=round(final.iops * f),
                read_bytes=round(final.mbps * 1e6 * f),
                read_iops=final.iops * f,
                read_bps=final.mbps * 1e6 * f,
                read_lat_sum_ns=final.lat_mean_ms * 1e6 / f * round(final.iops * f),
                read_lat_n=round(final.iops * f),
                read_lat_max_ns=final.lat_max_ms * 1e6 * f,
            )
            rec.add_samples(
                step.id,
                [
                    SampleRow(None, "all", "ALL", float(i), m, m),
                    SampleRow("M1", "manager", "M1", float(i), m, m),
                ],
            )


def status_run(
    store: Store, name: str, status: str, steps: list[StepSpec] | None = None, tags: tuple[str, ...] = ()
) -> int:
    """A run that ended as ``status`` (its first step has results, the rest are cut short)."""
    steps = steps or BEFORE[:2]
    plan = grid(1, 1, 1, specs=tuple(s.spec for s in steps), qd=64)
    plan.name = "IO-Test"
    rec = Recorder(store)
    run_id = rec.begin_run(
        planfile.to_dict(plan), plan_name=plan.name, name=name, tags=list(tags), host={"hostname": "lab1"}
    )
    rec.add_managers(run_id, [ManagerInfo("M1", "local", "Linux", "3.33")])
    first = rec.begin_step(run_id, 0, spec_name=steps[0].spec, queue_depth=64, run_s=10)
    rec.add_step_results(first, [ResultRow(None, "all", "ALL", metrics(steps[0]))])
    rec.end_step(first, "complete")
    rec.begin_step(run_id, 1, spec_name=steps[1].spec, queue_depth=64, run_s=10)
    rec.end_run(run_id, status)
    return run_id


def before_after_store(path: Path, samples: bool = True) -> tuple[int, int]:
    """The seed example (examples/before-after.md) as runs 1 (before) and 2 (after)."""
    with open_store(path) as store:
        before = record(store, RunSpec(BEFORE, name="EVA 4400 32 disks Vraid5", tags=["before"]))
        after = record(store, RunSpec(AFTER, name="EVA 4400 36 disks Vraid1", tags=["after"]))
        if samples:
            add_samples(store, before)
            add_samples(store, after)
    return before, after
