"""What the GUI thread itself spends on one 1-second interval of a 256-job run: receiving the samples (queued
signals from the runner's thread, as a real run delivers them, once the runner's thread has sent them: the
GUI thread waits without spinning, as its event loop would), feeding the live data (the window defers the
batches to its redraw, where they are fed at once: timed apart here), then the window's redraw: the four
charts' lines, the table, and painting (charts and table repainted). Parsing and roll-up happen on the
runner's threads (benchmarks/bench_telemetry.py) and are not counted here.

The machine may be loaded (other processes take CPU and caches): a floor, the same fixed numpy + Python work
timed on the GUI thread between the intervals, is printed beside the figures, and each figure as a ratio of it,
so runs on a busy and on a quiet machine compare. Add --profile to print cProfile's top functions.

The samples are real telemetry (fio 3.33 json+ entries, lat_percentiles=1) of M managers x W single-job
workers; the window shows "Each worker (all managers)" (one line per worker), and for reference "All Managers".
The GUI thread's CPU time (time.thread_time) is what the window costs, whatever else the machine does.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_gui_interval.py [--managers 16] [--workers 16]
        [--warmup 120] [--intervals 30]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from offscreen import use_screen  # noqa: E402

use_screen()

from PySide6.QtWidgets import QApplication  # noqa: E402

APP = QApplication.instance() or QApplication([])

from bench_telemetry import build_document  # noqa: E402

from app.engine.sampling.telemetry import Sample, StepTelemetry  # noqa: E402
from app.engine.transports.transport import Snapshot  # noqa: E402
from app.model.metrics import Metrics  # noqa: E402
from app.ui.main_window import MainWindow  # noqa: E402
from app.ui.run.run_driver import QtRunListener  # noqa: E402
from app.ui.settings import use_settings_dir  # noqa: E402
from tests.fio_fixtures import documents  # noqa: E402
from tests.helpers import grid  # noqa: E402


@dataclass
class _Step:
    index: int = 0
    spec_label: str = "S"


def interval_samples(managers: int, workers: int) -> list[list[Sample]]:
    """One interval's samples per manager (its workers and itself), and ALL's, from real fio reports."""
    docs = documents("two_jobs_ramp")
    before = next(j for j in docs[1]["jobs"] if j["jobname"] == "plain")
    after = next(j for j in docs[2]["jobs"] if j["jobname"] == "plain")
    first, second = (json.loads(build_document(e, workers)) for e in (before, after))
    batches = []
    for mi in range(managers):
        name = f"M{mi + 1}"
        tel = StepTelemetry({f"job{i:03d}": (name, f"w{i + 1}", f"t{i}") for i in range(workers)})
        tel.update(Snapshot(name, 0.0, first["jobs"], first["disk_util"]))
        batches.append(tel.update(Snapshot(name, 1.0, second["jobs"], second["disk_util"])))
    mans = [s for b in batches for s in b if s.level == "manager"]
    interval = Metrics.combine(s.interval for s in mans)
    batches.append([Sample(None, "all", "ALL", 1.0, interval, Metrics.combine(s.whole for s in mans), False)])
    return batches


def floor_ms() -> float:
    """CPU ms of a fixed piece of numpy and Python work (the machine's speed at this moment)."""
    rng = np.random.default_rng(1)
    c0 = time.thread_time()
    a = rng.standard_normal(200_000)
    np.sort(a)
    total = 0.0
    for i in range(60_000):
        total += i * 0.5
    return (time.thread_time() - c0) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--managers", type=int, default=16)
    ap.add_argument("--workers", type=int, default=16, help="single-job workers per manager")
    ap.add_argument("--warmup", type=int, default=120, help="intervals fed before measuring (history shown)")
    ap.add_argument("--intervals", type=int, default=30, help="intervals measured per view")
    ap.add_argument("--profile", action="store_true", help="cProfile the measured intervals of Each worker")
    args = ap.parse_args()
    jobs = args.managers * args.workers
    tmp = tempfile.mkdtemp(prefix="fiometer-bench-interval-")
    use_settings_dir(tmp)
    os.environ["FIOMETER_DB"] = str(Path(tmp) / "bench.db")
    template = interval_samples(args.managers, args.workers)
    nsamples = sum(len(b) for b in template)
    win = MainWindow(None, db_path=Path(tmp) / "bench.db")
    win.doc.replace(grid(args.managers, args.workers, 1))
    win.resize(1280, 800)
    win.show()
    win.tabs.setCurrentWidget(win.results_tab)
    rt = win.results_tab
    listener = QtRunListener()
    delivered = [0]

    def on_samples(index: int, offset: float, samples: list) -> None:
        win.run_control._on_samples(index, offset, samples)
        delivered[0] += 1

    listener.samplesArrived.connect(on_samples)
    win.live.clear()
    win.live.start_step(0.0, "1: S")
    step = _Step()
    go, stop, sent = threading.Event(), threading.Event(), threading.Event()
    t = [0.0]

    def runner_thread() -> None:  # one interval per go: every manager's batch, then ALL's
        while go.wait() and not stop.is_set():
            go.clear()
            t[0] += 1.0
            for batch in template:
                listener.samples(step, [Sample(**{**vars(s), "t": t[0]}) for s in batch])
            sent.set()

    th = threading.Thread(target=runner_thread, daemon=True)
    th.start()

    phases = ("receive", "feed", "charts", "table", "paint")

    def interval() -> dict[str, float]:
        """GUI-thread CPU ms of each phase of one interval (as ResultsTab.redraw does them, timed apart)."""
        out: dict[str, float] = {}
        c = time.thread_time()

        def lap(name: str) -> None:
            nonlocal c
            now = time.thread_time()
            out[name] = (now - c) * 1000
            c = now

        delivered[0] = 0
        go.set()
        sent.wait()  # the GUI thread idles (its event loop would sleep) while the runner's thread sends
        sent.clear()
        c = time.thread_time()
        while delivered[0] < len(template):
            APP.processEvents()
        lap("receive")
        win.live.flush()
        lap("feed")
        rt.notice.setVisible(not win.live.series)
        changed = rt.charts.redraw(win.live, rt.kind)
        lap("charts")
        if changed:
            rt._fill_table()
        rt.redraw()  # the disk table and anything else the tab does (its feed and charts: done above)
        lap("table")
        for ch in rt.charts.charts:
            ch.widget.viewport().repaint()
        rt.table.viewport().repaint()
        lap("paint")
        return out

    print(
        f"{args.managers} managers x {args.workers} workers = {jobs} jobs, {nsamples} samples per interval, "
        f"window {win.width()}x{win.height()}, {args.warmup} intervals of history"
    )
    for title in ("Each worker (all managers)", "All Managers"):
        rt.scope.setCurrentIndex([rt.scope.itemText(i) for i in range(rt.scope.count())].index(title))
        for _ in range(args.warmup if title.startswith("Each") else 5):
            interval()
        prof = cProfile.Profile() if args.profile and title.startswith("Each") else None
        runs, floors = [], []
        for _ in range(args.intervals):
            floors.append(floor_ms())
            if prof:
                prof.enable()
            runs.append(interval())
            if prof:
                prof.disable()
        floor = statistics.median(floors)
        total = [sum(r.values()) for r in runs]
        med = statistics.median(total)
        parts = ", ".join(f"{p} {statistics.median(r[p] for r in runs):4.1f}" for p in phases)
        print(
            f"   {title:28s} GUI thread per interval: median {med:5.1f} ms CPU ({parts}; max {max(total):5.1f})"
            f"  target <= 20 ms: {'OK' if med <= 20 else 'ABOVE TARGET'}"
        )
        print(
            f"   {'':28s} floor (fixed work, same run) {floor:4.1f} ms; interval / floor {med / floor:5.2f} "
            f"("
            + ", ".join(f"{p} {statistics.median(r[p] for r in runs) / floor:4.2f}" for p in phases)
            + ")"
        )
        if prof:
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    try:
        from app.live.data import charted
    except ImportError:  # before the chart values moved to the runner's thread
        charted = None
    if charted is not None:
        costs = []
        for _ in range(args.intervals):
            c0 = time.thread_time()
            for batch in template:
                charted(batch)
            costs.append((time.thread_time() - c0) * 1000)
        print(
            f"   moved to the runner's thread: chart values of an interval (charted) median "
            f"{statistics.median(costs):4.1f} ms CPU"
        )
    stop.set()
    go.set()
    th.join(timeout=5)
    win.doc.mark_saved()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
