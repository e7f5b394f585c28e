"""What is known about a run only once it has ended, kept in ``runs.host_json`` under a key of its own (no
migration: older runs simply lack the key): ``validity``, its validity notes (app.analysis.validity), and
``curve``, what a `fiometer curve` searched for and found (app.analysis.curve)."""

from __future__ import annotations

import json
from contextlib import suppress
from sqlite3 import Error as SqliteError
from typing import Any

from app.store.database import BUSY_TIMEOUT_S, Store
from app.store.records import Run

VALIDITY, CURVE, PTS = "validity", "curve", "pts"  # pts: a `fiometer pts` run (app.analysis.pts)
KEEP_WAIT_MS = 250  # a write made while a run is opened waits no longer than this for another writer


def save_extra(store: Store, run_id: int, key: str, value: Any, *, if_absent: bool = False) -> Any:
    """Keep ``value`` under ``key``; returns what is kept there now (with ``if_absent``, a value already
    kept stays and is returned), None when the run is gone."""
    with store.write(f"keeping the run's {key}") as conn:
        row = conn.execute("SELECT host_json FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        try:
            host = json.loads(row[0] or "{}")
        except ValueError:
            host = {}
        if not isinstance(host, dict):
            host = {}
        if if_absent and host.get(key) is not None:
            return host[key]
        host[key] = value
        conn.execute(
            "UPDATE runs SET host_json = ? WHERE id = ?", (json.dumps(host, ensure_ascii=False), run_id)
        )
    return value


def extra(run: Run, key: str) -> Any:
    """What was kept under ``key``, or None when the run was stored without it."""
    return run.host.get(key) if isinstance(run.host, dict) else None


def save_notes(store: Store, run_id: int, notes: list[dict[str, Any]]) -> None:
    save_extra(store, run_id, VALIDITY, notes)


def keep_notes_if_absent(
    store: Store, run_id: int, notes: list[dict[str, Any]]
) -> list[dict[str, Any]] | None:
    """Keep notes computed for a run stored without them, unless notes were kept meanwhile; returns the
    notes kept now (None: the run is gone). Waits at most KEEP_WAIT_MS for another writer (a recording
    run) and raises StoreError when the database stays busy or cannot be written: the caller shows the
    notes all the same."""
    conn = store.conn
    conn.execute(f"PRAGMA busy_timeout = {KEEP_WAIT_MS}")
    try:
        kept = save_extra(store, run_id, VALIDITY, notes, if_absent=True)
    finally:
        with suppress(SqliteError):
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    return [n for n in kept if isinstance(n, dict)] if isinstance(kept, list) else None


def stored_notes(run: Run) -> list[dict[str, Any]] | None:
    """The validity notes kept with the run, or None when it was stored without them."""
    notes = extra(run, VALIDITY)
    return [n for n in notes if isinstance(n, dict)] if isinstance(notes, list) else None
