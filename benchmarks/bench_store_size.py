"""Database size per worker-hour: a fresh synthetic run (benchmarks/make_long_run.py), and optionally the
in-place migration of an older database.

    python benchmarks/bench_store_size.py [--minutes 10] [--workers 64] [--migrate OLD.db]

Prints MB per worker-hour of the new file (every level recorded each second, histograms where kept,
results and fio outputs included), and for --migrate: a copy of OLD.db migrated, its size before and
after and the migration's CPU time.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from make_long_run import write_run  # noqa: E402

from app.store import open_store  # noqa: E402


def worker_hours(path: Path) -> float:
    conn = sqlite3.connect(path)
    try:
        # a worker-hour: one worker's samples for an hour (its ALL-level samples' span, per step)
        spans = conn.execute(
            "SELECT steps.id, (SELECT count(*) FROM workers WHERE workers.run_id = steps.run_id), "
            "(SELECT max(t) FROM samples JOIN series ON series.id = samples.series_id "
            " WHERE series.step_id = steps.id AND series.level = 'worker') FROM steps").fetchall()
    finally:
        conn.close()
    return sum(n * (t or 0) for _id, n, t in spans) / 3600


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--workers", type=int, default=64)
    ap.add_argument("--migrate", help="an older Fiometer database to migrate (a copy of it)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "new.db")
        write_run(path, args.minutes, args.workers)
        with open_store(path):
            pass  # checkpoint: the WAL's pages into the file
        size = path.stat().st_size
        wh = args.minutes / 60 * args.workers
        print(f"new recording, {args.minutes:g} min x {args.workers} workers: {size / 1e6:.2f} MB = "
              f"{size / wh / 1e6:.2f} MB per worker-hour")
        if args.migrate:
            copy = Path(tmp, "old.db")
            shutil.copy(args.migrate, copy)
            before = copy.stat().st_size
            hours = worker_hours(copy)
            t0 = time.process_time()
            with open_store(copy):
                pass
            cpu = time.process_time() - t0
            after = copy.stat().st_size
            print(f"migrated {Path(args.migrate).name} ({hours:.0f} worker-hours): {before / 1e6:.1f} MB "
                  f"({before / hours / 1e6:.2f} MB per worker-hour) -> {after / 1e6:.1f} MB "
                  f"({after / hours / 1e6:.2f} MB per worker-hour), ratio {before / after:.2f}, "
                  f"{cpu:.1f} s CPU (a backup copy first)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
