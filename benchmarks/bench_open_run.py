"""Reopening a stored run in History: CPU time and peak memory, to open it and to switch scope and step.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_open_run.py --db PATH --run ID [--run ID2 ...]

Each run is measured in a fresh process (peak memory is per process): the run view reads the run (on
its store thread, as in the application; CPU time counts every thread) and draws it, then the scope
goes to "Each worker" and back, and the step to the first step and back; then the response time
distribution is shown (every step, then the first step; its histograms are read only then). Make a run to
measure with benchmarks/make_long_run.py. Prints CPU ms and peak MB above the process's baseline, per action.

``--previous N``: N pairs of fresh processes, one opening the run as the previous code did (every step
boundary a pyqtgraph InfiniteLine of its own on every chart, and the stored validity notes read by a second
store task after the run was drawn: both put back by this script) and one as the code does now; prints each
side's median and the ratio, measured in the same run.

``--forget-notes``: first removes the run's stored validity notes (as a Fiometer older than their keeping
stored it: use a copy of the database), then measures the previous way of computing them (every sample and
histogram read as Metrics) and two openings: the first computes them off the GUI thread and keeps them
(CPU, wall time until shown, the GUI thread's longest wait between two 10-ms timer ticks), the second reads
them with the run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def put_back_previous_code() -> None:
    """The previous code's two costs of opening, for a before/after in one run: one InfiniteLine per step
    boundary per chart (a pen each, added to the plot), and stored notes read by a second task."""
    import pyqtgraph as pg
    from PySide6.QtCore import Qt

    import app.ui.charts.chart_grid as charts
    import app.ui.history.run_view as run_view
    from app.analysis.validity import notes_of
    from app.store.queries import get_run

    class InfiniteLines(charts.StepLines):
        def set_xs(self, xs) -> None:  # type: ignore[no-untyped-def]
            plot = self.getViewBox().parentItem()
            for line in getattr(self, "lines", []):
                plot.removeItem(line)
            self.lines = []
            for x in xs:
                line = pg.InfiniteLine(
                    x, angle=90, pen=pg.mkPen(charts.MARK_COLOR, style=Qt.PenStyle.DotLine)
                )
                plot.addItem(line, ignoreBounds=True)
                self.lines.append(line)

    def second_task(store, run):  # type: ignore[no-untyped-def]
        return notes_of(get_run(store, run.id, result_levels=()), store), "stored"

    charts.StepLines = InfiniteLines
    run_view.stored_notes = lambda _run: None
    run_view.run_notes = second_task


def forget_notes(db: str, run_id: int) -> None:
    import sqlite3

    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "UPDATE runs SET host_json = json_remove(host_json, '$.validity') WHERE id = ?", (run_id,)
        )
    conn.close()


def previous_notes_cpu_ms(db: str, run_id: int) -> float:
    """CPU of the previous way History computed a run's notes (on its store task): the run read three times
    (its outline, then with every result, then with fio's outputs and every result again) and every ALL
    sample as Metrics with its histograms (app.store.step_samples)."""
    from app.analysis.validity import run_notes
    from app.engine.sampling.telemetry import ALL_KEY
    from app.store import get_run, open_store, step_samples

    t0 = time.process_time()
    with open_store(db) as store:
        get_run(store, run_id, result_levels=())
        get_run(store, run_id)
        run = get_run(store, run_id, raw_output=True)
        samples = {
            s.index: [(t, m.ios, m.seconds) for t, m in step_samples(store, s.id, "all", ALL_KEY)]
            for s in run.steps
        }
        run_notes(run, samples)
    return (time.process_time() - t0) * 1000


def open_with_notes(db: str, run_id: int) -> dict:
    """One opening until the notes are shown: CPU, wall, the notes' own CPU on the store's thread, and the
    GUI thread's longest wait between two ticks of a 10-ms timer."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    import app.ui.history.run_view as run_view
    from app.ui.history.store_tasks import StoreTasks

    computed: list[float] = []
    compute = run_view.run_notes

    def timed_notes(store, run):  # type: ignore[no-untyped-def]
        t0 = time.thread_time()
        try:
            return compute(store, run)
        finally:
            computed.append((time.thread_time() - t0) * 1000)

    run_view.run_notes = timed_notes
    tasks = StoreTasks(db)
    view = run_view.RunView(run_id, tasks)
    view.resize(1280, 800)
    view.show()
    app.processEvents()
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(10)
    t0, w0 = time.process_time(), time.perf_counter()
    view.load()
    while tasks.busy or view.data is None:
        app.processEvents()
        time.sleep(0.001)
    for _ in range(3):
        app.processEvents()
    view.repaint()
    return {
        "cpu_ms": (time.process_time() - t0) * 1000,
        "wall_ms": (time.perf_counter() - w0) * 1000,
        "notes_cpu_ms": sum(computed),
        "computed": len(computed),
        "longest_gap_ms": max(gaps, default=0.0) * 1000,
        "notes": len(view.validity.lines),
    }


def measure(db: str, run_id: int, previous: bool = False) -> dict:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    if previous:
        put_back_previous_code()
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


def child(args: list[str]) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, *args, "--child"], capture_output=True, text=True, check=False
    )
    if done.returncode:
        print(done.stderr, file=sys.stderr)
        raise SystemExit(done.returncode)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--run", type=int, action="append", required=True)
    ap.add_argument(
        "--previous",
        type=int,
        default=0,
        metavar="N",
        help="N pairs of openings, the previous code's way and today's, in alternate fresh processes",
    )
    ap.add_argument(
        "--forget-notes",
        action="store_true",
        help="remove the runs' stored validity notes first (use a copy), then measure computing them",
    )
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--old", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--notes", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--previous-notes", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        if args.previous_notes:
            out = {"cpu_ms": previous_notes_cpu_ms(args.db, args.run[0])}
        elif args.notes:
            out = open_with_notes(args.db, args.run[0])
        else:
            out = measure(args.db, args.run[0], previous=args.old)
        print(json.dumps(out))
        return 0
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    for run_id in args.run:
        base = ["--db", args.db, "--run", str(run_id)]
        if args.forget_notes:
            forget_notes(args.db, run_id)
            before = child([*base, "--previous-notes"])
            first = child([*base, "--notes"])
            second = child([*base, "--notes"])
            print(
                f"run {run_id} stored without notes: computing them the previous way {before['cpu_ms']:.0f} ms "
                f"CPU, now {first['notes_cpu_ms']:.0f} ms (ratio {first['notes_cpu_ms'] / before['cpu_ms']:.3f}); "
                f"first opening until they are shown {first['cpu_ms']:.0f} ms CPU, {first['wall_ms']:.0f} ms "
                f"wall, the GUI thread's longest wait {first['longest_gap_ms']:.0f} ms, computed "
                f"{first['computed']} time(s), {first['notes']} note(s); second opening {second['cpu_ms']:.0f} ms "
                f"CPU, {second['wall_ms']:.0f} ms wall, longest wait {second['longest_gap_ms']:.0f} ms, computed "
                f"{second['computed']} time(s), {second['notes']} note(s)"
            )
        if args.previous:
            old, new = [], []
            for _ in range(args.previous):
                old.append(child([*base, "--old"])["open_cpu_ms"])
                new.append(child(base)["open_cpu_ms"])
            o, n = statistics.median(old), statistics.median(new)
            print(
                f"run {run_id}: open, previous code {o:.0f} ms CPU (median of {', '.join(f'{v:.0f}' for v in old)}) "
                f"-> now {n:.0f} ms ({', '.join(f'{v:.0f}' for v in new)}): ratio {n / o:.2f}"
            )
            continue
        r = child(base)
        print(
            f"run {run_id}: open {r['open_cpu_ms']:.0f} ms CPU, peak +{r['open_peak_mb']:.0f} MB; "
            f"scope Each worker {r['scope_cpu_ms']:.0f} ms, back {r['scope_back_cpu_ms']:.0f} ms; "
            f"step one {r['step_cpu_ms']:.0f} ms, back to all {r['step_back_cpu_ms']:.0f} ms; "
            f"latency distribution {'(read before shown!) ' * r['latency_read_before_shown']}"
            f"all steps {r['latency_cpu_ms']:.0f} ms, one step {r['latency_step_cpu_ms']:.0f} ms; "
            f"peak over all +{max(v for k, v in r.items() if k.endswith('_peak_mb')):.0f} MB"
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
