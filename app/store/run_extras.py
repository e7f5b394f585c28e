"""What is known about a run only once it has ended, kept in ``runs.host_json`` under a key of its own (no
migration: older runs simply lack the key): ``validity``, its validity notes (app.analysis.validity), and
``curve``, what a `fiometer curve` searched for and found (app.analysis.curve)."""

from __future__ import annotations

import json
from typing import Any

from app.store.database import Store
from app.store.records import Run

VALIDITY, CURVE = "validity", "curve"


def save_extra(store: Store, run_id: int, key: str, value: Any) -> None:
    with store.write(f"keeping the run's {key}") as conn:
        row = conn.execute("SELECT host_json FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            return
        try:
            host = json.loads(row[0] or "{}")
        except ValueError:
            host = {}
        if not isinstance(host, dict):
            host = {}
        host[key] = value
        conn.execute(
            "UPDATE runs SET host_json = ? WHERE id = ?", (json.dumps(host, ensure_ascii=False), run_id)
        )


def extra(run: Run, key: str) -> Any:
    """What was kept under ``key``, or None when the run was stored without it."""
    return run.host.get(key) if isinstance(run.host, dict) else None


def save_notes(store: Store, run_id: int, notes: list[dict[str, Any]]) -> None:
    save_extra(store, run_id, VALIDITY, notes)


def stored_notes(run: Run) -> list[dict[str, Any]] | None:
    """The validity notes kept with the run, or None when it was stored without them."""
    notes = extra(run, VALIDITY)
    return [n for n in notes if isinstance(n, dict)] if isinstance(notes, list) else None
