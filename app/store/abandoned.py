"""Runs whose recording process is gone: a run still marked ``running`` whose owner
(``app.process_owner``) is gone was cut short, and becomes ``interrupted``."""

from __future__ import annotations

import logging
import sqlite3
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from app.process_owner import ProcessOwner, owner_is_gone

from .blocks import last_t_sql, seal_step
from .errors import StoreError
from .timestamps import iso, utc_now

if TYPE_CHECKING:
    from .database import Store

log = logging.getLogger(__name__)


def abandoned_runs(store: Store) -> list[int]:
    """Runs still ``running`` whose recording process is gone (reads only)."""
    rows = store.conn.execute(
        "SELECT id, owner_pid, owner_host, owner_token FROM runs WHERE status = 'running'"
    ).fetchall()
    return [
        run_id
        for run_id, pid, host, token in rows
        if pid is not None and owner_is_gone(ProcessOwner(pid, host or "", token))
    ]


def close_abandoned_runs(store: Store) -> list[int]:
    """Mark ``interrupted`` every run still ``running`` whose recording process is gone; their ids.

    The end time is the last moment known to have been recorded (a step's end or its last sample).
    """
    gone = abandoned_runs(store)
    closed = []
    for run_id in gone:
        try:
            if _close_abandoned(store, run_id):
                closed.append(run_id)
                log.info(
                    "run %d of %s marked interrupted: the process recording it is gone", run_id, store.path
                )
        except StoreError as e:  # housekeeping only: a full disk or a read-only file must not stop reading
            log.warning("abandoned runs of %s left as they are: %s", store.path, e)
            break
    return closed


def _close_abandoned(store: Store, run_id: int) -> bool:
    with store.write("marking an abandoned run as interrupted") as conn:
        ended = _last_recorded(conn, run_id)
        if conn.execute(
            "UPDATE runs SET status = 'interrupted', ended = ? WHERE id = ? AND status = 'running'",
            (ended, run_id),
        ).rowcount:
            for (step_id,) in conn.execute(
                "UPDATE steps SET status = 'interrupted', ended = ? "
                "WHERE run_id = ? AND status = 'running' RETURNING id",
                (ended, run_id),
            ).fetchall():
                seal_step(conn, step_id)  # what was recorded, as a finished step keeps it
            pid, host = conn.execute(
                "SELECT owner_pid, owner_host FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            conn.execute(
                "INSERT INTO messages (run_id, at, level, text) VALUES (?, ?, 'error', ?)",
                (
                    run_id,
                    utc_now(),
                    f"The run was cut short: the Fiometer process recording it "
                    f"(pid {pid} on {host}) ended without finishing it.",
                ),
            )
            return True
    return False


def _last_recorded(conn: sqlite3.Connection, run_id: int) -> str:
    moments = [conn.execute("SELECT started FROM runs WHERE id = ?", (run_id,)).fetchone()[0]]
    for started, ended, last_t in conn.execute(
        f"SELECT started, ended, (SELECT max({last_t_sql('series.id')}) FROM series "
        "WHERE series.step_id = steps.id) FROM steps WHERE run_id = ?",
        (run_id,),
    ):
        moments.append(ended or started)
        if last_t is not None:
            moments.append(iso(datetime.fromisoformat(started) + timedelta(seconds=last_t)))
    return str(max(moments, key=datetime.fromisoformat))
