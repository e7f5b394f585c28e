"""Opening the results database: checks, pragmas, migrations, and transactions with plain-words errors.

Several Fiometer processes may share one file: WAL lets readers work while one process writes, every
write transaction starts with ``BEGIN IMMEDIATE`` (so it waits for the lock instead of failing half
way), and a busy timeout makes a writer wait for the other. ``synchronous=NORMAL`` in WAL mode keeps
every committed interval across an application crash; a power cut may lose the last few.

Checkpoints are ours, not SQLite's automatic ones: SQLite 3.7.0 to 3.51.2 (Debian 12 ships 3.40.1) can
lose a committed transaction when one connection's checkpoint races another connection's commit that
restarts the log ("WAL-reset bug", fixed in 3.51.3). An automatic checkpoint is PASSIVE and takes no
writer lock, so two recording processes can meet that race. Every connection turns them off, and after a
write the log is checkpointed in RESTART mode once it is large: that mode holds the writer lock while it
reads the log's header and copies it back, so no commit can restart the log under it.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from app import __version__
from app.safe_files import create_exclusive, prepare_database, staged

from .abandoned import abandoned_runs, close_abandoned_runs
from .db_location import resolve_db_path
from .errors import StoreError
from .migrations import MIGRATIONS, SCHEMA_VERSION, statements
from .schema import APPLICATION_ID

log = logging.getLogger(__name__)

BUSY_TIMEOUT_S = 15.0
CHECKPOINT_BYTES = 4 << 20  # about SQLite's own automatic threshold (1000 pages of 4 KiB)
CHECKPOINT_WAIT_MS = 200  # a checkpoint waits this long for readers, then is retried after a later write

# Primary SQLite result codes (the low byte of an extended code).
_BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 5, 6, 8, 10, 11, 13, 14, 26
_IOERR_SHORT_READ = 522

_checked_this_process: set[str] = set()  # quick_check runs once per file per process: it reads it all
# Opening must cost the same however much the file holds, so the full check (it reads every page) runs
# only where damage is likely: after a recording process died (``close_abandoned_runs`` found its run),
# when the file is shorter than its header says, when damage was seen while using it (this marker file
# asks the next opening to check), and on demand (``check_store``, `fiometer check`).
CHECK_MARKER = ".check-me"


class Store:
    """An open results database. The connection belongs to the thread that opened it: open one Store
    per thread (opening again is cheap)."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn
        self._wal = path.with_name(path.name + "-wal")
        self.thread = threading.get_ident()  # the only thread its connection may be used on
        self.closed = False

    def close(self) -> None:
        self.closed = True
        self.conn.close()

    @property
    def usable_here(self) -> bool:
        """Open, and this is the thread that opened it."""
        return not self.closed and threading.get_ident() == self.thread

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @contextmanager
    def write(self, doing: str) -> Iterator[sqlite3.Connection]:
        """One write transaction; ``doing`` ("saving samples") names it in error messages."""
        with self._transaction("BEGIN IMMEDIATE", doing) as conn:
            yield conn
        self._checkpoint_if_large()

    def _checkpoint_if_large(self) -> None:
        """Copy the write-ahead log back into the file once it is large (see the module's note)."""
        try:
            if self._wal.stat().st_size < CHECKPOINT_BYTES:
                return
        except OSError:
            return
        conn = self.conn
        try:
            conn.execute(f"PRAGMA busy_timeout = {CHECKPOINT_WAIT_MS}")
            conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
        except sqlite3.Error:
            pass  # housekeeping: the data is safe in the log, and a later write tries again
        finally:
            with suppress(sqlite3.Error):
                conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")

    @contextmanager
    def read(self, doing: str) -> Iterator[sqlite3.Connection]:
        """One read transaction: a consistent snapshot while another process writes."""
        with self._transaction("BEGIN", doing) as conn:
            yield conn

    @contextmanager
    def _transaction(self, begin: str, doing: str) -> Iterator[sqlite3.Connection]:
        conn = self.conn
        try:
            conn.execute(begin)
        except sqlite3.Error as exc:
            raise explain(exc, self.path, doing) from None
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                with suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise explain(exc, self.path, doing) from None
            raise


def open_store(path: str | Path | None = None) -> Store:
    """Open (creating or upgrading) the results database; ``path`` None means the user's default.

    Raises StoreError, with what to do, for a damaged file (a copy is kept first), a file from a newer
    Fiometer, another program's SQLite file, or a place that cannot be written.
    """
    path = resolve_db_path(path).absolute()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"Fiometer cannot create the folder {path.parent} for its results database ({exc.strerror}). "
            "Create it, or choose another database file."
        ) from None
    existed = path.exists() and path.stat().st_size > 0
    try:
        prepare_database(path)  # SQLite follows links and creates what is missing: never through a link
    except OSError as exc:
        raise StoreError(f"{exc} (the results database)") from None
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as exc:
        raise explain(exc, path, "opening it") from None
    store = Store(path, conn)
    with _closed_on_error(conn, path, "opening it"):
        version = _inspect(store, existed)
        if version == 0:
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # only effective before the first table
        if version < SCHEMA_VERSION:
            _migrate(store)  # before anything else changes the file, so the backup is as it was
        _use_wal(conn)
        conn.execute("PRAGMA wal_autocheckpoint = 0")  # see the module's note
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        if str(path) not in _checked_this_process and abandoned_runs(store):
            _quick_check(store)  # a process died while writing: the moment damage is likely
        _checked_this_process.add(str(path))
        close_abandoned_runs(store)
    return store


