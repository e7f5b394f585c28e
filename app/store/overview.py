"""Where each stored run ran and the load it put on, for the history list (one query for all runs instead
of get_run per run, which would read every step's fio output)."""

from __future__ import annotations

import json
from dataclasses import dataclass
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


@dataclass(frozen=True)
class RunLoad:
    """The load a run's steps put on: queue depths and active workers per step, from/to over its steps."""

    qd_min: int | None
    qd_max: int | None
    workers_min: int
    workers_max: int


_LOAD_SQL = """
SELECT s.run_id, MIN(s.queue_depth), MAX(s.queue_depth), SUM(s.queue_depth IS NULL),
       MIN(json_array_length(s.active_workers_json)), MAX(json_array_length(s.active_workers_json)),
       w.lo, w.hi
FROM steps s
LEFT JOIN (SELECT run_id, MIN(json_extract(details_json, '$.queue_depth')) AS lo,
                  MAX(json_extract(details_json, '$.queue_depth')) AS hi
           FROM workers GROUP BY run_id) w ON w.run_id = s.run_id
GROUP BY s.run_id
"""


def run_loads(store: Store) -> dict[int, RunLoad]:
    """Queue depth range and worker count range per run id, in one grouped query (the history list shows
    hundreds of runs). A step stores one queue depth when all its workers share it; where a step's workers
    differ (NULL), the range takes in the depths configured on the run's workers."""
    out: dict[int, RunLoad] = {}
    with store.read("listing the load of each run") as conn:
        rows = conn.execute(_LOAD_SQL).fetchall()
    for run_id, qd_lo, qd_hi, mixed, w_lo, w_hi, wk_lo, wk_hi in rows:
        depths = [int(v) for v in (qd_lo, qd_hi) if v is not None]
        if mixed:
            depths += [int(v) for v in (wk_lo, wk_hi) if isinstance(v, int | float)]
        out[run_id] = RunLoad(
            min(depths, default=None), max(depths, default=None), int(w_lo or 0), int(w_hi or 0)
        )
    return out
