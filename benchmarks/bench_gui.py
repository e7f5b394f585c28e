"""Results Display cost with many series, and how responsive the window stays during a run.

1. Chart redraw with 16 managers x 8 workers after an hour of 1 Hz samples (3,600 points in each
   of 145 series: ALL, 16 managers, 128 workers), showing "Each worker (all managers)": one live
   update = a new point in every series, then ResultsTab.redraw() (curves and table) and a
   synchronous repaint of the four charts. Target: median under 16 ms. Measured for WHOLE_TEST
   (smooth running averages, the default) and LAST_UPDATE (per-interval numbers, jittery), and
   for reference the single ALL series. Wall and CPU time of the GUI thread (the machine may be
   shared; CPU time is what the redraw costs).
2. Event-loop latency during a run: a 10 ms QTimer's lateness (median, p99, max) while
   a) a real run goes on: local fio, null engine, 4 managers x 8 workers, charts on "Each worker";
   b) a synthetic 16 x 8 run replays one batch of 145 samples per second from a runner thread
      through QtRunListener's queued signals (the path real runs take), on top of an hour of
      history, with the charts on "Each worker". Target: under 50 ms.

Usage: QT_QPA_PLATFORM=offscreen python benchmarks/bench_gui.py [--updates N] [--seconds S] [--skip-fio]
"""

from __future__ import annotations

import argparse
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

use_screen()  # a screen larger than the window, so the window is really SIZE

import numpy as np  # noqa: E402
from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

APP = QApplication.instance() or QApplication([])

from app.engine.run.runner import RunOptions  # noqa: E402
from app.live.data import CHART_FIELDS, KINDS, LAST, WHOLE, Block, Series  # noqa: E402
from app.model.metrics import Metrics  # noqa: E402
from app.model.plan import LOCAL, SpecLine, Target  # noqa: E402
from app.ui.main_window import MainWindow  # noqa: E402
from app.ui.run.run_driver import QtRunListener  # noqa: E402
from app.ui.settings import use_settings_dir  # noqa: E402
from tests.helpers import grid  # noqa: E402

MANAGERS, WORKERS, HOUR = 16, 8, 3600
SIZE = (1280, 800)


def pct(values: list[float], p: float) -> float:
    return float(np.percentile(values, p)) if values else float("nan")


