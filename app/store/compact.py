"""The compact store (database version 3): series that repeat another's samples point at it.

A worker with one target reports the target's numbers again, and a run with one manager reports that
manager's numbers again as ALL; stored twice they were half of a database. Such a series is kept in
``series`` (its final results too) with ``same_as`` naming the series whose samples it shares.
The recorder decides as samples arrive (``parent_of`` and ``same_values``); ``migrate_to_v3`` does the
same for a version 2 database, compares every sample before sharing, and recodes its histograms and
fio outputs.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from .codec import hists_p99_ns, pack_text, recode_hist
from .peaks import keep_peaks_of_rows
from .schema import SAMPLE_VALUE_COLUMNS, V3


def parent_of(
    level: str,
    manager: str | None,
    key: str,
    levels_in_batch: Mapping[tuple[Any, ...], list[str]],
    target_worker: Mapping[tuple[str | None, str], str],
) -> tuple[str, str | None, str] | None:
    """The (level, manager, key) whose samples a series may share: a target's worker when that worker
    has no other target in the batch, ALL's manager when the batch has one manager; else None.
    ``levels_in_batch`` maps ("target", manager, worker) to its target keys and ("manager",) to the
    manager names of the batch."""
    if level == "all":
        managers = levels_in_batch.get(("manager",), [])
        return ("manager", managers[0], managers[0]) if len(managers) == 1 else None
    if level == "target":
        worker = target_worker.get((manager, key))
        if worker is not None and levels_in_batch.get(("target", manager, worker), []) == [key]:
            return ("worker", manager, worker)
    return None


def _identical(conn: sqlite3.Connection, a: int, b: int) -> bool:
    """Every sample of series a equals series b's at the same time (histograms included)."""
    cols = (*SAMPLE_VALUE_COLUMNS, "i_read_hist", "i_write_hist")
    differs = " OR ".join(f"a.{c} IS NOT b.{c}" for c in cols)
    same_count = conn.execute(
        "SELECT (SELECT count(*) FROM samples WHERE series_id = ?) = "
        "(SELECT count(*) FROM samples WHERE series_id = ?)",
        (a, b),
    ).fetchone()[0]
    if not same_count:
        return False
    return bool(
        conn.execute(
            f"SELECT NOT EXISTS (SELECT 1 FROM samples a LEFT JOIN samples b ON b.series_id = ? AND b.t = a.t "
            f"WHERE a.series_id = ? AND (b.t IS NULL OR {differs}))",
            (b, a),
        ).fetchone()[0]
        == 1
    )


def find_shared(conn: sqlite3.Connection) -> dict[int, int]:
    """Version 2 series whose samples are all identical to their parent's: series id -> parent id."""
    shared: dict[int, int] = {}
    for step_id, run_id in conn.execute("SELECT id, run_id FROM steps").fetchall():
        target_worker = {
            (m, k): w
            for m, k, w in conn.execute(
                "SELECT manager, key, worker FROM targets WHERE run_id = ?", (run_id,)
            )
        }
        ids: dict[tuple[str, str | None, str], int] = {}
        batch: dict[tuple[Any, ...], list[str]] = {}
        for sid, level, manager, key in conn.execute(
            "SELECT id, level, manager, key FROM series WHERE step_id = ? ORDER BY id", (step_id,)
        ):
            ids[(level, manager, key)] = sid
            if level == "manager":
                batch.setdefault(("manager",), []).append(key)
            elif level == "target" and (manager, key) in target_worker:
                batch.setdefault(("target", manager, target_worker[(manager, key)]), []).append(key)
        for (level, manager, key), sid in ids.items():
            parent = parent_of(level, manager, key, batch, target_worker)
            if parent is not None and parent in ids and _identical(conn, sid, ids[parent]):
                shared[sid] = ids[parent]
    return shared


def migrate_to_v3(conn: sqlite3.Connection) -> None:
    """Version 2 -> 3 inside the caller's transaction (a fresh file runs it on empty tables)."""
    for statement in V3:
        conn.execute(statement)
    conn.create_function("fiometer_hist", 1, recode_hist, deterministic=True)
    conn.create_function("fiometer_p99", 2, hists_p99_ns, deterministic=True)
    conn.create_function(
        "fiometer_pack", 1, lambda v: pack_text(v) if isinstance(v, str) else v, deterministic=True
    )
    shared = find_shared(conn)
    conn.executemany("UPDATE series SET same_as = ? WHERE id = ?", [(p, s) for s, p in shared.items()])
    cols = ", ".join(SAMPLE_VALUE_COLUMNS)
    kept = "series_id NOT IN (SELECT id FROM series WHERE same_as IS NOT NULL)"
    conn.execute(
        f"INSERT INTO samples_v3 (series_id, t, {cols}, i_p99_ns) "
        f"SELECT series_id, t, {cols}, CASE WHEN i_read_hist IS NULL AND i_write_hist IS NULL THEN NULL "
        f"ELSE fiometer_p99(i_read_hist, i_write_hist) END FROM samples WHERE {kept} ORDER BY series_id, t"
    )
    conn.execute(
        "INSERT INTO sample_hists (series_id, t, read_hist, write_hist) "
        "SELECT series_id, t, fiometer_hist(i_read_hist), fiometer_hist(i_write_hist) FROM samples "
        f"WHERE {kept} AND (i_read_hist IS NOT NULL OR i_write_hist IS NOT NULL) ORDER BY series_id, t"
    )
    conn.execute("DROP TABLE samples")
    conn.execute("ALTER TABLE samples_v3 RENAME TO samples")
    for (step_id,) in conn.execute("SELECT id FROM steps WHERE status != 'running'").fetchall():
        keep_peaks_of_rows(conn, step_id)
    conn.execute(
        "UPDATE results SET read_hist = fiometer_hist(read_hist), write_hist = fiometer_hist(write_hist)"
    )
    conn.execute("UPDATE step_outputs SET raw_output = fiometer_pack(raw_output)")
