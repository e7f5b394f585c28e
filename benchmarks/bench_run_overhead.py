"""Overhead of `fiometer run` vs fio alone on the same job, as IOPS ratios measured in one run.

Two workloads: the null engine (fio's own ceiling, CPU-bound) and 4k random read on a 64 MiB file
(libaio, direct=1, QD 32). Runs alternate (fio, fiometer, fio, ...) to share the machine's noise.
Target: ratio >= 0.97. Usage: python benchmarks/bench_run_overhead.py [--seconds 5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.engine.jobs.jobfile import step_jobfile  # noqa: E402
from app.engine.jobs.sequence import expand  # noqa: E402
from app.model import planfile  # noqa: E402
from app.model.plan import LOCAL, SpecLine, Target  # noqa: E402
from tests.helpers import grid  # noqa: E402


def make_plan(tmp: Path, seconds: int):
    plan = grid(1, 1, 1, qd=32)
    plan.specs[0].lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp / "bench.tst"))]
    plan.setup.run_time = seconds
    return plan


def fio_alone(plan, engine: str | None, tmp: Path) -> float:
    jf = step_jobfile(plan, expand(plan)[0], 0, "Linux", engine=engine, file_size=64 << 20)
    job = tmp / "alone.fio"
    job.write_text(jf.text)
    out = subprocess.run(["fio", "--output-format=json", str(job)], capture_output=True, text=True, check=True)
    doc = json.loads(out.stdout[out.stdout.index("{"):])
    return sum(j["read"]["iops"] + j["write"]["iops"] for j in doc["jobs"])


def under_fiometer(plan_path: Path, engine: str | None, tmp: Path) -> float:
    db = tmp / "bench.db"
    args = [sys.executable, "-m", "app.cli", "--db", str(db), "run", str(plan_path), "--test-file-size", "64M"]
    if engine:
        args += ["--engine", engine]
    subprocess.run(args, capture_output=True, text=True, check=True, cwd=ROOT)
    runs = json.loads(subprocess.run([sys.executable, "-m", "app.cli", "--db", str(db), "runs", "--json"],
                                     capture_output=True, text=True, check=True, cwd=ROOT).stdout)
    shown = json.loads(subprocess.run([sys.executable, "-m", "app.cli", "--db", str(db), "show", str(runs[0]["id"]),
                                       "--json"], capture_output=True, text=True, check=True, cwd=ROOT).stdout)
    (res,) = [r for r in shown["steps"][0]["results"] if r["level"] == "all"]
    return float(res["iops"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    for label, engine in (("null engine 4k", "null"), ("4k randread 64 MiB file, libaio QD32", None)):
        ratios = []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory(prefix="fiometer-bench-", dir=ROOT.parent) as d:
                tmp = Path(d)
                plan = make_plan(tmp, args.seconds)
                path = tmp / "plan.json"
                planfile.save(plan, path)
                a = fio_alone(plan, engine, tmp)
                b = under_fiometer(path, engine, tmp)
                ratios.append(b / a)
                print(f"  {label}: fio alone {a:,.0f} IOPS, under fiometer run {b:,.0f} IOPS, ratio {b / a:.3f}")
        print(f"{label}: median ratio {statistics.median(ratios):.3f} over {len(ratios)} pairs (target >= 0.97)\n")


if __name__ == "__main__":
    main()
