"""How long fio keeps running after Fiometer is killed under heavy load (SIGKILL, nothing can clean up).

Runs `fiometer run` on a plan of 256 targets (256 fio job processes, null engine), waits until fio
has forked its jobs (at most 25 s), kills Fiometer with SIGKILL and prints the seconds until every fio process
has ended. Target: under 2 s (it was 12-18 s before fio got an orphan guard).
Usage: python benchmarks/kill_under_load.py [--jobs 256] [--repeats 3]   (Linux)
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.model import planfile  # noqa: E402
from app.model.plan import LOCAL, Target  # noqa: E402
from tests.helpers import grid  # noqa: E402
from tests.process_tree import command, descendants, wait_gone  # noqa: E402


def kill_once(tmp: Path, jobs: int, started_timeout: float = 25.0) -> tuple[int, float | None]:
    """(fio processes, seconds until all ended after Fiometer's SIGKILL; None: still running after 60 s)."""
    plan = grid(1, 1, jobs)
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp / f"t{i}.tst")) for i in range(jobs)]
    path = tmp / "plan.json"
    planfile.save(plan, path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(tmp / "r.db"),
            "run",
            str(path),
            "--engine",
            "null",
            "--run-time",
            "600",
            "--test-file-size",
            "1M",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    deadline = time.monotonic() + started_timeout
    fio: dict[int, str] = {}
    while time.monotonic() < deadline and proc.poll() is None:  # until fio has forked every job
        fio = {p: t for p, t in descendants(proc.pid).items() if "fiometer-guard" not in command(p)}
        if len(fio) > jobs:
            break
        time.sleep(0.2)
    time.sleep(1.0)  # the jobs are doing I/O
    fio = {p: t for p, t in descendants(proc.pid).items() if "fiometer-guard" not in command(p)}
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return len(fio), wait_gone(fio, 60.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    figures = []
    for i in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            n, seconds = kill_once(Path(tmp), args.jobs)
        figures.append(seconds if seconds is not None else float("inf"))
        print(
            f"run {i + 1}: {n} fio processes, all ended {seconds:.2f} s after the kill"
            if seconds is not None
            else f"run {i + 1}: {n} fio processes, some still running 60 s after the kill"
        )
    print(f"median {statistics.median(figures):.2f} s, worst {max(figures):.2f} s (target < 2 s)")


if __name__ == "__main__":
    main()
