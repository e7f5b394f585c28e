"""`runs`, `show` and `report` of one small run: CPU time in a database holding only it, and in one that also
holds a long run (its size should not matter).

    python benchmarks/bench_cli_reads.py --small DB1 --big DB2 --run ID

DB1 holds the small run ID; DB2 holds the same run ID and a long run (make both with
benchmarks/make_long_run.py, e.g. 1 min x 4 workers, and 60 min x 64 workers). Each command runs in a
fresh process (as a user runs it) and its CPU time is measured inside it, from before the command's
module is loaded to its end; the ratio big/small is the figure (1.0: independent of the other runs).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = (
    "import runpy, sys, time, json, io, contextlib\n"
    "sys.path.insert(0, sys.argv[1]); sys.argv = ['fiometer', *sys.argv[2:]]\n"
    "t = time.process_time()\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    try:\n        runpy.run_module('app.cli', run_name='__main__')\n"
    "    except SystemExit as e:\n        code = e.code\n"
    "print(json.dumps(time.process_time() - t), file=sys.stderr)\n"
)


def cpu(*args: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(ROOT), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        check=False,
        cwd=ROOT,
    )
    try:
        return float(done.stderr.strip().splitlines()[-1]) * 1000
    except (ValueError, IndexError):
        raise SystemExit(f"fiometer {' '.join(args)} failed: {done.stderr}") from None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", required=True)
    ap.add_argument("--big", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        commands = {
            "runs": ["runs"],
            "show": ["show", args.run],
            "report": ["report", args.run, "--html", str(Path(tmp, "r.html"))],
        }
        for name, command in commands.items():
            small = min(cpu("--db", args.small, *command) for _ in range(args.repeat))
            big = min(cpu("--db", args.big, *command) for _ in range(args.repeat))
            print(
                f"{name:7s} small database {small:6.0f} ms CPU, with a long run beside it {big:6.0f} ms CPU: "
                f"ratio {big / small:.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
