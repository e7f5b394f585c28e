"""`fiometer compare` and `fiometer report` of long wide runs: wall time, CPU and peak memory of each command.

Two runs are written by make_long_run.py into a temporary database (a real plan, every level's per-second
samples and histograms, as the recorder stores them): run 1 of ``--minutes`` with ``--workers`` workers, and
run 2 made of its steps ``--repeat`` times over (an 8-hour run from a 1-hour one). Then, each in a fresh
process as a user runs it: `compare 1 2`, and `report 1 --compare 2` writing PDF, XLSX and HTML (and each
format alone). Peak memory is the command's own maximum resident set (getrusage of that child). Budgets
(issue 40): 8 h against 1 h at 64 workers, compare <= 2 s and report <= 8 s, each under 300 MB.

    python benchmarks/bench_long_reports.py [--minutes 60] [--workers 64] [--repeat 8] [--keep DIR]
    python benchmarks/bench_long_reports.py --db long.db --runs 1 3   (runs already written: 18 h against 1 h)

An 18-hour run beside them: ``make_long_run.py --db long.db --from-run 1 --repeat 18`` (budget: no worse
than twice the 8-hour figures).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measured(args: list[str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MB) of one command run to its end (it must succeed)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--workers", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=8)
    ap.add_argument(
        "--keep", metavar="DIR", help="write the database and reports there (else a temporary folder)"
    )
    ap.add_argument("--db", help="a database already written by make_long_run.py (else one is written)")
    ap.add_argument(
        "--runs", nargs=2, default=("1", "2"), metavar=("BEFORE", "AFTER"), help="the runs compared (--db)"
    )
    args = ap.parse_args()
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="fiometer-bench-long-"))
    tmp.mkdir(parents=True, exist_ok=True)
    before, after = args.runs
    try:
        if args.db:
            db = Path(args.db)
            print(f"runs {before} and {after} of {db} ({db.stat().st_size / 1e6:.1f} MB)")
        else:
            db = tmp / "long.db"
            make = [sys.executable, str(ROOT / "benchmarks" / "make_long_run.py"), "--db", str(db)]
            make += ["--minutes", str(args.minutes), "--workers", str(args.workers)]
            make += ["--repeat", str(args.repeat)]
            subprocess.run(make, cwd=ROOT, check=True, capture_output=True)
            print(
                f"run 1: {args.minutes:g} min x {args.workers} workers; run 2: its steps x {args.repeat} "
                f"({args.minutes * args.repeat:g} min); database {db.stat().st_size / 1e6:.1f} MB"
            )
        cli = [sys.executable, "-m", "app.cli", "--db", str(db)]
        report = [*cli, "report", before, "--compare", after]
        files = {k: str(tmp / f"r.{k}") for k in ("pdf", "xlsx", "html")}
        cases = [("compare", [*cli, "compare", before, after])]
        cases.append(
            ("report PDF+XLSX+HTML", [*report, *(x for k, p in files.items() for x in (f"--{k}", p))])
        )
        cases += [(f"report {k.upper()} alone", [*report, f"--{k}", p]) for k, p in files.items()]
        for name, cmd in cases:
            wall, cpu, mb = measured(cmd)
            print(f"{name:24} {wall:6.2f} s wall, {cpu:6.2f} s CPU, peak {mb:5.0f} MB")
        print(f"load average {os.getloadavg()[0]:.2f}")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
