"""Soak: a long run under the GUI keeps memory flat and the database consistent (issue 5).

The real main window (offscreen), one local manager with 8 workers on the null engine, 1 Hz
updates, charts on "Each worker", for --minutes (default 30). Prints RSS (VmRSS of this process,
which holds the GUI, the runner and the store writer) every minute, at the start (after the first
minute, once everything is loaded) and at the end, then checks the stored run: PRAGMA
integrity_check, the run complete, about one sample per second for ALL and each worker.
Usage: QT_QPA_PLATFORM=offscreen python benchmarks/soak_gui.py [--minutes 30]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("FIOMETER_SETTINGS_DIR", tempfile.mkdtemp(prefix="fiometer-soak-settings-"))

from app.engine.run.runner import RunOptions  # noqa: E402
from app.model.plan import LOCAL, SpecLine, Target  # noqa: E402
from app.store import get_run, list_runs, open_store, step_samples  # noqa: E402
from app.ui import launch  # noqa: E402
from tests.helpers import grid  # noqa: E402


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=30)
    args = ap.parse_args()
    seconds = int(args.minutes * 60)
    tmp = Path(tempfile.mkdtemp(prefix="fiometer-soak-"))
    db = tmp / "soak.db"
    app = launch.application()
    window = launch.HeadlessWindow(launch.prefs.app_settings(), persist=False, db_path=db)
    window.resize(1280, 800)
    window.show()
    plan = grid(1, 8, 1, qd=4)
    plan.specs[0].lines = [SpecLine(4096, 100, 70, 100, 0, 1, 4096, 0)]
    plan.managers[0].host = LOCAL
    for i, w in enumerate(plan.managers[0].workers):
        w.targets = [Target(str(tmp / f"t{i}.tst"))]
    window.doc.replace(plan)
    window.run_control.run_options = RunOptions(engine="null", run_time=seconds)
    done: list[str] = []
    window.controller.finished.connect(done.append)
    assert window.run_control.start_run(), "the run did not start"
    t0 = time.monotonic()
    readings: list[tuple[float, float]] = []
    next_mark = 60.0
    while not done:
        app.processEvents()
        time.sleep(0.02)
        elapsed = time.monotonic() - t0
        if elapsed >= next_mark:
            readings.append((elapsed, rss_mib()))
            print(f"  {elapsed / 60:5.1f} min  RSS {readings[-1][1]:7.1f} MiB", flush=True)
            next_mark += 60.0
        if elapsed > seconds + 120:
            print("the run did not finish in time")
            return 1
    end_rss = rss_mib()
    start_rss = readings[0][1] if readings else end_rss
    print(
        f"run {done[0]} after {(time.monotonic() - t0) / 60:.1f} min; RSS at 1 min {start_rss:.1f} MiB, "
        f"at the end {end_rss:.1f} MiB ({end_rss - start_rss:+.1f} MiB, "
        f"{(end_rss - start_rss) / max(args.minutes - 1, 1e-9):+.2f} MiB/min)"
    )
    window.close()
    app.processEvents()
    with contextlib.closing(sqlite3.connect(db)) as conn:
        print("integrity_check:", conn.execute("PRAGMA integrity_check").fetchone()[0])
    store = open_store(db)
    (summary,) = list_runs(store)
    run = get_run(store, summary.id)
    step = run.steps[0]
    counts = {"ALL": len(step_samples(store, step.id, "all", "ALL"))}
    for w in range(1, 9):
        counts[f"w{w}"] = len(step_samples(store, step.id, "worker", f"w{w}"))
    print(
        f"stored run {run.id}: status {run.status}, step {step.status}; samples per series: "
        f"{min(counts.values())}..{max(counts.values())} for {seconds} s"
    )
    store.close()
    return 0 if run.status == "complete" else 1


if __name__ == "__main__":
    sys.exit(main())
