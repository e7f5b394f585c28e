"""Iometer's network workers on fio's TCP engine between two real `fio --server` managers on loopback:
the server worker on one manager, its client on the partner, bytes sent equal to bytes received (within
fio's counting of pieced transfers), and no fio job process left running on either server afterwards."""

import shutil
import signal
import subprocess
import sys
import time

import pytest

from app.cli.common import EXIT_STOPPED
from app.model import plan as P
from app.model import planfile
from app.store.database import open_store
from app.store.queries import get_run
from tests.fio_servers import job_processes, server_processes, stop_group

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")]


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True, timeout=120
    )


def _net_plan(tmp_path, reads: int, run_time: int):
    spec = P.AccessSpec("64k", [P.SpecLine(65536, 100, reads, 0, 0, 1, 0, 0)])
    server = P.Worker(
        "Net 1",
        kind="network_tcp",
        specs=[spec.name],
        targets=[P.Target("NIC on B", kind="network", partner_manager="B")],
    )
    plan = P.Plan(
        "net",
        P.TestSetup(run_time=run_time),
        [spec],
        [P.Manager("A", None, workers=[server]), P.Manager("B", None)],
    )
    path = tmp_path / "net.json"
    planfile.save(plan, path)
    return path


def _left_running(procs, wait_s: float = 5.0, of=job_processes) -> list[int]:
    """fio job processes (``of``: or any process) of the servers still alive after ``wait_s`` (a server
    reports a run's end once its jobs exit, so normally none at once)."""
    deadline = time.monotonic() + wait_s
    while True:
        left = [pid for p in procs for pid in of(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def _stopped(procs) -> list[int]:
    """Stop the servers as the fixture does; what is left of them (nothing, or the test leaks fio)."""
    for p in procs:
        stop_group(p)
    return _left_running(procs, of=server_processes)


@pytest.mark.parametrize("reads", [0, 100], ids=["server-sends", "server-receives"])
def test_network_worker_moves_data_to_its_partner_manager(tmp_path, fio_server, reads):
    path = _net_plan(tmp_path, reads, run_time=3)
    (ha, pa, proc_a), (hb, pb, proc_b) = fio_server("127.0.0.2"), fio_server("127.0.0.3")
    db = tmp_path / "r.db"
    out = cli("--db", db, "run", path, "--manager", f"A={ha}:{pa}", "--manager", f"B={hb}:{pb}")
    assert out.returncode == 0, out.stderr + out.stdout
    # the sender ended first and closed; the receiver followed: nothing spins on, on either manager
    assert _left_running([proc_a, proc_b]) == []
    store = open_store(db)
    try:
        run = get_run(store, 1)
        (step,) = run.steps
    finally:
        store.close()
    rows = {r.key: r.metrics for r in step.results if r.level == "manager"}
    sender, receiver = (rows["A"], rows["B"]) if reads == 0 else (rows["B"], rows["A"])
    assert sender.write_bytes > 0 and sender.read_bytes == 0
    assert receiver.read_bytes > 0 and receiver.write_bytes == 0
    # TCP delivers what was sent; fio counts a transfer that arrived in pieces only by its last piece,
    # so the receiver's count is lower, never higher: seen from 37 % (a busy suite) to 100 % of the sent
    assert 0 < receiver.read_bytes <= sender.write_bytes
    assert sender.ios > 0 and sender.lat_mean_ms > 0 and receiver.lat_mean_ms > 0 and sender.mbps > 0
    assert _stopped([proc_a, proc_b]) == []
    workers = {r.key for r in step.results if r.level == "worker"}
    assert workers == {"w1", "n1.w1"}  # the server worker on A and Iometer's client worker on B
    names = {(w.manager, w.key): w.name for w in run.workers}
    assert names[("A", "w1")] == "Net 1" and names[("B", "n1.w1")] == "[Net 1]"  # as History names them


@pytest.mark.parametrize("reads", [0, 100], ids=["server-sends", "server-receives"])
def test_stop_mid_step_ends_the_sender_first_and_both_managers_well(tmp_path, fio_server, reads):
    """Stop ends the sending manager first and its receiver after it: a receiver stopped first would leave
    fio's sender looping on its dead connection, and its manager would fail."""
    path = _net_plan(tmp_path, reads, run_time=60)
    (ha, pa, proc_a), (hb, pb, proc_b) = fio_server("127.0.0.2"), fio_server("127.0.0.3")
    db = tmp_path / "r.db"
    cmd = [
        sys.executable,
        "-m",
        "app.cli",
        "--db",
        str(db),
        "run",
        str(path),
        "--manager",
        f"A={ha}:{pa}",
        "--manager",
        f"B={hb}:{pb}",
    ]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        try:
            seen = []
            for line in proc.stdout:  # wait until both managers report numbers, then press Stop (Ctrl-C)
                seen.append(line)
                if "A:" in line and "B:" in line and "IOPS" in line:
                    break
            time.sleep(1)
            proc.send_signal(signal.SIGINT)
            out = "".join(seen) + proc.stdout.read()
            assert proc.wait(60) == EXIT_STOPPED, out
        finally:
            if proc.poll() is None:
                proc.kill()
    assert "failed" not in out and "stopped answering" not in out, out
    assert _left_running([proc_a, proc_b]) == [] and _stopped([proc_a, proc_b]) == []
    store = open_store(db)
    try:
        (step,) = get_run(store, 1).steps
    finally:
        store.close()
    rows = {r.key: r.metrics for r in step.results if r.level == "manager"}
    assert rows["A"].bytes > 0 and rows["B"].bytes > 0
