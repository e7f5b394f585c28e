"""Benchmarks for Fiometer's fio network client (app.engine.transports.fioproto).

(a) Reassembly + decode cost of one status report of 64 remote jobs, built from recorded TS
    payloads (tests/fixtures/fio-captures), fed through the real FrameReader and RunSession in 64 KiB
    reads as from a socket. Target: < 50 ms per report in total.
(b) IOPS of a null-engine job through a loopback `fio --server` driven by RemoteFio, against the
    same job run by local fio directly; alternating, a few repeats. Target: ratio >= 0.97.

Run from the repository root:  python benchmarks/bench_fioproto.py [--repeats 3] [--runtime 5] [--skip-fio]
    [--jobs 64]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.engine.transports.fioproto.client import RemoteFio  # noqa: E402
from app.engine.transports.fioproto.commands import Op  # noqa: E402
from app.engine.transports.fioproto.decoder import RunSession  # noqa: E402
from app.engine.transports.fioproto.frames import FrameReader, encode  # noqa: E402
from app.engine.transports.fioproto.layouts import layout_for  # noqa: E402
from app.engine.transports.transport import Finished, Snapshot  # noqa: E402
from tests.fioproto_recording import SERVER_TO_CLIENT, read_packets  # noqa: E402

JOBS = 64
NULL_JOB = "[global]\nioengine=null\nbs=4k\nrw=randread\nsize=1g\ntime_based=1\nruntime={runtime}\n\n[null]\n"


def find_captures() -> Path:
    return Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "fio-captures"


def report_stream(capture: Path, jobs: int) -> tuple[int, bytes, str]:
    """Wire bytes of one status report with ``jobs`` TS messages, as fio's server would send it."""
    packets = [p.packet for p in read_packets(capture) if p.direction == SERVER_TO_CLIENT]
    version = packets[0].version
    ts = [p.payload for p in packets if p.opcode == Op.TS][
        -1
    ]  # the end-of-run record: the fullest histograms
    gs = next(p.payload for p in packets if p.opcode == Op.GS)
    du = next(p.payload for p in packets if p.opcode == Op.DU)
    job_opt = struct.pack("<HHI64s128s", 0, 0, 0, b"bs", b"4k")
    layout = layout_for(version)
    parts = []
    for i in range(jobs):
        # every job its own sample counts, as in a real run (percentile thresholds differ per job)
        job_ts = bytearray(ts)
        for name in ("clat_stat", "slat_stat", "lat_stat"):
            for d in range(3):
                off = layout.ts[name].offset + d * 56 + 16  # io_stat.samples
                (n,) = struct.unpack_from("<Q", job_ts, off)
                if n:
                    struct.pack_into("<Q", job_ts, off, n + i)
        parts.append(encode(version, Op.JOB_OPT, job_opt[:4] + struct.pack("<I", i) + job_opt[8:]))
        parts.append(encode(version, Op.TS, bytes(job_ts)))
    parts.append(encode(version, Op.GS, gs))
    parts.append(encode(version, Op.DU, du))
    note = f"TS {len(ts)} B"
    return version, b"".join(parts), note


def time_reports(version: int, wire: bytes, *, verify_crc: bool, rounds: int) -> list[float]:
    out = []
    layout = layout_for(version)
    for _ in range(rounds):
        reader = FrameReader(verify_payload_crc=verify_crc)
        session = RunSession("bench", layout, "127.0.0.1", 8765, settle=0.0)
        t = time.process_time()  # CPU time: other processes on a busy machine do not count
        events = []
        for pos in range(0, len(wire), 65536):
            for pkt in reader.feed(wire[pos : pos + 65536]):
                events += session.on_packet(pkt)
        events += session.on_tick()
        out.append(time.process_time() - t)
        snaps = [e for e in events if isinstance(e, Snapshot)]
        assert len(snaps) == 1 and len(snaps[0].jobs) == JOBS, events
    return out


