"""The results database failing during a run (disk full, read-only, locked): one clear message, fio
ended, the run kept as far as it got; `runs` and `show` still work on a full disk."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import time

import pytest

from app.cli.common import EXIT_STORE
from app.model import planfile
from app.model.plan import LOCAL, Target
from app.store import get_run, list_runs, open_store
from tests.helpers import grid

pytestmark = pytest.mark.fio


def _plan(tmp_path, targets: int = 16):
    plan = grid(1, 4, targets // 4)
    plan.managers[0].host = LOCAL
    for wi, w in enumerate(plan.managers[0].workers):
        w.targets = [Target(str(tmp_path / f"w{wi}t{t}.tst")) for t in range(len(w.targets))]
    path = tmp_path / "plan.json"
    planfile.save(plan, path)
    return path


def _cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=timeout
    )


def _fill(folder, leave: int) -> None:
    """Fill the file system of ``folder`` until only ``leave`` bytes are free."""
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    with open(folder / "filler", "wb") as f:
        f.write(b"\0" * max(free - leave, 0))


def test_disk_full_during_a_run_ends_it_in_one_message_and_keeps_the_run(tmp_path, small_fs):
    db = small_fs / "results.db"
    open_store(db).close()
    _fill(small_fs, 400 << 10)
    t0 = time.monotonic()
    out = _cli(
        "run",
        str(_plan(tmp_path)),
        "--engine",
        "null",
        "--run-time",
        "120",
        "--test-file-size",
        "1M",
        "--db",
        str(db),
    )
    text = out.stdout + out.stderr
    assert out.returncode == EXIT_STORE, text
    assert time.monotonic() - t0 < 100  # ended at the fault, not after its 120 s
    assert "Traceback" not in text and "internal error" not in text
    (message,) = [ln for ln in out.stderr.splitlines() if ln.startswith("fiometer:")]
    assert "the results database failed during the run, so the run was ended" in message
    assert "is full" in message
    assert f"in {db} keeps what was recorded before it" in out.stderr

    # the disk is still full: listing and showing still work
    listed = _cli("runs", "--db", str(db))
    assert listed.returncode == 0, listed.stderr
    assert "Traceback" not in listed.stderr and " 1 " in listed.stdout
    shown = _cli("show", "1", "--db", str(db))
    assert shown.returncode == 0, shown.stderr
    assert "Run 1:" in shown.stdout

    (small_fs / "filler").unlink()
    with open_store(db) as store:
        (summary,) = list_runs(store)
        run = get_run(store, summary.id)
    assert run.status in ("failed", "interrupted")  # never "complete", never left "running"
    assert run.steps and run.steps[0].started


def test_runs_and_show_work_on_a_full_disk_with_a_closed_database(tmp_path, small_fs):
    """A cleanly closed database has no shared-memory file; SQLite cannot make one on a full disk."""
    db = small_fs / "results.db"
    assert (
        _cli(
            "run",
            str(_plan(tmp_path, 4)),
            "--engine",
            "null",
            "--run-time",
            "1",
            "--test-file-size",
            "1M",
            "--db",
            str(db),
        ).returncode
        == 0
    )
    assert not (small_fs / "results.db-shm").exists()
    _fill(small_fs, 0)
    for args in (("runs",), ("show", "1"), ("runs", "--json")):
        out = _cli(*args, "--db", str(db))
        assert out.returncode == 0, out.stderr
        assert "Traceback" not in out.stderr
    assert "shown read-only" in _cli("runs", "--db", str(db)).stderr
    assert "complete" in _cli("show", "1", "--db", str(db)).stdout


def test_read_only_database_refuses_the_run_before_fio_and_still_lists(tmp_path, small_fs):
    db = small_fs / "results.db"
    assert (
        _cli(
            "run",
            str(_plan(tmp_path, 4)),
            "--engine",
            "null",
            "--run-time",
            "1",
            "--test-file-size",
            "1M",
            "--db",
            str(db),
        ).returncode
        == 0
    )
    assert subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], capture_output=True).returncode == 0
    out = _cli(
        "run",
        str(_plan(tmp_path, 4)),
        "--engine",
        "null",
        "--run-time",
        "1",
        "--test-file-size",
        "1M",
        "--db",
        str(db),
    )
    assert out.returncode == EXIT_STORE, out.stdout + out.stderr
    assert out.stderr.count("fiometer:") == 1 and "Traceback" not in out.stderr
    assert "Running" not in out.stdout  # refused before fio started
    listed = _cli("runs", "--db", str(db))
    assert listed.returncode == 0 and "complete" in listed.stdout, listed.stderr


def test_database_locked_during_a_run_ends_it_in_one_message(tmp_path):
    db = tmp_path / "results.db"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app.cli",
            "run",
            str(_plan(tmp_path, 4)),
            "--engine",
            "null",
            "--run-time",
            "120",
            "--test-file-size",
            "1M",
            "--db",
            str(db),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lock = None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "IOPS" in line:
                break
        lock = sqlite3.connect(db, isolation_level=None, timeout=30)
        lock.execute("BEGIN EXCLUSIVE")  # another program holds the file past Fiometer's 15 s wait
        out, err = proc.communicate(timeout=100)
    finally:
        if lock is not None:
            with contextlib.suppress(sqlite3.Error):
                lock.execute("ROLLBACK")
            lock.close()
        with contextlib.suppress(OSError):
            proc.kill()
    assert proc.returncode == EXIT_STORE, out + err
    assert "Traceback" not in err
    (message,) = [ln for ln in err.splitlines() if ln.startswith("fiometer:")]
    assert "stayed locked by another program" in message
    with open_store(db) as store:
        (summary,) = list_runs(store)
        run = get_run(store, summary.id)
    assert run.status in ("failed", "interrupted") and run.steps  # never "complete", never left "running"
