"""Iometer's network workers on fio's TCP engine between two real `fio --server` managers on loopback:
the server worker on one manager, its client on the partner, bytes sent equal to bytes received."""

import shutil
import subprocess
import sys

import pytest

from app.model import plan as P
from app.model import planfile
from app.store.database import open_store
from app.store.queries import get_run
from tests.integration.test_remote_managers import servers  # noqa: F401 (fixture)

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")]


def cli(*args):
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.skip(reason="unreliable: when the receiving end closes first, fio's TCP sender can spin without "
                         "reporting, and the step watch then fails its manager (passed in CI once, fails about "
                         "half the time alone); open in issue 18 — the job text is covered by test_network_jobs")
def test_network_worker_sends_to_its_partner_manager(tmp_path, servers):  # noqa: F811
    spec = P.AccessSpec("64k send", [P.SpecLine(65536, 100, 0, 0, 0, 1, 0, 0)])  # 0 % reads: the server sends
    server = P.Worker("Net 1", kind="network_tcp", specs=[spec.name],
                      targets=[P.Target("NIC on B", kind="network", partner_manager="B")])
    plan = P.Plan("net", P.TestSetup(run_time=3), [spec], [P.Manager("A", None, workers=[server]),
                                                           P.Manager("B", None)])
    path = tmp_path / "net.json"
    planfile.save(plan, path)
    db = tmp_path / "r.db"
    out = cli("--db", db, "run", path, "--manager", f"A={servers[0]}", "--manager", f"B={servers[1]}")
    assert out.returncode == 0, out.stderr + out.stdout
    store = open_store(db)
    try:
        (step,) = get_run(store, 1).steps
    finally:
        store.close()
    rows = {r.key: r.metrics for r in step.results if r.level == "manager"}
    sent, received = rows["A"], rows["B"]
    assert sent.write_bytes > 0 and sent.read_bytes == 0
    assert received.read_bytes > 0 and received.write_bytes == 0
    # TCP delivers what was sent; the two ends stop within a moment of each other
    assert abs(received.read_bytes - sent.write_bytes) <= 0.05 * sent.write_bytes
    workers = {r.key for r in step.results if r.level == "worker"}
    assert workers == {"w1", "n1.w1"}  # the server worker on A and Iometer's client worker on B