def bench_decode(rounds: int) -> None:
    caps = find_captures()
    print(f"(a) reassembly + decode of one status report with {JOBS} jobs (CPU time, median of {rounds}):")
    worst = 0.0
    for name in (
        "fio-3.33-randread-psync",
        "fio-3.33-job2",
        "fio-3.33-cmdprio",
        "fio-3.41-job3",
        "fio-3.42-job3",
    ):
        version, wire, note = report_stream(caps / f"{name}.cap", JOBS)
        plain = statistics.median(time_reports(version, wire, verify_crc=False, rounds=rounds)) * 1000
        checked = (
            statistics.median(time_reports(version, wire, verify_crc=True, rounds=max(3, rounds // 3))) * 1000
        )
        worst = max(worst, plain)
        print(
            f"    {name:26s} protocol {version:3d}, {note}, {len(wire) / 1e6:5.1f} MB on the wire: "
            f"{plain:6.1f} ms  (with payload CRC check: {checked:6.1f} ms)"
        )
    print(f"    worst case {worst:.1f} ms per report (target < 50 ms): {'OK' if worst < 50 else 'MISSED'}")


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _result(job: dict) -> tuple[float, float]:
    """IOPS, and IOPS per CPU second of the job (usr+sys), which discounts time the job was not
    scheduled: on a busy machine that is a steadier measure of what each I/O costs."""
    iops = float(job["read"]["iops"])
    cpu = (float(job["usr_cpu"]) + float(job["sys_cpu"])) / 100.0
    return iops, iops / cpu if cpu else float("nan")


def local_iops(job: Path) -> tuple[float, float]:
    out = subprocess.run(
        ["fio", "--output-format=json", str(job)], capture_output=True, text=True, timeout=120
    )
    out.check_returncode()
    doc = json.loads(out.stdout[out.stdout.index("{") :])
    return _result(doc["jobs"][0])


def remote_iops(host: str, port: int, job_text: str) -> tuple[float, float]:
    fio = RemoteFio(host, port, name="bench")
    fio.start(job_text, status_interval=1)
    final = None
    for ev in fio.events():
        if isinstance(ev, Snapshot) and ev.final:
            final = ev
        if isinstance(ev, Finished) and not ev.ok:
            raise RuntimeError(ev.reason)
    if final is None:
        raise RuntimeError("no final snapshot")
    return _result(final.jobs[0])


def bench_iops(repeats: int, runtime: int) -> None:
    if shutil.which("fio") is None:
        print("(b) skipped: fio is not installed")
        return
    host = "127.0.0.2"
    port = free_port(host)
    # Own process group (so its whole tree can be stopped) but the same session as the local runs:
    # with the scheduler's per-session autogroups both then compete for CPU on equal terms.
    server = subprocess.Popen(
        ["fio", f"--server={host},{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        process_group=0,
    )
    job_text = NULL_JOB.format(runtime=runtime)
    try:
        deadline = time.monotonic() + 5
        while True:
            with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
                break
            if time.monotonic() > deadline:
                raise RuntimeError("fio --server did not start")
            time.sleep(0.05)
        with tempfile.TemporaryDirectory() as tmp:
            job = Path(tmp) / "null.fio"
            job.write_text(job_text)
            print(
                f"(b) null engine, 4k randread, {runtime} s per run; local fio vs loopback fio --server via RemoteFio:"
            )
            local_all, remote_all, local_cpu, remote_cpu = [], [], [], []
            for i in range(repeats):
                order = ("local", "remote") if i % 2 == 0 else ("remote", "local")
                got = {}
                for kind in order:
                    got[kind] = local_iops(job) if kind == "local" else remote_iops(host, port, job_text)
                (li, lc), (ri, rc) = got["local"], got["remote"]
                local_all.append(li)
                remote_all.append(ri)
                local_cpu.append(lc)
                remote_cpu.append(rc)
                print(
                    f"    pair {i + 1} ({order[0]} first): local {li / 1e6:5.2f} M IOPS ({lc / 1e6:5.2f} M per CPU s), "
                    f"remote {ri / 1e6:5.2f} M IOPS ({rc / 1e6:5.2f} M per CPU s), ratio {ri / li:.3f}"
                )
            ratio = statistics.mean(remote_all) / statistics.mean(local_all)
            cpu_ratio = statistics.median(remote_cpu) / statistics.median(local_cpu)
            print(
                f"    IOPS: mean local {statistics.mean(local_all) / 1e6:.2f} M, mean remote "
                f"{statistics.mean(remote_all) / 1e6:.2f} M; ratio of means {ratio:.3f} (target >= 0.97): "
                f"{'OK' if ratio >= 0.97 else 'MISSED'}"
            )
            print(
                f"    IOPS per CPU second of the job: ratio of medians {cpu_ratio:.3f} "
                f"(load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
            )
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(3)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)
            server.wait(3)


def main() -> None:
    global JOBS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--jobs", type=int, default=JOBS, help=f"jobs in the status report of (a) (default {JOBS})"
    )
    ap.add_argument("--rounds", type=int, default=15, help="timing rounds for (a)")
    ap.add_argument("--repeats", type=int, default=4, help="local/remote pairs for (b)")
    ap.add_argument("--runtime", type=int, default=5, help="seconds per fio run in (b)")
    ap.add_argument("--skip-fio", action="store_true", help="only run (a)")
    args = ap.parse_args()
    JOBS = args.jobs
    bench_decode(args.rounds)
    if not args.skip_fio:
        bench_iops(args.repeats, args.runtime)


if __name__ == "__main__":
    main()
