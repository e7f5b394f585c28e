"""Opening a database: upgrades with a backup, and plain-words refusals of files we must not touch."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from app.store import Recorder, StoreError, database, get_run, list_runs, open_store, step_samples
from app.store.database import check_store
from app.store.migrations import SCHEMA_VERSION
from app.store.schema import APPLICATION_ID, V1
from tests.unit.store_support import write_run

ROOT = Path(__file__).resolve().parents[2]


def _user_version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def _dump(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def _make_v1_file(path: Path) -> None:
    """A database as the first Fiometer store wrote it: the v1 DDL and one run with a sample."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for statement in V1:
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute(
        "INSERT INTO runs (id, uuid, name, status, started, ended, plan_json, plan_sha256) "
        "VALUES (1, 'u-1', 'old run', 'complete', '2025-01-02T03:04:05.000+00:00', "
        "'2025-01-02T03:05:05.000+00:00', '{}', 'h')"
    )
    conn.execute(
        "INSERT INTO steps (id, run_id, idx, started, status) "
        "VALUES (1, 1, 0, '2025-01-02T03:04:05.000+00:00', 'complete')"
    )
    conn.execute("INSERT INTO series (id, step_id, level, manager, key) VALUES (1, 1, 'all', NULL, 'ALL')")
    conn.execute(
        "INSERT INTO samples (series_id, t, i_read_ios, i_read_iops, w_read_ios) VALUES (1, 1.0, 5, 5.0, 5)"
    )
    conn.execute("COMMIT")
    conn.close()


