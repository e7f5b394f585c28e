"""Cost of the checks Fiometer runs at the start of every step for local targets (engine.held_targets): place
again, open, verify, and for block devices the exclusive open and the loop devices' backings.

    python benchmarks/bench_target_checks.py [--targets 1 4 16] [--repeat 50]

Prints milliseconds per step (median and worst of --repeat) for N existing test files of Fiometer's, and, as
root, for N loop devices armed for writing (plus the loop-backing scan alone, which grows with the number of
bound loop devices on the machine). The test files exist at full size, so no layout is timed: laying a file
out costs what writing it costs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.engine.devices import linux_devices  # noqa: E402
from app.engine.guards.held_targets import Arming, hold  # noqa: E402
from app.engine.guards.safety import CreatedFiles, marker_of  # noqa: E402
from app.engine.jobs.jobfile import JobSettings, step_jobfile  # noqa: E402
from app.engine.jobs.placement import placer  # noqa: E402
from app.engine.jobs.sequence import expand  # noqa: E402
from app.model.plan import (  # noqa: E402
    AccessSpec,  # noqa: E402
    Manager,
    Plan,
    SpecLine,
    Target,
    Worker,
)

MiB = 1 << 20


def jobfile(paths: list[str]):
    plan = Plan(specs=[AccessSpec("S", [SpecLine(4096, 100, 0, 100)])])
    plan.managers.append(
        Manager("M1", workers=[Worker("W1", specs=["S"], targets=[Target(p) for p in paths])])
    )
    return step_jobfile(
        plan, expand(plan)[0], 0, "Linux", JobSettings(file_size=MiB, place=placer(True, "Linux", "M1"))
    )


def timed(fn, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), max(times)


def files(n: int, repeat: int, tmp: Path) -> tuple[float, float]:
    paths = [str(tmp / f"t{i}.tst") for i in range(n)]
    registry = CreatedFiles(tmp / "created.json")
    jf = jobfile(paths)
    first = hold(jf, Arming(), lambda p, st, fd: False)  # creates and lays them out
    registry.adopt(first.files)
    first.close()
    jf = jobfile(paths)

    def step() -> None:
        hold(jf, Arming(), lambda p, st, fd: registry.owns_stat(p, st, marker_of(fd))).close()

    return timed(step, repeat)


def devices(n: int, repeat: int, tmp: Path) -> tuple[float, float]:
    devs = []
    try:
        for i in range(n):
            img = tmp / f"d{i}.img"
            img.write_bytes(b"")
            os.truncate(img, 4 * MiB)
            devs.append(
                subprocess.run(
                    ["losetup", "--find", "--show", str(img)], capture_output=True, text=True, check=True
                ).stdout.strip()
            )
        jf = jobfile(devs)
        arming = Arming({j.path: j.placement.obj for j in jf.jobs})
        return timed(lambda: hold(jf, arming, lambda p, st, fd: False).close(), repeat)
    finally:
        for d in devs:
            subprocess.run(["losetup", "-d", d], capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args()
    root = os.geteuid() == 0 and shutil.which("losetup") is not None
    bound = len([b for b in linux_devices.loop_backings()])
    print(
        f"checks at the start of a step (ms per step, median / worst of {args.repeat}); "
        f"{bound} loop devices bound on this machine"
    )
    for n in args.targets:
        with tempfile.TemporaryDirectory() as d:
            med, worst = files(n, args.repeat, Path(d))
        print(
            f"  {n:3d} test file(s) of Fiometer's:        {med:7.2f} / {worst:7.2f} ms  "
            f"({med / n:.2f} ms per target)"
        )
        if root:
            with tempfile.TemporaryDirectory() as d:
                med, worst = devices(n, args.repeat, Path(d))
            print(
                f"  {n:3d} loop device(s) armed, O_EXCL:     {med:7.2f} / {worst:7.2f} ms  "
                f"({med / n:.2f} ms per target)"
            )
    med, worst = timed(linux_devices.loop_backings, args.repeat)
    print(f"  the loop-backing scan alone ({bound} bound): {med:7.2f} / {worst:7.2f} ms")
    if not root:
        print("  (devices skipped: needs root and losetup)")


if __name__ == "__main__":
    main()