def settle(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        APP.processEvents()
        time.sleep(0.005)


def new_window(managers: int, workers: int, tmp: Path) -> MainWindow:
    win = MainWindow(None, db_path=tmp / "bench.db")
    plan = grid(managers, workers, 1)
    win.doc.replace(plan)
    win.resize(*SIZE)
    win.show()
    win.tabs.setCurrentWidget(win.results_tab)
    settle(0.3)
    return win


def choose_scope(win: MainWindow, title: str) -> None:
    rt = win.results_tab
    rt.scope.setCurrentIndex([rt.scope.itemText(i) for i in range(rt.scope.count())].index(title))
    settle(0.1)


def series_keys(win: MainWindow) -> list[tuple]:
    plan = win.doc.plan
    return (
        [("all", None, "ALL")]
        + [("manager", m.name, m.name) for m in plan.managers]
        + [("worker", m.name, f"w{i + 1}") for m in plan.managers for i in range(len(m.workers))]
    )


def fill_history(win: MainWindow, points: int, spare: int) -> None:
    """An hour of 1 Hz points in every series: LAST_UPDATE jitters +-3 % around each series'
    level, WHOLE_TEST is its running average (as fio's numbers behave in a steady run)."""
    rng = np.random.default_rng(7)
    live = win.live
    live.clear()
    for j, key in enumerate(series_keys(win)):
        s = Series()
        s.x = np.arange(1, points + spare + 1, dtype=np.float64)
        # per CHART_FIELDS: IOPS, MB/s, mean, max, p99 ms, fio CPU %, errors
        level = (5000 + 40 * j) * np.array([1.0, 0.004, 0.0008, 0.02, 0.0012, 0.003, 0.0])[:, None]
        raw = level * (1 + 0.03 * rng.standard_normal((len(CHART_FIELDS), points + spare)))
        whole = np.cumsum(raw, axis=1) / np.arange(1, points + spare + 1)
        s.values = {WHOLE: whole.astype(np.float32), LAST: raw.astype(np.float32)}
        assert set(s.values) == set(KINDS)
        s.n = points + spare
        live.blocks.setdefault(key[0], Block()).add(
            s
        )  # as a live run keeps them: a level's series in one block
        s.n = points
        m = Metrics(
            seconds=1.0,
            read_ios=5000,
            read_iops=5000.0,
            read_bps=5000 * 4096.0,
            read_lat_sum_ns=5000 * 2e5,
            read_lat_n=5000,
            read_lat_max_ns=2e6,
            read_hist={100_000: 2500, 200_000: 2000, 1_000_000: 500},
        )
        s.latest = {WHOLE: m, LAST: m}
        live.series[key] = s
    live.revision += 1


# --- 1. redraw ------------------------------------------------------------------------------------
def bench_redraw(updates: int, tmp: Path) -> None:
    print(
        f"1. Chart redraw, {MANAGERS} managers x {WORKERS} workers, {HOUR} points per series "
        f"({1 + MANAGERS + MANAGERS * WORKERS} series), window {SIZE[0]}x{SIZE[1]}, {updates} updates"
    )
    win = new_window(MANAGERS, WORKERS, tmp)
    fill_history(win, HOUR, updates + 8)
    rt = win.results_tab
    plot = rt.charts.charts[0].widget
    print(f"   window {win.width()}x{win.height()}, each chart {plot.width()}x{plot.height()} pixels")
    for scope in ("Each worker (all managers)", "All Managers"):
        choose_scope(win, scope)
        for button in (rt.since_whole, rt.since_last):
            button.setChecked(True)
            settle(0.1)
            rt.redraw(force=True)
            walls, cpus = [], []
            for _ in range(updates):
                for s in win.live.series.values():
                    s.n += 1
                win.live.revision += 1
                w0, c0 = time.perf_counter(), time.thread_time()
                rt.redraw()
                for c in rt.charts.charts:
                    c.widget.viewport().repaint()
                walls.append((time.perf_counter() - w0) * 1000)
                cpus.append((time.thread_time() - c0) * 1000)
            ok = "OK" if statistics.median(cpus) < 16 else "ABOVE TARGET"
            for s in win.live.series.values():
                s.n = HOUR
            print(
                f"   {scope:28s} {rt.kind:11s}  median {statistics.median(walls):6.1f} ms wall, "
                f"{statistics.median(cpus):6.1f} ms CPU  (p90 CPU {pct(cpus, 90):6.1f} ms)  "
                f"target < 16 ms: {ok}"
            )
        for s in win.live.series.values():
            s.n = HOUR
    win.doc.mark_saved()
    win.close()


# --- 2. event-loop latency ------------------------------------------------------------------------
class LatencyProbe:
    """A 10 ms timer; each tick's lateness is how long the event loop could not run it. The GUI
    thread's own CPU time between ticks tells our work apart from waiting for a CPU or the GIL."""

    def __init__(self) -> None:
        self.lates: list[float] = []
        self.own: list[float] = []  # GUI-thread CPU ms between consecutive ticks
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.last = 0.0
        self.last_cpu = 0.0

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        if self.last:
            self.lates.append(max(0.0, (now - self.last) * 1000 - 10))
            self.own.append((cpu - self.last_cpu) * 1000)
        self.last, self.last_cpu = now, cpu

    def start(self) -> None:
        self.last = 0.0
        self.lates, self.own = [], []
        self.timer.start()

    def stop(self) -> LatencyProbe:
        self.timer.stop()
        return self


def report(label: str, probe: LatencyProbe) -> None:
    lates = probe.lates
    ok = "OK" if lates and max(lates) < 50 else "ABOVE TARGET"
    print(
        f"   {label}\n      lateness median {statistics.median(lates):5.1f} ms, p99 {pct(lates, 99):6.1f} ms, "
        f"max {max(lates):7.1f} ms over {len(lates)} ticks  target < 50 ms: {ok}\n"
        f"      GUI thread's own work between two ticks: median {statistics.median(probe.own):4.1f} ms, "
        f"max {max(probe.own):5.1f} ms (the rest of any lateness is waiting for a CPU or the GIL)"
    )


def bench_real_run(seconds: int, tmp: Path) -> None:
    win = new_window(4, 8, tmp)
    plan = win.doc.plan
    plan.specs[0].lines = [SpecLine(4096, 100, 70, 100, 0, 1, 4096, 0)]
    for m in plan.managers:
        m.host = LOCAL
        for wi, w in enumerate(m.workers):
            w.targets = [Target(str(tmp / f"{m.name}-{wi}.tst"))]
    win.doc.replace(plan)
    win.tabs.setCurrentWidget(win.results_tab)
    choose_scope(win, "Each worker (all managers)")
    win.run_control.run_options = RunOptions(engine="null", run_time=seconds)
    probe = LatencyProbe()
    assert win.run_control.start_run(), "the run did not start"
    probe.start()
    end = time.monotonic() + seconds + 30
    while win.controller.running and time.monotonic() < end:
        APP.processEvents()
        time.sleep(0.001)
    probe.stop()
    points = win.live.series[("all", None, "ALL")].n if ("all", None, "ALL") in win.live.series else 0
    report(f"a) real run, local fio null engine, 4 x 8 workers, {seconds} s ({points} points)", probe)
    win.doc.mark_saved()
    win.close()


@dataclass
class _Step:
    index: int = 0
    spec_label: str = "S"


def synthetic_samples(t: float) -> list:
    from app.engine.sampling.telemetry import Sample

    out = []
    for mi in range(MANAGERS):
        name = f"M{mi + 1}"
        parts = []
        for wi in range(WORKERS):
            m = Metrics(
                seconds=1.0,
                read_ios=5000,
                read_iops=5000.0 + wi,
                read_bps=5000 * 4096.0,
                read_lat_sum_ns=5000 * 2e5,
                read_lat_n=5000,
                read_lat_max_ns=2e6,
                read_hist={100_000 + 1000 * k: 50 for k in range(40)},
            )
            parts.append(m)
            out.append(Sample(name, "worker", f"w{wi + 1}", t, m, m, False, f"w{wi + 1}"))
        mm = Metrics.combine(parts)
        out.append(Sample(name, "manager", name, t, mm, mm, False))
    everything = Metrics.combine(s.interval for s in out if s.level == "manager")
    out.append(Sample(None, "all", "ALL", t, everything, everything, False))
    return out


def bench_synthetic_run(seconds: int, tmp: Path) -> None:
    win = new_window(MANAGERS, WORKERS, tmp)
    fill_history(win, HOUR, seconds + 8)
    choose_scope(win, "Each worker (all managers)")
    listener = QtRunListener()
    listener.samplesArrived.connect(lambda _i, offset, samples: win.live.add(offset, samples))
    step = _Step()
    stop = threading.Event()

    def runner_thread() -> None:  # one batch per second, as telemetry delivers it
        t = float(HOUR)
        while not stop.is_set():
            t += 1.0
            listener.samples(step, synthetic_samples(t))
            stop.wait(1.0)

    probe = LatencyProbe()
    th = threading.Thread(target=runner_thread, daemon=True)
    probe.start()
    th.start()
    settle(seconds)
    stop.set()
    th.join()
    probe.stop()
    report(f"b) synthetic 16 x 8 run, 145 samples/s on an hour of history, {seconds} s", probe)
    win.doc.mark_saved()
    win.close()


def main() -> int:
    global MANAGERS, WORKERS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--updates", type=int, default=60, help="live updates measured per case (default 60)")
    ap.add_argument("--seconds", type=int, default=15, help="length of each latency measurement (default 15)")
    ap.add_argument("--skip-fio", action="store_true", help="skip the real fio run")
    ap.add_argument(
        "--grid",
        default=f"{MANAGERS}x{WORKERS}",
        help="managers x workers for the redraw (e.g. 32x32: 1,024 worker series)",
    )
    ap.add_argument("--redraw-only", action="store_true", help="only the redraw measurement")
    args = ap.parse_args()
    MANAGERS, WORKERS = (int(v) for v in args.grid.lower().split("x"))
    with tempfile.TemporaryDirectory(prefix="fiometer-bench-gui-") as tmp:
        use_settings_dir(tmp)
        os.environ["FIOMETER_DB"] = str(Path(tmp) / "bench.db")
        print(
            f"load average at start: {', '.join(f'{v:.1f}' for v in os.getloadavg())} on {os.cpu_count()} CPUs\n"
        )
        np.percentile([1.0], 50)  # import numpy's lazy parts now, not inside a measurement
        bench_redraw(args.updates, Path(tmp))
        if args.redraw_only:
            return 0
        print("\n2. Event-loop latency (10 ms timer lateness) during a run, target < 50 ms")
        if not args.skip_fio:
            bench_real_run(args.seconds, Path(tmp))
        bench_synthetic_run(args.seconds, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