def test_new_database_is_ours_and_current(tmp_path):
    path = tmp_path / "sub" / "dir" / "fiometer.db"
    open_store(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 2
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental: deleting runs can shrink it
    conn.close()
    assert not list(tmp_path.glob("**/*.bak-*"))


def test_v1_database_is_migrated_after_a_backup_copy(tmp_path):
    path = tmp_path / "fiometer.db"
    _make_v1_file(path)
    original = _dump(path)

    with open_store(path) as store:
        assert _user_version(path) == SCHEMA_VERSION
        run = get_run(store, 1)
        assert (run.name, run.status) == ("old run", "complete")
        ((t, m),) = step_samples(store, 1, "all", "ALL")
        assert (t, m.read_ios, m.read_iops, m.read_hist) == (1.0, 5, 5.0, {})
        new_run = write_run(Recorder(store), steps=1, intervals=1)  # and the new columns take data
        assert step_samples(store, new_run.steps[0].step_id, "all", "ALL")[0][1].read_hist

    backup = tmp_path / "fiometer.db.bak-v1"
    assert _dump(backup) == original
    assert _user_version(backup) == 1


def test_newer_database_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "fiometer.db"
    open_store(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.commit()
    conn.close()
    before = path.read_bytes()

    with pytest.raises(StoreError) as err:
        open_store(path)

    text = str(err.value)
    assert str(path) in text and "newer Fiometer" in text
    assert f"database version {SCHEMA_VERSION + 5}" in text and f"up to {SCHEMA_VERSION}" in text
    assert "Update Fiometer" in text
    assert path.read_bytes() == before and not list(tmp_path.glob("*.bak-*"))


def _populated(path: Path) -> None:
    with open_store(path) as store:
        write_run(Recorder(store), steps=2, intervals=20)


def _scribble_on_an_index(path: Path) -> None:
    """Zero the end of the series index's root page: the header still reads, only a check finds it."""
    conn = sqlite3.connect(path)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    (root,) = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'series_identity'").fetchone()
    conn.close()
    with open(path, "r+b") as f:
        f.seek(root * page_size - page_size // 4)
        f.write(bytes(page_size // 4))


def _abandon_a_run(path: Path) -> None:
    """Make the file's first run look as if its recording process died (a pid that has ended)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE runs SET status = 'running', owner_pid = ?, owner_host = ?, owner_token = 'gone' "
        "WHERE id = (SELECT min(id) FROM runs)",
        (proc.pid, socket.gethostname()),
    )
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    "damage",
    [
        "truncated",
        "garbage",
        "scribbled",
        "scribbled, then fiometer check",
        "scribbled, then its recorder died",
    ],
)
def test_damaged_file_is_copied_aside_and_explained(tmp_path, monkeypatch, damage):
    path = tmp_path / "fiometer.db"
    if damage == "truncated":
        _populated(path)
        os.truncate(path, path.stat().st_size * 6 // 10)
    elif damage == "garbage":
        path.write_bytes(b"not a database, just some bytes\n" * 300)
    else:
        _populated(path)
        if "died" in damage:
            _abandon_a_run(path)
        _scribble_on_an_index(path)
        assert _user_version(path) == SCHEMA_VERSION  # reading the header alone would not notice
    damaged = path.read_bytes()
    # The full check runs once per file per process, and this process wrote the file: forget that, as
    # a Fiometer started later would not know it.
    monkeypatch.setattr(database, "_checked_this_process", set())
    if damage == "scribbled":  # opening costs the same whatever the file holds: no full check for no reason
        open_store(path).close()
        assert not list(tmp_path.glob("fiometer.db.corrupt-*"))
        return

    with pytest.raises(StoreError) as err:
        if damage.endswith("fiometer check"):
            check_store(path)
        else:
            open_store(path)

    (copy,) = tmp_path.glob("fiometer.db.corrupt-*")
    assert copy.read_bytes() == damaged and path.read_bytes() == damaged
    text = str(err.value)
    assert f"The results database {path} is damaged" in text
    assert f"A copy of the damaged file was kept at {copy}" in text
    assert "move fiometer.db out of" in text and ".recover" in text
    shown_context = err.value.__context__ if not err.value.__suppress_context__ else None
    assert err.value.__cause__ is None and shown_context is None  # no SQLite traceback chained to it


def test_damage_reaches_the_user_as_a_message_not_a_traceback(tmp_path):
    """What a front end does with StoreError (print it) shows no Python internals."""
    path = tmp_path / "fiometer.db"
    path.write_bytes(os.urandom(8192))
    code = (
        "import sys\nfrom app.store import open_store, StoreError\n"
        "try:\n    open_store(sys.argv[1])\nexcept StoreError as e:\n    print(e, file=sys.stderr); sys.exit(2)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert out.returncode == 2, out.stderr
    assert "is damaged" in out.stderr and "Traceback" not in out.stderr


def test_another_programs_sqlite_file_is_refused(tmp_path):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE photos (id INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not a Fiometer results database"):
        open_store(path)
    assert _user_version(path) == 0


def test_a_folder_that_cannot_be_made_is_explained(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot create the folder") as err:
        open_store(blocker / "fiometer.db")
    assert str(blocker) in str(err.value)


def test_a_missing_run_is_a_store_error_naming_the_file(tmp_path):
    with open_store(tmp_path / "f.db") as store, pytest.raises(StoreError, match="no run 42"):
        get_run(store, 42)
    with open_store(tmp_path / "f.db") as store:
        assert list_runs(store) == []


def test_fiometer_check_reads_every_page(tmp_path):
    path = tmp_path / "fiometer.db"
    _populated(path)
    run = [sys.executable, "-m", "app.cli", "--db", str(path), "check"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ok = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    assert ok.returncode == 0 and "is sound" in ok.stdout, ok.stderr
    _scribble_on_an_index(path)
    bad = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    assert bad.returncode != 0 and "is damaged" in bad.stderr and "Traceback" not in bad.stderr


def test_checkpoints_are_fiometers_own_and_keep_the_log_bounded(tmp_path, monkeypatch):
    """No automatic (passive) checkpoints, which can lose a commit to another process's WAL reset in
    SQLite < 3.51.3; our RESTART checkpoints after writes keep the log near its threshold instead."""
    monkeypatch.setattr(database, "CHECKPOINT_BYTES", 256 << 10)
    path = tmp_path / "fiometer.db"
    with open_store(path) as store:
        assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        rec = Recorder(store)
        runs = [write_run(rec, seed=i, steps=2, intervals=40) for i in range(3)]
        wal = path.with_name(path.name + "-wal")
        assert wal.stat().st_size < 4 * database.CHECKPOINT_BYTES, "the log grew without checkpoints"
    with open_store(path) as store:
        assert [r.id for r in list_runs(store)] == sorted((r.run_id for r in runs), reverse=True)
        assert {r.status for r in list_runs(store)} == {"complete"}
