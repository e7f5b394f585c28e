"""What checking a remote manager's test files costs per step, against one `fio --server` on 127.0.0.7.

    python benchmarks/bench_remote_checks.py [--files N] [--repeat R]

Prints the median wall time of: a bare one-job null fio run on the server (what any fio job costs
there), the probe of N test files (two read-only jobs: folders, then markers, app.engine.transports.remote_files)
and the local checker program run by python3 (what an ssh:// manager runs on its host, without the SSH
connection itself). The figure is the probe's ratio to the bare job (about 2: it is two fio jobs).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.engine.guards import remote_check  # noqa: E402
from app.engine.transports import remote_files  # noqa: E402
from app.engine.transports.fioproto import RemoteFio  # noqa: E402
from tests.fio_servers import fio_servers  # noqa: E402


def timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.monotonic()
        fn()
        times.append(time.monotonic() - t)
    return statistics.median(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    servers = fio_servers()
    start = next(servers)
    try:
        host, port, _ = start("127.0.0.7")
        make = lambda: RemoteFio(host, port, name="bench")  # noqa: E731
        with tempfile.TemporaryDirectory() as d:
            files = [remote_files.RemoteFile(f"{d}/t{i}.tst", 1 << 20) for i in range(a.files)]
            for f in files:
                remote_files.lay_out(make, f)
            bare = timed(lambda: remote_files.run_job(make, "[j]\nioengine=null\nsize=4k\n"), a.repeat)
            probe = timed(lambda: remote_files.probe(make, files), a.repeat)
            paths = json.dumps([f.path for f in files])
            check = timed(
                lambda: subprocess.run(
                    [sys.executable, "-c", remote_check.CHECKER],
                    input=paths,
                    capture_output=True,
                    text=True,
                    check=True,
                ),
                a.repeat,
            )
        print(f"bare null fio job on the server: {bare:.0f} ms")
        print(f"probe of {a.files} test files:       {probe:.0f} ms  ({probe / bare:.1f}x a bare job)")
        print(f"ssh:// checker program (no ssh):   {check:.0f} ms")
    finally:
        servers.close()


if __name__ == "__main__":
    main()
