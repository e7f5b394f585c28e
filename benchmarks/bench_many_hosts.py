"""Many hosts: N `fio --server` processes on 127.0.0.x, W workers each (null engine), run live from the
GUI at 1 Hz with the charts on "Each worker (all managers)".

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_many_hosts.py [--hosts 8,16,32] [--workers 4]
                                                                   [--seconds 20]

For each fan-out: the event loop's lateness (a 10 ms timer: median, p99, max; target p99 < 50 ms), the
GUI thread's own CPU time, whether every manager's every interval was stored (one sample per second
from the first to the last), and whether each manager's stored final IOPS equal its server's own final
report (sum of its jobs' read + write iops in fio's JSON, kept as the step's raw output; within 0.1 %).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bench_gui import APP, LatencyProbe, choose_scope, pct, settle  # noqa: E402

from app.engine.runner import RunOptions  # noqa: E402
from app.model.plan import SpecLine, Target  # noqa: E402
from app.store import get_run, open_store, step_samples  # noqa: E402
from app.ui.launch import HeadlessWindow  # noqa: E402  (problems to stderr, never a modal box)
from tests.helpers import grid  # noqa: E402
from tests.integration.test_remote_fio import free_port, stop_group, wait_listening  # noqa: E402


def start_servers(n: int) -> list[tuple[str, int, subprocess.Popen]]:
    out = []
    for i in range(n):
        host = f"127.0.0.{2 + i}"
        port = free_port(host)
        proc = subprocess.Popen(["fio", f"--server={host},{port}"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        out.append((host, port, proc))
    for host, port, proc in out:
        wait_listening(host, port, proc, timeout=10)
    return out


def fio_own_iops(raw: str) -> float:
    doc = json.loads(raw[raw.index("{"):])
    jobs = doc.get("jobs") or doc.get("client_stats") or []  # a remote fio reports as its client prints
    return sum(j["read"]["iops"] + j["write"]["iops"] for j in jobs if j.get("jobname") != "All clients")


def run(hosts: int, workers: int, seconds: int, tmp: Path) -> dict:
    servers = start_servers(hosts)
    try:
        win = HeadlessWindow(None, persist=False, db_path=tmp / f"hosts-{hosts}.db")
        plan = grid(hosts, workers, 1)
        plan.specs[0].lines = [SpecLine(4096, 100, 70, 100, 0, 1, 4096, 0)]
        for m, (host, port, _p) in zip(plan.managers, servers, strict=True):
            m.host = f"{host}:{port}"
            for wi, w in enumerate(m.workers):
                w.targets = [Target(str(tmp / f"{m.name}-{wi}.tst"))]
        win.doc.replace(plan)
        win.resize(1280, 800)
        win.show()
        win.tabs.setCurrentWidget(win.results_tab)
        settle(0.3)
        choose_scope(win, "Each worker (all managers)")
        win.run_options = RunOptions(engine="null", run_time=seconds)
        probe = LatencyProbe()
        cpu0 = time.process_time()
        assert win.start_run(), "the run did not start"
        probe.start()
        end = time.monotonic() + seconds + 60
        while win.controller.running and time.monotonic() < end:
            APP.processEvents()
            time.sleep(0.001)
        probe.stop()
        cpu = time.process_time() - cpu0
        status = win.controller.last_status
        win.doc.dirty = False
        win.close()
        settle(0.2)
    finally:
        for _h, _p, proc in servers:
            stop_group(proc)
    out = {"hosts": hosts, "status": status, "cpu_s": cpu, "p50": pct(probe.lates, 50),
           "p99": pct(probe.lates, 99), "max": max(probe.lates, default=float("nan")),
           "own_p99": pct(probe.own, 99)}
    if os.environ.get("KEEP_DB"):
        import shutil
        shutil.copy(tmp / f"hosts-{hosts}.db", os.environ["KEEP_DB"])
    with open_store(tmp / f"hosts-{hosts}.db") as store:
        run_id = store.conn.execute("SELECT max(id) FROM runs").fetchone()[0]
        r = get_run(store, run_id, raw_output=True)
        step = r.steps[0]
        complete, equal, worst, counts, max_gap = 0, 0, 0.0, [], 0.0
        for m in r.managers:
            ts = [t for t, _m in step_samples(store, step.id, "manager", m.name, manager=m.name)]
            # every interval fio reported was stored: about one sample per second of fio's clock (a loaded
            # machine delays fio's own reports: the largest gap is shown)
            gaps = [b - a for a, b in zip(ts, ts[1:], strict=False)]
            counts.append(len(ts))
            max_gap = max([max_gap, *gaps])
            if ts and len(ts) >= round(ts[-1]) - 1:
                complete += 1
            stored = next((x.metrics.iops for x in step.results if x.level == "manager" and x.manager == m.name),
                          None)
            raw = step.outputs.get(m.name)
            own = fio_own_iops(raw.raw_output) if raw and raw.raw_output else float("nan")
            diff = abs(stored - own) / own if stored is not None and own else float("inf")
            worst = max(worst, diff)
            equal += diff <= 1e-3
        problems = [msg.text for msg in step.messages if msg.level != "info"]
        out.update(managers=len(r.managers), complete=complete, equal=equal, worst=worst, step=step.status,
                   samples=(min(counts, default=0), max(counts, default=0)), max_gap=max_gap, problems=problems)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", default="8,16,32")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--seconds", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fiometer-hosts-") as tmp:
        for n in [int(x) for x in args.hosts.split(",")]:
            r = run(n, args.workers, args.seconds, Path(tmp))
            ok = "OK" if r["p99"] < 50 and r["complete"] == r["equal"] == n else "MISSED"
            print(f"{n:3d} hosts x {args.workers} workers, {args.seconds} s, run {r['status']}: event loop lateness "
                  f"median {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms, max {r['max']:.0f} ms (GUI thread's own work "
                  f"p99 {r['own_p99']:.1f} ms); every interval stored for {r['complete']}/{n} managers "
                  f"({r['samples'][0]}-{r['samples'][1]} samples each, largest gap {r['max_gap']:.1f} s); final IOPS "
                  f"= server's own report for {r['equal']}/{n} (worst {r['worst'] * 100:.3f} %); "
                  f"process CPU {r['cpu_s']:.1f} s: {ok}", flush=True)
            for p in r["problems"][:5]:
                print(f"      step {r['step']}: {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
