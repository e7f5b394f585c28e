"""Peak memory and CPU of `fiometer export RUN --samples` for a 1-hour and an 8-hour run (64 workers):
streaming keeps memory flat in the run's length, and a stretch's numbers formatted a column at a time (each
distinct value once) make it several times cheaper than the export that wrote a row at a time. Each export runs in a fresh process; its peak resident memory is read
from the kernel (``wait4``), with the export that held the whole file (as before it streamed) beside it.

    python benchmarks/bench_export_memory.py [--db long.db --short 1 --long 2] [--workers 64] [--no-before]

Without --db, a 1-hour, 64-worker run is written by make_long_run.py (an hour's CPU of the recorder on
a loaded machine: about 2 minutes of CPU) into the system's temporary folder, and the 8-hour run is
made of its steps eight times over (rows copied, ``make_long_run.repeat_run``). Prints MB and ratios.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from make_long_run import repeat_run, write_run  # noqa: E402

_BEFORE = """
import sys
from app.store import open_store, get_run
from tests.unit.test_samples_export_stream import export_as_before
with open_store(sys.argv[1]) as s:
    data = export_as_before(s, get_run(s, int(sys.argv[2])))
open(sys.argv[3], "wb").write(data)
"""


def peak(args: list[str]) -> tuple[float, float, float]:
    """(peak resident MB, CPU s, wall s) of one process run to its end."""
    t0 = time.monotonic()
    p = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise SystemExit(f"{args} failed ({p.returncode})")
    return usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db")
    ap.add_argument("--short", type=int, default=1, help="the 1-hour run's id in --db")
    ap.add_argument("--long", type=int, help="the 8-hour run's id in --db (default: made from --short)")
    ap.add_argument("--workers", type=int, default=64)
    ap.add_argument(
        "--no-before", action="store_true", help="skip the whole-file export (it needs GBs for 8 h)"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fiometer-bench-") as tmp:
        db = Path(args.db) if args.db else Path(tmp, "long.db")
        short = write_run(db, 60, args.workers) if not args.db else args.short
        long = args.long or repeat_run(db, short, 8)
        print(
            f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (other work shares the machine: "
            "compare the ratios)"
        )
        figures = {}
        for label, run in (("1 h", short), ("8 h", long)):
            out = Path(tmp, f"s{run}.csv")
            mb, cpu, wall = peak(
                [sys.executable, "-m", "app.cli", "--db", str(db), "export", str(run), "--samples", str(out)]
            )
            size = out.stat().st_size / 1e6
            figures[label] = mb
            line = (
                f"{label} x {args.workers} workers: {size:,.0f} MB of CSV; streamed: peak {mb:.0f} MB, "
                f"{cpu:.1f} s CPU ({size / cpu:.0f} MB of CSV per CPU second)"
            )
            if not args.no_before and label == "1 h":
                before = Path(tmp, f"b{run}.csv")
                bmb, bcpu, _w = peak([sys.executable, "-c", _BEFORE, str(db), str(run), str(before)])
                # compared a piece at a time: a child forked from a large parent would count its pages
                same = filecmp.cmp(before, out, shallow=False)
                line += (
                    f"; whole file in memory, a row at a time (as before): peak {bmb:.0f} MB, {bcpu:.1f} s CPU "
                    f"({bcpu / cpu:.1f}x the streamed export's), same bytes: {same}"
                )
                before.unlink()
            print(line)
            out.unlink()
        print(f"peak memory 8 h / 1 h: {figures['8 h'] / figures['1 h']:.2f} (goal <= 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
