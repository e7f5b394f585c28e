"""What checking a remote manager's test files costs per step, against one `fio --server` on 127.0.0.7.

    python benchmarks/bench_remote_checks.py [--files N] [--repeat R]

Prints the median wall time of: a bare one-job null fio run on the server (what any fio job costs
there), the probe of N test files (two read-only jobs: folders, then markers, app.engine.remote.files)
and the rules an ssh:// manager runs on its host (app.engine.remote.hold), here by python3 without the
SSH connection itself: examining the N files before the run, and holding them for a step (open, verify,
then stamp after it). The figure is the probe's ratio to the bare job (about 2: it is two fio jobs).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.engine.guards.held_targets import Arming  # noqa: E402
from app.engine.jobs.jobfile import JobFile, JobInfo  # noqa: E402
from app.engine.remote import files as remote_files  # noqa: E402
from app.engine.remote import hold as remote_hold  # noqa: E402
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
            local = lambda: subprocess.Popen(  # noqa: E731 - what ssh would start there
                [sys.executable, "-c", remote_hold.BOOT],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            targets = [(f.path, False) for f in files]
            place = timed(lambda: remote_hold.place_there(local, "bench", targets), a.repeat)
            placed = remote_hold.place_there(local, "bench", targets)
            jobs = [
                JobInfo(
                    f"j{i}", "M1", "w1", "w", "w1.t1", "T", f.path, False, "S", 1, 1 << 20, 0, placed[f.path]
                )
                for i, f in enumerate(files)
            ]
            text = "\n".join(f"[j{i}]\nfilename={f.path}" for i, f in enumerate(files))
            step = JobFile("M1", text, jobs)  # type: ignore[arg-type]
            arming = Arming({f.path: placed[f.path].obj for f in files})  # type: ignore[union-attr]

            def hold_and_adopt() -> None:
                remote_hold.hold_there(local, step, arming, {}).adopt()

            hold = timed(hold_and_adopt, a.repeat)
        print(f"bare null fio job on the server: {bare:.0f} ms")
        print(f"probe of {a.files} test files:       {probe:.0f} ms  ({probe / bare:.1f}x a bare job)")
        print(f"ssh:// rules, place {a.files} files (no ssh): {place:.0f} ms")
        print(f"ssh:// rules, hold and adopt (no ssh): {hold:.0f} ms")
    finally:
        servers.close()


if __name__ == "__main__":
    main()
