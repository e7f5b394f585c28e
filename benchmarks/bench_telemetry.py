"""Telemetry cost per interval, and the cost of running fio through LocalFio.

1. One interval of a 256-job step: json.loads of the json+ document, differencing, roll-up and
   samples (target < 50 ms). The document is built from a real job entry recorded from fio 3.33
   (tests/fixtures/fio-3.33/two_jobs_ramp: psync on a file, ~300 latency bins per histogram),
   as printed with lat_percentiles=1 (lat and clat bins) and with clat_percentiles=0 added
   (fio then prints no clat bins; derived from the same entry). Wall and CPU time (the machine
   may be shared; CPU time is what this code costs).
2. IOPS of the same job run by plain fio (same arguments as LocalFio, output to a file) and
   through LocalFio (events consumed and fed to StepTelemetry), alternating, N repeats: ratio of
   medians LocalFio / plain (target >= 0.97), and Fiometer's own CPU use while fio ran (this is
   what LocalFio costs, independent of other load on the machine). Once with the null engine,
   once 4k random read on a 64 MiB file, libaio, direct=1.

Usage: python benchmarks/bench_telemetry.py [--runtime S] [--repeats N] [--skip-fio]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.engine.sampling.telemetry import StepTelemetry  # noqa: E402
from app.engine.transports.fio_binary import find_fio  # noqa: E402
from app.engine.transports.local_fio import LocalFio  # noqa: E402
from app.engine.transports.transport import Snapshot  # noqa: E402
from tests.fio_fixtures import documents  # noqa: E402


# --- 1. one interval of 256 jobs --------------------------------------------------------------------
def build_document(entry: dict, jobs: int) -> str:
    doc = {"fio version": "fio-3.33", "timestamp": 0, "timestamp_ms": 0, "time": "", "jobs": []}
    for i in range(jobs):
        j = copy.deepcopy(entry)
        j["jobname"] = f"job{i:03d}"
        doc["jobs"].append(j)
    doc["disk_util"] = [{"name": "vda", "util": 74.0}]
    return json.dumps(doc, indent=2, separators=(",", " : "))  # fio's layout


def lat_bins_only(entry: dict) -> dict:
    """The entry as fio 3.33 prints it with clat_percentiles=0: clat_ns without percentiles/bins."""
    out = copy.deepcopy(entry)
    for dd in ("read", "write", "trim"):
        for key in ("percentile", "bins"):
            out[dd]["clat_ns"].pop(key, None)
    return out


def bench_interval(label: str, before: dict, after: dict, jobs: int, rounds: int) -> None:
    text_before, text_after = build_document(before, jobs), build_document(after, jobs)
    bins = sum(len(after["read"][h].get("bins", {})) for h in ("lat_ns", "clat_ns"))
    workers = 16
    job_map = {f"job{i:03d}": ("m", f"w{i % workers}", f"t{i}") for i in range(jobs)}
    wall: dict[str, list[float]] = {"decode": [], "total": []}
    cpu: dict[str, list[float]] = {"decode": [], "total": []}
    nsamples = 0
    for _ in range(rounds):
        tel = StepTelemetry(job_map)
        first = json.loads(text_before)
        tel.update(Snapshot("m", 0.0, first["jobs"], first["disk_util"]))
        w0, c0 = time.perf_counter(), time.process_time()
        doc = orjson.loads(text_after)  # as LocalFio parses fio's reports
        w1, c1 = time.perf_counter(), time.process_time()
        samples = tel.update(Snapshot("m", 1.0, doc["jobs"], doc["disk_util"]))
        w2, c2 = time.perf_counter(), time.process_time()
        wall["decode"].append(w1 - w0)
        wall["total"].append(w2 - w0)
        cpu["decode"].append(c1 - c0)
        cpu["total"].append(c2 - c0)
        nsamples = len(samples)

    def ms(xs: list[float]) -> str:
        return f"{statistics.median(xs) * 1000:6.1f} ms"

    total = statistics.median(cpu["total"])
    print(
        f"{label}: {jobs} jobs, {len(text_after) / 2**20:.1f} MiB document, {bins} bins per job, {nsamples} samples"
    )
    print(f"  orjson.loads             median wall {ms(wall['decode'])}  cpu {ms(cpu['decode'])}")
    print(
        f"  decode+diff+roll-up+samples  wall {ms(wall['total'])}  cpu {ms(cpu['total'])}  (min wall {min(wall['total']) * 1000:.1f} ms)"
    )
    print(f"  target < 50 ms (cpu median): {'OK' if total < 0.050 else 'MISSED'}")
    parsers = [("json.loads", json.loads)]
    parsers.append((f"orjson {orjson.__version__}", orjson.loads))
    try:
        import msgspec

        parsers.append((f"msgspec {msgspec.__version__}", msgspec.json.decode))
    except ImportError:
        pass
    data = text_after.encode()
    base = None
    for name, parse in parsers:
        times = []
        for _ in range(rounds):
            c0 = time.process_time()
            parse(data if name != "json.loads" else text_after)
            times.append(time.process_time() - c0)
        t = statistics.median(times)
        base = base or t
        print(f"  parse with {name:16s} cpu {t * 1000:6.1f} ms  ({base / t:.1f}x json.loads)")


def bench_intervals(jobs: int, rounds: int) -> None:
    docs = documents("two_jobs_ramp")
    before = next(j for j in docs[1]["jobs"] if j["jobname"] == "plain")
    after = next(j for j in docs[2]["jobs"] if j["jobname"] == "plain")
    bench_interval("json+ with lat_percentiles=1 (lat and clat bins)", before, after, jobs, rounds)
    bench_interval(
        "json+ with lat_percentiles=1 clat_percentiles=0 (lat bins only)",
        lat_bins_only(before),
        lat_bins_only(after),
        jobs,
        rounds,
    )


# --- 2. fio alone vs LocalFio -----------------------------------------------------------------------
def job_iops(doc: dict) -> float:
    return sum(j[dd]["iops"] for j in doc["jobs"] for dd in ("read", "write"))


def plain_fio(fio: Path, job: str, workdir: Path) -> float:
    """fio run by hand with the arguments LocalFio uses, its output going to a file."""
    path = workdir / "plain.fio"
    path.write_text(job)
    out_path = workdir / "plain.out"
    with open(out_path, "wb") as out:
        rc = subprocess.run(
            [str(fio), "--output-format=json+", "--status-interval=1", str(path)], stdout=out, cwd=workdir
        ).returncode
    if rc != 0:
        raise RuntimeError(f"fio failed with {rc}")
    text = out_path.read_text()
    return job_iops(json.loads(text[text.rindex("\n{\n") + 1 :]))  # the last document


def through_local_fio(job: str, workdir: Path) -> tuple[float, float]:
    """IOPS, and this process's CPU seconds per wall second while it ran fio."""
    w0, c0 = time.perf_counter(), time.process_time()
    lf = LocalFio("bench", workdir=workdir)
    lf.start(job, status_interval=1.0)
    tel = StepTelemetry({"bench": ("bench", "w", "t")})
    final = None
    for ev in lf.events():
        if isinstance(ev, Snapshot):
            tel.update(ev)
            if ev.final:
                final = ev
    if final is None or final.raw is None:
        raise RuntimeError("LocalFio gave no final report")
    cpu = (time.process_time() - c0) / (time.perf_counter() - w0)
    return job_iops(json.loads(final.raw)), cpu


