"""Each subsystem says what it did in the log file (issue 41.5): the store its migrations, faults and the runs it
found abandoned; the window the actions the user took and the answers to its questions. (The recording and the
run session are logged from a real run: tests/integration/test_run_logs.py.)"""

from __future__ import annotations

import logging
import socket
import sqlite3

import pytest

from app.store import StoreError, database, open_store
from app.store.migrations import SCHEMA_VERSION
from tests.unit.test_store_open import _make_v1_file, _populated

NO_SUCH_PID = 2**22 + 7  # above Linux's largest pid_max; no Windows pid either (multiples of 4)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def said(self, logger: str, level: int = logging.INFO) -> list[str]:
        return [r.getMessage() for r in self.records if r.name == logger and r.levelno >= level]


@pytest.fixture
def logged():
    """What the ``app`` loggers said during the test (whether or not the log file is set up)."""
    handler, root = _Records(), logging.getLogger("app")
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def test_a_migration_is_logged_with_its_versions_and_the_copy(tmp_path, logged):
    path = tmp_path / "fiometer.db"
    _make_v1_file(path)
    open_store(path).close()
    (said,) = logged.said("app.store.database")
    assert said == (
        f"results database {path} migrated from database version 1 to {SCHEMA_VERSION} "
        f"(the copy as it was: {path}.bak-v1)"
    )
    open_store(path).close()  # a current file: nothing to say
    assert len(logged.said("app.store.database")) == 1


def test_a_damaged_file_is_logged_as_an_error_naming_the_copy(tmp_path, logged, monkeypatch):
    path = tmp_path / "fiometer.db"
    path.write_bytes(b"not a database, just some bytes\n" * 300)
    monkeypatch.setattr(database, "_checked_this_process", set())
    with pytest.raises(StoreError):
        open_store(path)
    (said,) = logged.said("app.store.database", logging.ERROR)
    assert said.startswith(f"results database {path} is damaged (")
    assert "A copy of the damaged file was kept at" in said and ".corrupt-" in said


def test_an_abandoned_run_is_logged_as_it_is_marked_interrupted(tmp_path, logged):
    path = tmp_path / "fiometer.db"
    _populated(path)
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE runs SET status = 'running', owner_pid = ?, owner_host = ?, owner_token = 'gone' "
        "WHERE id = (SELECT min(id) FROM runs)",
        (NO_SUCH_PID, socket.gethostname()),
    )
    conn.commit()
    conn.close()
    open_store(path).close()
    assert logged.said("app.store.abandoned") == [
        f"run 1 of {path} marked interrupted: the process recording it is gone"
    ]


def test_a_store_fault_is_logged_as_it_is_explained(tmp_path, logged):
    err = sqlite3.OperationalError("database or disk is full")
    err.sqlite_errorcode = 13  # SQLITE_FULL
    text = str(database.explain(err, tmp_path / "r.db", "saving samples"))
    assert "is full" in text
    assert logged.said("app.store.database", logging.WARNING) == [
        "results database fault while saving samples: database or disk is full (SQLite error code 13)"
    ]
