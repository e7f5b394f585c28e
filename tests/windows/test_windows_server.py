"""Linux Fiometer drives a Windows `fio --server` (fio.exe under Wine on 127.0.0.1)."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.fio_servers import free_port, wait_listening
from tests.windows.conftest import fiometer
from tests.windows.test_windows_local import VMWARE


@pytest.fixture
def windows_server(wine_fio):
    cmd, env = wine_fio
    port = free_port("127.0.0.1")
    proc = subprocess.Popen(
        [*cmd, f"--server=ip:127.0.0.1,{port}"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_listening("127.0.0.1", port, proc, timeout=60)  # the first Wine start of a session is slow
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def test_linux_fiometer_drives_a_windows_fio_server(windows_server: str, wine_fio, tmp_path: Path) -> None:
    probe = fiometer("probe", windows_server)
    assert probe.returncode == 0, probe.stderr
    assert "Windows" in probe.stdout, probe.stdout
    db = tmp_path / "r.db"
    name = f"fiometer-from-linux-{uuid.uuid4().hex[:8]}.tst"  # new each time: the Wine prefix is kept
    target = f"C:\\users\\Public\\{name}"
    try:
        run = fiometer(
            "run",
            str(VMWARE),
            "--manager",
            f"PB-W2K3-04={windows_server}",
            "--map",
            f"C:={target}",
            "--run-time",
            "1",
            "--test-file-size",
            "8M",
            "--db",
            str(db),
            "--allow-unverified-writes",  # a plain fio --server's files cannot be examined: armed, as a user must
            "PB-W2K3-04",
        )
    finally:
        _cmd, env = wine_fio
        if env.get("WINEPREFIX"):
            (Path(env["WINEPREFIX"]) / "drive_c" / "users" / "Public" / name).unlink(missing_ok=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "4 of 4 steps ran (4 complete)" in run.stdout
    with contextlib.closing(sqlite3.connect(db)) as c:
        assert {s for (s,) in c.execute("SELECT status FROM steps")} == {"complete"}
        assert c.execute("SELECT count(*) FROM steps").fetchone() == (4,)
