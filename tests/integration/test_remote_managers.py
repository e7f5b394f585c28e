"""`fiometer run` with two managers on two real `fio --server` processes (127.0.0.2 and 127.0.0.3)."""

import re
import shutil
import socket
import subprocess
import sys
import time

import pytest

from app.model import planfile
from app.model.plan import SpecLine, Target
from app.store.database import open_store
from app.store.queries import get_run
from tests.fio_servers import protocols_of, server_banner, server_fio, stop_group
from tests.helpers import grid

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")]


def free_port(host):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@pytest.fixture
def servers():
    procs, addrs = [], []
    for host in ("127.0.0.2", "127.0.0.3"):
        port = free_port(host)
        procs.append(
            subprocess.Popen(
                [server_fio(), f"--server={host},{port}"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )
        addrs.append(f"{host}:{port}")
    for addr in addrs:  # wait until each listens
        host, port = addr.split(":")
        for _ in range(50):
            with socket.socket() as s:
                if s.connect_ex((host, int(port))) == 0:
                    break
            time.sleep(0.1)
    yield addrs
    for p in procs:  # the whole tree: a job process left behind would run on
        stop_group(p)


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True, timeout=120
    )


def two_manager_plan(tmp_path):
    plan = grid(2, 1, 1, qd=8)
    plan.specs[0].lines = [SpecLine(4096, 100, 70, 100, 0, 1, 4096, 0)]
    for m in plan.managers:
        m.host = None
        m.workers[0].targets = [Target(str(tmp_path / f"{m.name}.tst"))]
    path = tmp_path / "two.json"
    planfile.save(plan, path)
    return path


def test_two_remote_managers_run_store_and_export(tmp_path, servers):
    db = tmp_path / "r.db"
    out = cli(
        "--db",
        db,
        "run",
        two_manager_plan(tmp_path),
        "--manager",
        f"M1={servers[0]}",
        "--manager",
        f"M2={servers[1]}",
        "--run-time",
        "3",
        "--engine",
        "null",
    )
    assert out.returncode == 0, out.stderr + out.stdout
    version = server_banner().removeprefix("fio-")
    assert f"M1 on {servers[0]} (fio {version})" in out.stdout
    live = [
        ln for ln in out.stdout.splitlines() if ln.strip().startswith("[1/1") and "M1:" in ln and "M2:" in ln
    ]
    assert live, out.stdout  # live numbers of both managers while the step runs
    csv = tmp_path / "r.csv"
    assert cli("--db", db, "export", "1", "--iometer-csv", csv).returncode == 0
    rows = [r.split(",") for r in csv.read_text(encoding="cp1252").splitlines() if r.startswith("MANAGER,")]
    assert [r[1] for r in rows] == ["M1", "M2"] and all(float(r[6]) > 0 for r in rows)
    # each remote host as its fio server described itself in the probe, stored with the run
    with open_store(db) as store:
        run = get_run(store, 1)
    for name in ("M1", "M2"):
        env = run.host["managers"][name]
        assert env["hostname"] == socket.gethostname() and env["cpus"] >= 1 and env["fio_version"] == version
        assert "kernel" not in env  # nothing the probe does not tell
    assert all("environment" not in t.details for t in run.targets)  # a remote file system is not looked at


def test_unmapped_second_manager_is_refused_by_name(tmp_path, servers):
    out = cli("run", two_manager_plan(tmp_path), "--manager", f"M1={servers[0]}", "--run-time", "1")
    assert out.returncode == 2
    assert "managers without a host: 'M2'" in out.stderr and "--manager NAME=HOST[:PORT]" in out.stderr


def test_probe_and_closed_port(servers):
    out = cli("probe", servers[0])
    banner = server_banner()
    found = re.search(rf"{re.escape(banner)} \(protocol (\d+)\)", out.stdout)
    assert out.returncode == 0 and found and int(found[1]) in protocols_of(banner), out.stdout
    port = free_port("127.0.0.2")
    out = cli("probe", f"127.0.0.2:{port}")
    assert out.returncode == 2 and "nothing is listening" in out.stderr and "Traceback" not in out.stderr
