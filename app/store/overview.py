"""Where each stored run ran, for the history list (one query for all runs instead of get_run per run,
which would read every step's fio output)."""

from __future__ import annotations

import json
from typing import Any

from .database import Store


def run_places(store: Store) -> dict[int, list[tuple[str, str]]]:
    """(manager name, where it ran) per run id, in the run's manager order. Where: the fio server's
    host:port; for a local manager the recording machine's host name ("this machine" if unknown); for an
    imported Iometer run the manager as Iometer named it."""
    out: dict[int, list[tuple[str, str]]] = {}
    hosts: dict[int, dict[str, Any]] = {}
    with store.read("listing where runs ran") as conn:
        for run_id, host_json in conn.execute("SELECT id, host_json FROM runs"):
            try:
                host = json.loads(host_json or "{}")
            except ValueError:
                host = {}
            hosts[run_id] = host if isinstance(host, dict) else {}
        rows = conn.execute("SELECT run_id, name, address FROM managers ORDER BY run_id, position").fetchall()
    for run_id, name, address in rows:
        host = hosts.get(run_id, {})
        if host.get("tool"):
            where = address or name
        elif address in ("", "local"):
            where = str(host.get("hostname") or "this machine")
        else:
            where = address
        out.setdefault(run_id, []).append((name, where))
    return out
