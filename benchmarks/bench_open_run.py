"""Reopening a stored run in History: CPU time and peak memory, to open it and to switch scope and step.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_open_run.py --db PATH --run ID [--run ID2 ...]

Each run is measured in a fresh process (peak memory is per process): the run view reads the run (on
its store thread, as in the application; CPU time counts every thread) and draws it, then the scope
goes to "Each worker" and back, and the step to the first step and back; then the response time
distribution is shown (every step, then the first step; its histograms are read only then). Make a run to
measure with benchmarks/make_long_run.py. Prints CPU ms and peak MB above the process's baseline, per action.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(db: str, run_id: int) -> dict:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from app.ui.history.run_view import RunView
    from app.ui.history.store_tasks import StoreTasks

    tasks = StoreTasks(db)
    view = RunView(run_id, tasks)
    view.resize(1280, 800)
    view.show()
    app.processEvents()
    out: dict = {"baseline_mb": _rss_mb()}

    def wait_idle() -> None:
        deadline = time.monotonic() + 600
        while tasks.busy or view.data is None:
            app.processEvents()
            time.sleep(0.001)
            if time.monotonic() > deadline:
                raise TimeoutError("the run view did not load")
        for _ in range(3):
            app.processEvents()

    def timed(name: str, action) -> None:
        t0 = time.process_time()
        action()
        wait_idle()
        view.repaint()
        out[name + "_cpu_ms"] = (time.process_time() - t0) * 1000
        out[name + "_peak_mb"] = _rss_mb() - out["baseline_mb"]

    timed("open", view.load)
    titles = [view.scope.itemText(i) for i in range(view.scope.count())]
    each = titles.index("Each worker") if "Each worker" in titles else 0
    timed("scope", lambda: view.scope.setCurrentIndex(each))
    timed("scope_back", lambda: view.scope.setCurrentIndex(0))
    timed("step", lambda: view.step.setCurrentIndex(1 if view.step.count() > 1 else 0))
    timed("step_back", lambda: view.step.setCurrentIndex(0))
    out["latency_read_before_shown"] = view.latency.shown is not None
    timed("latency", lambda: view.views.setCurrentWidget(view.latency))
    timed("latency_step", lambda: view.step.setCurrentIndex(1 if view.step.count() > 1 else 0))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--run", type=int, action="append", required=True)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.db, args.run[0])))
        return 0
    for run_id in args.run:
        done = subprocess.run(
            [sys.executable, __file__, "--db", args.db, "--run", str(run_id), "--child"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            print(done.stderr, file=sys.stderr)
            return done.returncode
        r = json.loads(done.stdout.strip().splitlines()[-1])
        print(
            f"run {run_id}: open {r['open_cpu_ms']:.0f} ms CPU, peak +{r['open_peak_mb']:.0f} MB; "
            f"scope Each worker {r['scope_cpu_ms']:.0f} ms, back {r['scope_back_cpu_ms']:.0f} ms; "
            f"step one {r['step_cpu_ms']:.0f} ms, back to all {r['step_back_cpu_ms']:.0f} ms; "
            f"latency distribution {'(read before shown!) ' * r['latency_read_before_shown']}"
            f"all steps {r['latency_cpu_ms']:.0f} ms, one step {r['latency_step_cpu_ms']:.0f} ms; "
            f"peak over all +{max(v for k, v in r.items() if k.endswith('_peak_mb')):.0f} MB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
