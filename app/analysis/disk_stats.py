"""Disk statistics beside the results, as iostat computes them, from fio's own per-disk counters.

fio reports, for every disk behind a step's targets, the I/Os, merges and ticks the kernel counted
(``disk_util`` in its JSON output, the DU message of its server protocol). They are stored with each
step's raw output, locally and remotely, so every stored run has them. From them, per step and disk:

- ``await`` = (read ticks + write ticks) / (reads + writes), in ms (iostat's r_await/w_await likewise);
- ``aqu-sz`` (average queue size) = time in queue / the window, both in ms;
- ``%util`` = fio's own utilisation (time the disk was busy / the window).

The window is the disk's own clock where fio sent it (a fio server's DU message), else the longest
job's runtime plus the step's ramp-up: fio counts disk statistics from the moment its jobs start, ramp
included. The same figures per report, live, come from :mod:`app.engine.sampling.disk_telemetry`. Disks are named as the kernel names them (``sda``, ``nvme0n1``,
``dm-0``); the targets on each disk come from the run's target details (``disk``, recorded locally).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from app.model.disk_metrics import DiskCounts
from app.store.records import Run, StepInfo


@dataclass(frozen=True)
class DiskStat:
    step: int
    manager: str
    disk: str
    reads: int
    writes: int
    read_merges: int
    write_merges: int
    r_await_ms: float | None
    w_await_ms: float | None
    await_ms: float | None
    aqu_sz: float | None
    util_pct: float
    window_s: float
    targets: tuple[str, ...] = field(default=())


def _window_s(doc: dict, step: StepInfo) -> float:
    jobs = doc.get("jobs") or doc.get("client_stats") or []  # a local fio's JSON / a remote manager's
    runtimes = [float(j.get("job_runtime") or 0) for j in jobs if isinstance(j, dict)]
    return (max(runtimes, default=0.0) / 1000.0) + float(step.ramp_s or 0)


def step_disk_stats(run: Run, step: StepInfo) -> list[DiskStat]:
    """One row per manager and disk of the step; nothing where fio reported no disks (Windows, tmpfs)."""
    on_disk: dict[tuple[str, str], list[str]] = {}
    for t in run.targets:
        disk = t.details.get("disk") if isinstance(t.details, dict) else None
        if disk:
            on_disk.setdefault((t.manager, str(disk)), []).append(t.name)
    out: list[DiskStat] = []
    for manager, output in sorted(step.outputs.items()):
        try:
            doc = json.loads(output.raw_output or "")
        except ValueError:
            continue
        if not isinstance(doc, dict):
            continue
        window = _window_s(doc, step)
        for d in doc.get("disk_util") or []:
            if not isinstance(d, dict) or "name" not in d:
                continue
            # a fio server's DU carries the disk's own clock (kept in the stored output): exact
            c = DiskCounts.from_fio(d, float(d["msec"]) if d.get("msec") else window * 1000.0)
            out.append(
                DiskStat(
                    step.index,
                    manager,
                    str(d["name"]),
                    int(c.read_ios),
                    int(c.write_ios),
                    int(c.read_merges),
                    int(c.write_merges),
                    c.r_await_ms,
                    c.w_await_ms,
                    c.await_ms,
                    c.aqu_sz,
                    float(d.get("util") or 0),
                    c.window_ms / 1000.0,
                    tuple(on_disk.get((manager, str(d["name"])), ())),
                )
            )
    return out


def run_disk_stats(run: Run) -> list[DiskStat]:
    return [row for step in run.steps for row in step_disk_stats(run, step)]
