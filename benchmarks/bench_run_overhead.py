"""Overhead of `fiometer run` against fio alone on the very same job, as ratios measured in one run.

Fiometer runs the plan first; its step's job file (as stored with the run) is then given to fio alone,
so both sides run the same job text on the same test file. fio alone runs as Fiometer runs it
(``--output-format=json+``), but without ``--status-interval`` (no per-second reports to read). Two
workloads: the null engine (fio's own ceiling, CPU-bound) and 4k random read on a 64 MiB file (libaio,
direct=1, QD 32). Runs alternate (fiometer, fio, fiometer, ...) to share the machine's noise.

Figures per pair: IOPS ratio (target >= 0.97) and CPU per I/O: CPU seconds (user + system) of everything
the run took (Fiometer's process and its children, fio included) over the I/Os it did, beside fio alone's,
and Fiometer's own share (the difference) as microseconds per I/O and as a share of one core over the run.
A CPU *ratio* would mislead for the null engine: fio alone then spins a core whatever the overhead, so its
ratio says how the scheduler shares the machine, not what Fiometer costs. Steps run 20 s by default so
that Python's start (about 0.5 s of CPU, counted on Fiometer's side) is not the figure. Temporary folders
go to the system's temporary directory. The machine may be loaded by other work: compare the ratios,
not the absolute figures.

    python benchmarks/bench_run_overhead.py [--seconds 5] [--repeats 3] [--only null|file]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.model import planfile  # noqa: E402
from app.model.plan import LOCAL, SpecLine, Target  # noqa: E402
from app.store import get_run, list_runs, open_store  # noqa: E402
from tests.helpers import grid  # noqa: E402


def make_plan(tmp: Path, seconds: int):
    plan = grid(1, 1, 1, qd=32)
    plan.specs[0].lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp / "bench.tst"))]
    plan.setup.run_time = seconds
    return plan


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def timed(args: list[str], **kw) -> tuple[subprocess.CompletedProcess, float]:
    """Run to completion; CPU seconds of the process and every child it waited for."""
    before = _children_cpu()
    out = subprocess.run(args, capture_output=True, text=True, check=True, **kw)
    return out, _children_cpu() - before


def under_fiometer(plan_path: Path, engine: str | None, db: Path) -> tuple[float, int, float, str]:
    """(ALL's IOPS, its I/Os, CPU s, the step's job text as fio was given it)."""
    args = [
        sys.executable,
        "-m",
        "app.cli",
        "--db",
        str(db),
        "run",
        str(plan_path),
        "--test-file-size",
        "64M",
    ]
    if engine:
        args += ["--engine", engine]
    _out, cpu = timed(args, cwd=ROOT)
    with open_store(db) as store:
        run = get_run(store, list_runs(store)[0].id)
    step = run.steps[0]
    (res,) = [r for r in step.results if r.level == "all"]
    (output,) = step.outputs.values()
    return res.metrics.iops, res.metrics.ios, cpu, output.job_text


def fio_alone(job_text: str, tmp: Path) -> tuple[float, int, float]:
    """(IOPS, I/Os, CPU s) of fio alone on this job file."""
    job = tmp / "alone.fio"
    job.write_text(job_text)
    out, cpu = timed(["fio", "--output-format=json+", str(job)])
    doc = json.loads(out.stdout[out.stdout.index("{") :])
    iops = sum(j["read"]["iops"] + j["write"]["iops"] for j in doc["jobs"])
    return iops, sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in doc["jobs"]), cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", choices=("null", "file"))
    args = ap.parse_args()
    loads = [("null engine 4k", "null"), ("4k randread 64 MiB file, libaio QD32", "libaio")]
    if args.only:
        loads = [loads[0] if args.only == "null" else loads[1]]
    print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (other work may share the machine)"
    )
    for label, engine in loads:
        iops_ratios, per_io, own = [], [], []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory(prefix="fiometer-bench-") as d:
                tmp = Path(d)
                path = tmp / "plan.json"
                planfile.save(make_plan(tmp, args.seconds), path)
                b, b_ios, b_cpu, job_text = under_fiometer(path, engine, tmp / "bench.db")
                a, a_ios, a_cpu = fio_alone(job_text, tmp)
                b_us, a_us = 1e6 * b_cpu / max(b_ios, 1), 1e6 * a_cpu / max(a_ios, 1)
                iops_ratios.append(b / a)
                per_io.append(b_us / a_us)
                own.append((b_cpu - a_cpu * b_ios / max(a_ios, 1)) / args.seconds)
                print(
                    f"  {label}: fio alone {a:,.0f} IOPS, {a_us:.3f} us CPU per I/O; under fiometer run {b:,.0f} "
                    f"IOPS, {b_us:.3f} us CPU per I/O (fio included); IOPS ratio {b / a:.3f}, Fiometer's own "
                    f"{b_us - a_us:.3f} us per I/O = {100 * own[-1]:.1f} % of a core"
                )
        print(
            f"{label}: median IOPS ratio {statistics.median(iops_ratios):.3f} (target >= 0.97), median CPU per "
            f"I/O ratio {statistics.median(per_io):.2f}, Fiometer's own CPU {100 * statistics.median(own):.1f} % "
            f"of a core, over {len(iops_ratios)} pairs of {args.seconds} s\n"
        )


if __name__ == "__main__":
    main()
