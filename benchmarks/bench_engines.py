"""libaio against io_uring on the same job: IOPS and CPU per I/O, as ratios measured in one run.

The plan is one worker, 4k random read at QD 32 on a 64 MiB test file with direct I/O. Its job file is
written by `fiometer plan --jobs` once per engine (the plan's I/O engine set to libaio, to io_uring, and to
io_uring with fixedbufs and registerfiles), so each side is the text Fiometer would send, differing only in
its engine lines. fio runs each job file in turn (libaio, io_uring, io_uring+options, libaio, ...) to share
the machine's noise; figures are fio's own (its JSON): IOPS, and CPU per I/O = (usr_cpu + sys_cpu) of the
job's runtime over its I/Os, in microseconds. Ratios are against libaio of the same round. A machine whose
kernel or fio cannot run io_uring says so and measures libaio only. Temporary files go to the system's
temporary folder.

    python benchmarks/bench_engines.py [--seconds 10] [--repeats 3] [--depth 32]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.engine.devices import io_uring_host  # noqa: E402
from app.model import planfile  # noqa: E402
from app.model.plan import LOCAL, SpecLine, Target  # noqa: E402
from tests.helpers import grid  # noqa: E402

SIDES = (("libaio", ()), ("io_uring", ()), ("io_uring", ("fixedbufs", "registerfiles")))


def job_file(tmp: Path, engine: str, options: tuple[str, ...], seconds: int, depth: int) -> Path:
    """The job file `fiometer plan --jobs` writes for the plan with this engine."""
    plan = grid(1, 1, 1, qd=depth)
    plan.specs[0].lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp / "bench.tst"))]
    plan.managers[0].workers[0].max_size = (64 << 20) // 4096  # sectors of the file system's 4 KiB
    plan.setup.run_time = seconds
    plan.setup.engine, plan.setup.engine_options = engine, list(options)
    name = engine + "".join("+" + o for o in options)
    path = tmp / f"{name}.json"
    planfile.save(plan, path)
    out = tmp / name
    subprocess.run(
        [sys.executable, "-m", "app.cli", "plan", str(path), "--jobs", str(out), "--os", "Linux"],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    (job,) = out.glob("*.fio")
    return job


def measure(fio: str, job: Path) -> tuple[float, float]:
    """(IOPS, CPU microseconds per I/O) of one fio run of ``job``, from fio's JSON."""
    out = subprocess.run(
        [fio, "--output-format=json", str(job)], capture_output=True, text=True, check=True
    ).stdout
    (j,) = json.loads(out[out.index("{") :])["jobs"]
    ios = j["read"]["total_ios"] + j["write"]["total_ios"]
    runtime_s = j["job_runtime"] / 1000
    cpu_s = (j["usr_cpu"] + j["sys_cpu"]) / 100 * runtime_s
    return j["read"]["iops"] + j["write"]["iops"], cpu_s / max(ios, 1) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--depth", type=int, default=32)
    args = ap.parse_args()
    fio = shutil.which("fio") or "fio"
    why_not = io_uring_host.refusal(fio)
    sides = SIDES if why_not is None else SIDES[:1]
    if why_not:
        print(f"io_uring cannot run here ({why_not}): libaio only")
    with tempfile.TemporaryDirectory(prefix="fiometer-bench-engines-") as d:
        tmp = Path(d)
        (tmp / "bench.tst").write_bytes(b"\xa5" * (64 << 20))
        jobs = [job_file(tmp, e, o, args.seconds, args.depth) for e, o in sides]
        rounds = [[measure(fio, job) for job in jobs] for _ in range(args.repeats)]
    print(
        f"4k random read, QD {args.depth}, 64 MiB file, direct=1, {args.seconds} s x {args.repeats} rounds:"
    )
    for i, (engine, options) in enumerate(sides):
        iops = statistics.median(r[i][0] for r in rounds)
        cpu = statistics.median(r[i][1] for r in rounds)
        iops_ratio = statistics.median(r[i][0] / r[0][0] for r in rounds)
        cpu_ratio = statistics.median(r[i][1] / r[0][1] for r in rounds)
        name = engine + (f" ({', '.join(options)})" if options else "")
        print(
            f"{name:36} median IOPS {iops:,.0f} (ratio to libaio {iops_ratio:.3f}); "
            f"median CPU per I/O {cpu:.2f} us (ratio {cpu_ratio:.3f})"
        )


if __name__ == "__main__":
    main()
