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
from app.store.blocks import last_t_sql  # noqa: E402


def worker_hours(path: Path) -> float:
    conn = sqlite3.connect(path)
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        own = "coalesce(series.same_as, series.id)" if version >= 3 else "series.id"
        last = last_t_sql(own) if version >= 4 else f"(SELECT max(t) FROM samples WHERE series_id = {own})"
        # a worker-hour: one worker's samples for an hour (the span of its workers' samples, per step)
        spans = conn.execute(
            "SELECT steps.id, (SELECT count(*) FROM workers WHERE workers.run_id = steps.run_id), "
            f"(SELECT max({last}) FROM series WHERE series.step_id = steps.id AND series.level = 'worker') "
            "FROM steps"
        ).fetchall()
    finally:
        conn.close()
    return sum(n * (t or 0) for _id, n, t in spans) / 3600


def tables(path: Path, hours: float, top: int = 6) -> str:
    """Where the bytes are: each table's (and its indexes') pages, per worker-hour."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT coalesce(m.tbl_name, d.name), sum(d.pgsize) FROM dbstat d LEFT JOIN sqlite_schema m "
            "ON m.name = d.name GROUP BY 1 ORDER BY 2 DESC"
        ).fetchall()
    finally:
        conn.close()
    total = sum(b for _n, b in rows)
    shown = [f"{name} {b / hours / 1e6:.2f} ({100 * b / total:.0f} %)" for name, b in rows[:top]]
    rest = sum(b for _n, b in rows[top:])
    return "  MB per worker-hour by table: " + ", ".join(shown) + f", the rest {rest / hours / 1e6:.2f}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--workers", type=int, default=64)
    ap.add_argument("--migrate", help="an older Fiometer database to migrate (a copy of it)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "new.db")
        t0 = time.process_time()
        write_run(path, args.minutes, args.workers)
        cpu = time.process_time() - t0
        with open_store(path):
            pass  # checkpoint: the WAL's pages into the file
        size = path.stat().st_size
        wh = args.minutes / 60 * args.workers
        print(
            f"new recording, {args.minutes:g} min x {args.workers} workers: {size / 1e6:.2f} MB = "
            f"{size / wh / 1e6:.2f} MB per worker-hour, written in {cpu:.1f} s CPU (synthetic data included)"
        )
        print(tables(path, wh))
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
            print(
                f"migrated {Path(args.migrate).name} ({hours:.0f} worker-hours): {before / 1e6:.1f} MB "
                f"({before / hours / 1e6:.2f} MB per worker-hour) -> {after / 1e6:.1f} MB "
                f"({after / hours / 1e6:.2f} MB per worker-hour), ratio {before / after:.2f}, "
                f"{cpu:.1f} s CPU (a backup copy first)"
            )
            print(tables(copy, hours))
    return 0


if __name__ == "__main__":
    sys.exit(main())
