"""A run's validity notes (app.analysis.validity), kept in ``runs.host_json`` under ``validity``: a JSON
list of notes, written once when the run ends. No migration: older runs simply lack the key."""

from __future__ import annotations

import json
from typing import Any

from app.store.database import Store
from app.store.records import Run

KEY = "validity"


def save_notes(store: Store, run_id: int, notes: list[dict[str, Any]]) -> None:
    with store.write("keeping the run's validity notes") as conn:
        row = conn.execute("SELECT host_json FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            return
        try:
            host = json.loads(row[0] or "{}")
        except ValueError:
            host = {}
        if not isinstance(host, dict):
            host = {}
        host[KEY] = notes
        conn.execute("UPDATE runs SET host_json = ? WHERE id = ?", (json.dumps(host, ensure_ascii=False), run_id))


def stored_notes(run: Run) -> list[dict[str, Any]] | None:
    """The notes kept with the run, or None when it was stored without them."""
    notes = run.host.get(KEY) if isinstance(run.host, dict) else None
    return [n for n in notes if isinstance(n, dict)] if isinstance(notes, list) else None
