"""Does a stored remote step hold every interval of each manager, and its server's own final numbers?
Shared by the many-hosts integration test and benchmark."""

from __future__ import annotations

import json
from dataclasses import dataclass

from app.store import step_samples


@dataclass
class FioOwn:
    """A server's own final report, summed over its jobs (runtime: the longest job's, ms)."""

    iops: float
    ios: int
    runtime_ms: int
    cpu_pct: float  # its jobs' usr + sys CPU, % of one CPU
    job_runtime_ms: dict[str, int]  # each job's own runtime, by fio's job name


def fio_own(raw: str) -> FioOwn:
    doc = json.loads(raw[raw.index("{") :])
    jobs = [j for j in doc.get("jobs") or doc.get("client_stats") or [] if j.get("jobname") != "All clients"]
    runtimes = {str(j.get("jobname")): max(j["read"]["runtime"], j["write"]["runtime"]) for j in jobs}
    return FioOwn(
        sum(j["read"]["iops"] + j["write"]["iops"] for j in jobs),
        sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in jobs),
        max(runtimes.values(), default=0),
        sum(j["usr_cpu"] + j["sys_cpu"] for j in jobs),
        runtimes,
    )


@dataclass
class ManagerCheck:
    samples: int  # stored interval samples
    complete: bool  # they add up to fio's whole run on its own clock: every report that came is stored
    longest_s: float  # the longest stored interval on fio's clock (a report fio skipped or lost doubles one)
    iops_diff: float  # |stored final IOPS - fio's| / fio's
    drift_s: float  # how far arrival times fell behind fio's clock (largest, from the first report)
    own: FioOwn | None
    why: str = ""


def check_manager(store, step, name: str, interval: float = 1.0) -> ManagerCheck:
    """``step``: a stored step read with its raw outputs (``get_run(..., raw_output=True)``).

    Complete: each job's stored intervals (its target's, named as the job without the manager: job
    ``m1.w1.t1`` is target ``w1.t1``) add up to its runtime in the final report (within 0.1 interval), the
    manager's to at least its longest job's, and their I/Os exactly to its I/O count, so no report that was used
    is missing from the store. (A manager's interval spans its jobs' together: jobs that fio started a few
    hundred ms apart on a busy host make its intervals add up to that much more than its longest job ran.)
    Whether fio sent a report every interval (and Fiometer received each) shows in ``longest_s``: a missing one
    makes its successor's interval twice as long."""
    rows = [(t, m.seconds, m.ios) for t, m in step_samples(store, step.id, "manager", name, manager=name)]
    stored = next((x.metrics for x in step.results if x.level == "manager" and x.manager == name), None)
    raw = step.outputs.get(name)
    own = fio_own(raw.raw_output) if raw is not None and raw.raw_output else None
    clock, drift, first = 0.0, 0.0, 0.0
    for i, (t, secs, _n) in enumerate(rows):
        clock += secs
        if i == 0:
            first = t - clock
        drift = max(drift, t - clock - first)
    why = []
    if own is None:
        why.append("no final report stored")
    if not rows:
        why.append("no samples stored")
    elif own is not None:
        slack = 100 * interval  # ms
        total = sum(s for _, s, _ in rows)
        if total * 1000 < own.runtime_ms - slack:
            why.append(f"intervals add up to {total:.3f} s, its longest job ran {own.runtime_ms} ms")
        for job, ran_ms in own.job_runtime_ms.items():
            key = job.split(".", 1)[-1]
            target = step_samples(store, step.id, "target", key, manager=name)
            ran_s = sum(m.seconds for _, m in target)
            if target and abs(ran_s * 1000 - ran_ms) > slack:
                why.append(f"{key}'s intervals add up to {ran_s:.3f} s, fio ran {ran_ms} ms")
        if sum(n for *_, n in rows) != own.ios:
            why.append(f"intervals add up to {sum(n for *_, n in rows)} I/Os, fio did {own.ios}")
    diff = (
        abs(stored.iops - own.iops) / own.iops
        if stored is not None and own is not None and own.iops
        else float("inf")
    )
    longest = max((s for _, s, _ in rows), default=0.0)
    return ManagerCheck(len(rows), not why, longest, diff, drift, own, "; ".join(why))