@contextmanager
def _closed_on_error(conn: sqlite3.Connection, path: Path, doing: str) -> Iterator[None]:
    """Close ``conn`` if the block fails; an SQLite error becomes a StoreError in plain words."""
    try:
        yield
    except sqlite3.Error as exc:
        conn.close()
        raise explain(exc, path, doing) from None
    except BaseException:
        conn.close()
        raise


def open_store_readonly(path: str | Path | None = None) -> tuple[Store, str]:
    """Open the database for reading only, when ``open_store`` cannot (a full disk, a read-only folder
    or file): no migration, no clean-up, no file created. Returns the store and a note for the user
    (what may be missing). Raises StoreError when even that fails, or the file needs an upgrade."""
    path = resolve_db_path(path).absolute()
    if not path.is_file():
        raise StoreError(f"There is no results database at {path}.")
    uri = path.as_uri()
    note = ""
    conn = _reader(f"{uri}?mode=ro")
    if conn is None:  # SQLite's shared-memory file cannot be made: read the main file as it is on disk
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            note = " The newest changes (still in its write-ahead log) may be missing."
        conn = _reader(f"{uri}?mode=ro&immutable=1")
    if conn is None:
        raise StoreError(
            f"Fiometer cannot read the results database {path}. Check that you may read it, or "
            "choose another database file."
        )
    store = Store(path, conn)
    with _closed_on_error(conn, path, "reading it"):
        version = _inspect(store, existed=True)
    if version != SCHEMA_VERSION:
        conn.close()
        raise StoreError(
            f"The results database {path} needs an upgrade to be read, and it cannot be written now."
        )
    return store, f"It is shown read-only.{note}"


def _reader(uri: str) -> sqlite3.Connection | None:
    """A read-only connection that has read the schema, or None."""
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    except sqlite3.Error:
        conn.close()
        return None
    return conn


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, waiting for other processes: SQLite answers this one BUSY without its busy timeout
    (seen when several Fiometers create one file at once). A no-op once the file is in WAL mode."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
            if code not in (_BUSY, _LOCKED) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _inspect(store: Store, existed: bool) -> int:
    """The file's schema version, after checking it is readable, ours, and not from a newer Fiometer."""
    conn, path = store.conn, store.path
    try:
        # One statement, so one snapshot: another Fiometer may be creating the file at this moment.
        version, app_id, has_tables = conn.execute(
            "SELECT (SELECT user_version FROM pragma_user_version), "
            "(SELECT application_id FROM pragma_application_id), "
            "EXISTS (SELECT 1 FROM sqlite_schema)"
        ).fetchone()
        if existed and (
            _marker(path).exists()
            or (str(path) not in _checked_this_process and _shorter_than_its_header(path))
        ):
            _quick_check(store)
    except sqlite3.Error as exc:
        if _is_damage(exc):
            raise _damaged(store, str(exc)) from None
        raise
    if app_id != APPLICATION_ID and (app_id != 0 or version != 0 or has_tables):
        raise StoreError(
            f"{path} is not a Fiometer results database (it is another program's SQLite file). "
            "It was not changed. Choose another database file."
        )
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"The results database {path} was written by a newer Fiometer (database version {version}); "
            f"this Fiometer {__version__} understands database versions up to {SCHEMA_VERSION}. "
            "The file was not changed. Update Fiometer to open it, or choose another database file."
        )
    return int(version)


def _marker(path: Path) -> Path:
    return path.with_name(path.name + CHECK_MARKER)


def _shorter_than_its_header(path: Path) -> bool:
    """A truncated file (a copy cut short, a full disk): the header's page count is more than the file
    holds. Reads 100 bytes; pages still in the WAL may make a file legitimately short, so that counts
    only with no WAL beside it."""
    try:
        with open(path, "rb") as f:
            head = f.read(100)
        size = path.stat().st_size
    except OSError:
        return False
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        return True
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    valid = head[24:28] == head[92:96]  # the header's page count is only kept up to date then
    wal = path.with_name(path.name + "-wal")
    return valid and pages * page_size > size and not (wal.exists() and wal.stat().st_size > 0)


def _quick_check(store: Store) -> None:
    try:
        problems = [row[0] for row in store.conn.execute("PRAGMA quick_check(5)")]
    except sqlite3.Error as exc:
        if _is_damage(exc):
            raise _damaged(store, str(exc)) from None
        raise
    if problems != ["ok"]:
        raise _damaged(store, "; ".join(problems))
    _marker(store.path).unlink(missing_ok=True)


def check_store(path: str | Path | None = None) -> Path:
    """Open the database and check every page of it (`fiometer check`); StoreError if it is damaged
    (a copy is kept first). Returns the file's path."""
    path = resolve_db_path(path).absolute()
    if not path.exists():
        raise StoreError(f"There is no results database at {path}.")
    with open_store(path) as store:
        _quick_check(store)
    return path