def bench_overhead(label: str, job: str, repeats: int, workdir: Path) -> None:
    fio = find_fio()
    plain, local, cpu = [], [], []
    for _ in range(repeats):
        plain.append(plain_fio(fio, job, workdir))
        iops, used = through_local_fio(job, workdir)
        local.append(iops)
        cpu.append(used)
    ratio = statistics.median(local) / statistics.median(plain)
    print(f"{label}:")
    print(f"  plain fio  IOPS: {', '.join(f'{x:,.0f}' for x in plain)}")
    print(f"  LocalFio   IOPS: {', '.join(f'{x:,.0f}' for x in local)}")
    print(
        f"  ratio of medians LocalFio/plain = {ratio:.3f}   (target >= 0.97: {'OK' if ratio >= 0.97 else 'MISSED'})"
    )
    print(f"  Fiometer's own CPU while fio ran: {statistics.median(cpu) * 100:.2f} % of one core")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--runtime", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-fio", action="store_true")
    args = ap.parse_args()
    bench_intervals(args.jobs, args.rounds)
    if args.skip_fio:
        return
    rt = args.runtime
    with tempfile.TemporaryDirectory(prefix="fiometer-bench-", dir="/tmp") as tmp:
        workdir = Path(tmp)
        null = f"[bench]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\ntime_based\nruntime={rt}\nlat_percentiles=1\n"
        bench_overhead(f"null engine, 4k randread, {rt:g} s", null, args.repeats, workdir)
        data = workdir / "bench.dat"
        with open(data, "wb") as f:  # lay the file out once, outside the timed runs
            f.write(b"\xa5" * (64 << 20))
        aio = (
            f"[bench]\nioengine=libaio\ndirect=1\niodepth=16\nfilename={data}\nsize=64m\nbs=4k\n"
            f"rw=randread\nnorandommap=1\ntime_based\nruntime={rt}\nlat_percentiles=1\n"
        )
        bench_overhead(
            f"libaio direct=1 iodepth=16, 4k randread on a 64 MiB file, {rt:g} s", aio, args.repeats, workdir
        )


if __name__ == "__main__":
    main()
