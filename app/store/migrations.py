"""The append-only list of migrations: ``MIGRATIONS[n]`` takes a database from schema version ``n`` to
``n + 1`` (kept in ``PRAGMA user_version``). A new file runs them all, so a fresh database and a migrated
one are built by the same statements. Never edit a released migration: append a new one (its statements
in ``schema.py``, its data moves, if any, beside the code that reads that layout) and bump nothing else.

Versions 3 to 5 need Python to move data (histograms into compressed arrays, samples into blocks, interval
histograms into blocks), so they are ``compact.migrate_to_v3``, ``blocks.migrate_to_v4`` and
``hist_blocks.migrate_to_v5``; they import ``schema``, and this module imports them all, so no import is late.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from .blocks import migrate_to_v4
from .compact import migrate_to_v3
from .hist_blocks import migrate_to_v5
from .schema import V1, V2

Migration = tuple[str, ...] | Callable[[sqlite3.Connection], None]
MIGRATIONS: tuple[Migration, ...] = (
    V1,
    V2,
    migrate_to_v3,
    migrate_to_v4,
    migrate_to_v5,
)
SCHEMA_VERSION = len(MIGRATIONS)


def statements(migration: Migration, conn: sqlite3.Connection) -> None:
    """Run one migration."""
    if callable(migration):
        migration(conn)
    else:
        for statement in migration:
            conn.execute(statement)