def _migrate(store: Store) -> None:
    conn, path = store.conn, store.path
    backup: Path | None = None
    conn.execute("BEGIN IMMEDIATE")  # holds other writers off from the backup to the commit
    try:
        old = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have migrated
        if old > SCHEMA_VERSION:
            raise StoreError(
                f"The results database {path} was just upgraded by a newer Fiometer (database version "
                f"{old}); this Fiometer {__version__} understands up to {SCHEMA_VERSION}. Update Fiometer."
            )
        if 0 < old < SCHEMA_VERSION:
            copy = path.with_name(f"{path.name}.bak-v{old}")
            _copy_database(path, copy)
            backup = copy
        for version in range(old, SCHEMA_VERSION):
            statements(MIGRATIONS[version], conn)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
        log.info(
            "results database %s migrated from database version %d to %d%s",
            path,
            old,
            SCHEMA_VERSION,
            f" (the copy as it was: {backup})" if backup else "",
        )
        if old:  # give back the pages the old layout used (version 3 rewrote the samples)
            with suppress(sqlite3.Error):
                conn.executescript("PRAGMA incremental_vacuum;")
    except BaseException as exc:
        with suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        if isinstance(exc, StoreError) or not isinstance(exc, Exception):
            raise
        log.error(
            "results database %s: the upgrade to database version %d failed: %s", path, SCHEMA_VERSION, exc
        )
        kept = f" A copy of it as it was is at {backup}." if backup else ""
        raise StoreError(
            f"Fiometer could not upgrade the results database {path} to database version {SCHEMA_VERSION} "
            f"({exc}). The file was left unchanged.{kept} Free disk space or check permissions and try "
            "again."
        ) from None


def _copy_file(src: Path, dest: Path) -> None:
    with staged(dest) as tmp:  # never through a link planted under the copy's name
        shutil.copy2(src, tmp)


def _copy_database(path: Path, dest: Path) -> None:
    """A consistent copy, WAL content included. Uses its own connection: the caller holds the write lock."""
    src = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S)
    try:
        create_exclusive(dest)  # a link planted under the copy's name is removed, never followed
        dst = sqlite3.connect(dest)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()


def _is_damage(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and (code & 0xFF in (_CORRUPT, _NOTADB) or code == _IOERR_SHORT_READ)


def _damaged(store: Store, detail: str) -> StoreError:
    """Keep a copy of the damaged file (and its WAL) before anything else touches it; the refusal."""
    path = store.path
    store.conn.close()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    copy = path.with_name(f"{path.name}.corrupt-{stamp}")
    try:
        _copy_file(path, copy)
        wal = path.with_name(path.name + "-wal")
        if wal.exists():
            _copy_file(wal, copy.with_name(copy.name + "-wal"))  # beside the copy, where SQLite looks
        kept = f"A copy of the damaged file was kept at {copy}; the file itself was not changed."
    except OSError as exc:
        kept = (
            f"Fiometer could not keep a copy of it ({exc.strerror or exc}); the file itself was not changed."
        )
    log.error("results database %s is damaged (%s). %s", path, detail, kept)
    backups = sorted(p.name for p in path.parent.glob(path.name + ".bak-v*"))
    restore = f" An older copy from before an upgrade is there too: {', '.join(backups)}." if backups else ""
    return StoreError(
        f"The results database {path} is damaged and cannot be read (SQLite says: {detail}). {kept}\n"
        f"To carry on with an empty history, move {path.name} out of {path.parent} and start Fiometer "
        f'again. To rescue old runs, run: sqlite3 "{copy}" .recover | sqlite3 recovered.db, and '
        f"open recovered.db as the database.{restore}"
    )


def explain(exc: sqlite3.Error, path: Path, doing: str) -> StoreError:
    """A StoreError saying in plain words what went wrong with the file and what to do."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = None if code is None else code & 0xFF
    if primary in (_BUSY, _LOCKED):
        text = (
            f"The results database {path} stayed locked by another program for {BUSY_TIMEOUT_S:.0f} s "
            f"while {doing}. Another Fiometer may be busy with it; try again in a moment."
        )
    elif primary == _FULL:
        text = (
            f"The disk holding the results database {path} is full ({doing} failed). "
            "Free some space; what was recorded before is kept."
        )
    elif primary in (_READONLY, _CANTOPEN) or (primary == _IOERR and not _is_damage(exc)):
        text = (
            f"Fiometer cannot read or write the results database {path} while {doing} ({exc}). "
            "Check that the folder exists and that you may write there, or choose another database file."
        )
    elif _is_damage(exc):
        with suppress(OSError):
            _marker(path).touch()
        text = (
            f"The results database {path} turned out to be damaged while {doing} ({exc}). "
            "Close Fiometer; when it opens the file again it checks it and keeps a copy."
        )
    else:
        text = f"The results database {path} reported an error while {doing}: {exc}."
    log.warning("results database fault while %s: %s (SQLite error code %s)", doing, exc, code)
    return StoreError(text)
