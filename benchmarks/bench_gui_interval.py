"""What the GUI thread itself spends on one 1-second interval of a 256-job run: receiving the samples (queued
signals from the runner's thread, as a real run delivers them), feeding the live data, then the window's
redraw (table and the four charts, repainted). Parsing and roll-up happen on the runner's threads
(benchmarks/bench_telemetry.py) and are not counted here.

The samples are real telemetry (fio 3.33 json+ entries, lat_percentiles=1) of M managers x W single-job
workers; the window shows "Each worker (all managers)" (one line per worker), and for reference "All Managers".
The GUI thread's CPU time (time.thread_time) is what the window costs, whatever else the machine does.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_gui_interval.py [--managers 16] [--workers 16]
        [--warmup 120] [--intervals 30]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

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
from app.ui.run.run_controller import QtRunListener  # noqa: E402
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--managers", type=int, default=16)
    ap.add_argument("--workers", type=int, default=16, help="single-job workers per manager")
    ap.add_argument("--warmup", type=int, default=120, help="intervals fed before measuring (history shown)")
    ap.add_argument("--intervals", type=int, default=30, help="intervals measured per view")
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
        win._on_samples(index, offset, samples)
        delivered[0] += 1

    listener.samplesArrived.connect(on_samples)
    win.live.clear()
    win.live.start_step(0.0, "1: S")
    step = _Step()
    go, stop = threading.Event(), threading.Event()
    t = [0.0]

    def runner_thread() -> None:  # one interval per go: every manager's batch, then ALL's
        while go.wait() and not stop.is_set():
            go.clear()
            t[0] += 1.0
            for batch in template:
                listener.samples(step, [Sample(**{**vars(s), "t": t[0]}) for s in batch])

    th = threading.Thread(target=runner_thread, daemon=True)
    th.start()

    def interval() -> tuple[float, float]:
        """(GUI-thread CPU ms to receive and feed, ms to redraw the window) for one interval."""
        c0 = time.thread_time()
        delivered[0] = 0
        go.set()
        while delivered[0] < len(template):
            APP.processEvents()
        c1 = time.thread_time()
        rt.redraw()
        for c in rt.charts.charts:
            c.widget.viewport().repaint()
        rt.table.viewport().repaint()
        return (c1 - c0) * 1000, (time.thread_time() - c1) * 1000

    print(f"{args.managers} managers x {args.workers} workers = {jobs} jobs, {nsamples} samples per interval, "
          f"window {win.width()}x{win.height()}, {args.warmup} intervals of history")
    for title in ("Each worker (all managers)", "All Managers"):
        rt.scope.setCurrentIndex([rt.scope.itemText(i) for i in range(rt.scope.count())].index(title))
        for _ in range(args.warmup if title.startswith("Each") else 5):
            interval()
        feed, draw = zip(*(interval() for _ in range(args.intervals)), strict=True)
        total = [f + d for f, d in zip(feed, draw, strict=True)]
        med = statistics.median(total)
        print(f"   {title:28s} GUI thread per interval: median {med:5.1f} ms CPU (receive + feed "
              f"{statistics.median(feed):4.1f}, table + charts {statistics.median(draw):4.1f}; max {max(total):5.1f})"
              f"  target <= 20 ms: {'OK' if med <= 20 else 'ABOVE TARGET'}")
    stop.set()
    go.set()
    th.join(timeout=5)
    win.doc.dirty = False
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
