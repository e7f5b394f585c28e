"""Soak, faster than real time: the window's memory while a long live run is fed to it (issue 27).

The real main window (offscreen, 1280 x 800, Results tab on "Each worker (all managers)") is fed one
interval of M managers x W workers per simulated second: real telemetry samples (fio 3.33 json+ reports,
as benchmarks/bench_gui_interval.py builds them) through the window's own slot, then a redraw and a
repaint of the charts and the table, as the window's 1-s tick does. No fio and no store run here, so what
grows is the window's: RSS (VmRSS) and the points the live data keeps are printed every simulated minute,
at the first minute and at the end. Simulated time runs as fast as the GUI thread draws (say 20-60 x real
time); ``benchmarks/soak_gui.py`` is the real-time soak with fio and the store.

    QT_QPA_PLATFORM=offscreen python benchmarks/soak_gui_synthetic.py [--managers 1] [--workers 8]
        [--minutes 60]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from offscreen import use_screen  # noqa: E402

use_screen()

from PySide6.QtWidgets import QApplication  # noqa: E402

APP = QApplication.instance() or QApplication([])

from bench_gui_interval import interval_samples  # noqa: E402

from app.engine.sampling.telemetry import Sample  # noqa: E402
from app.ui.main_window import MainWindow  # noqa: E402
from app.ui.settings import use_settings_dir  # noqa: E402
from tests.helpers import grid  # noqa: E402


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--managers", type=int, default=1)
    ap.add_argument("--workers", type=int, default=8, help="single-job workers per manager")
    ap.add_argument("--minutes", type=float, default=60, help="simulated minutes (one interval per second)")
    ap.add_argument("--scope", default="Each worker (all managers)")
    ap.add_argument("--redraw-every", type=int, default=1, help="simulated seconds between redraws")
    ap.add_argument("--screenshot", type=Path, help="save the Results tab as a PNG at the end")
    ap.add_argument("--tracemalloc", action="store_true", help="print what Python allocated since minute 1")
    args = ap.parse_args()
    if args.tracemalloc:
        tracemalloc.start(8)
    snap = None
    tmp = tempfile.mkdtemp(prefix="fiometer-soak-synthetic-")
    use_settings_dir(tmp)
    os.environ["FIOMETER_DB"] = str(Path(tmp) / "soak.db")
    template = interval_samples(args.managers, args.workers)
    win = MainWindow(None, db_path=Path(tmp) / "soak.db")
    win.doc.replace(grid(args.managers, args.workers, 1))
    win.resize(1280, 800)
    win.show()
    win.tabs.setCurrentWidget(win.results_tab)
    rt = win.results_tab
    titles = [rt.scope.itemText(i) for i in range(rt.scope.count())]
    rt.scope.setCurrentIndex(titles.index(args.scope))
    win.live.clear()
    win.live.start_step(0.0, "1: S")
    seconds = int(args.minutes * 60)
    first: float | None = None
    t0 = time.monotonic()
    print(
        f"{args.managers} managers x {args.workers} workers, {seconds} simulated seconds, view {args.scope!r}"
    )
    for sec in range(1, seconds + 1):
        for batch in template:
            win.run_control._on_samples(0, 0.0, [Sample(**{**vars(s), "t": float(sec)}) for s in batch])
        if sec % args.redraw_every == 0 or sec == seconds:
            rt.redraw()
            for c in rt.charts.charts:
                c.widget.viewport().repaint()
            rt.table.viewport().repaint()
            APP.processEvents()
        if sec % 60 == 0:
            rss = rss_mib()
            first = rss if first is None else first
            if args.tracemalloc and snap is None:
                snap = tracemalloc.take_snapshot()
            points = sum(s.n for s in win.live.series.values())
            cols = sum(b.x.shape[1] * b.x.shape[0] for b in win.live.blocks.values())
            print(
                f"  {sec / 60:6.1f} sim-min  RSS {rss:7.1f} MiB  points kept {points:9,d} (room {cols:9,d})  "
                f"{sec / (time.monotonic() - t0):5.1f} x real time",
                flush=True,
            )
    end = rss_mib()
    if snap is not None:
        for stat in tracemalloc.take_snapshot().compare_to(snap, "traceback")[:8]:
            print(stat)
            print("    " + "\n    ".join(stat.traceback.format()[-8:]))
    start = first if first is not None else end
    print(
        f"RSS at 1 sim-min {start:.1f} MiB, at the end {end:.1f} MiB ({end - start:+.1f} MiB, "
        f"{(end - start) / max(args.minutes - 1, 1e-9):+.3f} MiB per simulated minute)"
    )
    if args.screenshot:
        rt.grab().save(str(args.screenshot))
        print("saved", args.screenshot)
    win.doc.mark_saved()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
