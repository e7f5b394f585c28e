"""The append-only list of migrations: ``MIGRATIONS[n]`` takes a database from schema version ``n`` to
``n + 1`` (kept in ``PRAGMA user_version``). A new file runs them all, so a fresh database and a migrated
one are built by the same statements. Never edit a released migration: append a new one (its statements
in ``schema.py``, its data moves, if any, beside the code that reads that layout) and bump nothing else.

Versions 3 and 4 need Python to move data (histograms into compressed arrays, samples into blocks), so
they are ``compact.migrate_to_v3`` and ``blocks.migrate_to_v4``; both import ``schema``, and this module
imports all three, so no import is late.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from .blocks import migrate_to_v4
from .compact import migrate_to_v3
from .schema import V1, V2

Migration = tuple[str, ...] | Callable[[sqlite3.Connection], None]
MIGRATIONS: tuple[Migration, ...] = (
    V1,
    V2,
    migrate_to_v3,
    migrate_to_v4,
)
SCHEMA_VERSION = len(MIGRATIONS)


def statements(migration: Migration, conn: sqlite3.Connection) -> None:
    """Run one migration."""
    if callable(migration):
        migration(conn)
    else:
        for statement in migration:
            conn.execute(statement)
