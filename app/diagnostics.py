"""Diagnosable in the field (Qt-free): a rotating log file in the user's data folder, and the one
place that turns an unexpected exception into one line for the user plus the log holding its traceback.

The log lives beside the results database's default folder (``fiometer.log``, rotated at 1 MiB,
three old files kept); ``$FIOMETER_LOG_DIR`` moves it (tests, portable installs). Logging never
fails the program: a log that cannot be written (full disk, read-only folder) falls back to the
temporary folder, and a failing write is dropped silently.

Every module logs to its own logger (``logging.getLogger(__name__)``: ``app.engine.transports.local_fio``,
``app.engine.transports.fioproto.client``...), the CLI to ``fiometer``; the file takes both (``LOGGERS``). A child
process (``engine/transports/remote_host_child.py``) appends to the same file, which its parent names in its
environment (``remote_host_child.LOG_FILE_ENV``).
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import platform
import tempfile
from pathlib import Path

from app.store.db_location import default_db_path_for

ENV_DIR = "FIOMETER_LOG_DIR"
LOG_NAME = "fiometer.log"
MAX_BYTES = 1 << 20
BACKUPS = 3

LOGGERS = ("fiometer", "app")  # the CLI's own, and every module's (their names start with "app.")
FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"

log = logging.getLogger("fiometer")
_handler: logging.FileHandler | None = None


def log_dir() -> Path:
    """The folder of the log file: ``$FIOMETER_LOG_DIR``, else the user's Fiometer data folder."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR]).expanduser()
    return Path(default_db_path_for(platform.system(), os.environ, str(Path.home()))).parent


def log_path() -> Path:
    """Where the log is written (once something is logged)."""
    if _handler is not None:
        return Path(_handler.baseFilename)
    return log_dir() / LOG_NAME


def log_files() -> list[Path]:
    """The log file and its rotated predecessors that exist, newest first."""
    current = log_path()
    return [
        p
        for p in (current, *(current.with_name(f"{current.name}.{i}") for i in range(1, BACKUPS + 1)))
        if p.exists()
    ]


def _file_handler(folder: Path) -> logging.FileHandler:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOG_NAME
    from app.safe_files import check_appendable

    check_appendable(path)  # fails now (not at the first message) if it cannot be written, or is a link
    return _NoLinkRotatingHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=True)


class _NoLinkRotatingHandler(logging.handlers.RotatingFileHandler):
    """Opens the log (also after each rotation) without following a link planted under its name."""

    def _open(self):  # noqa: ANN202 - the base class's signature
        from app.safe_files import open_append

        return open_append(self.baseFilename, self.encoding or "utf-8", self.errors)


def setup_logging() -> Path:
    """Send the ``fiometer`` logger to the log file (once per process); returns the file's path."""
    global _handler
    logging.raiseExceptions = False  # a log write that fails (disk full) must not print or raise
    wanted = log_dir() / LOG_NAME
    if _handler is not None:
        if Path(_handler.baseFilename) == wanted:
            return wanted
        for name in LOGGERS:  # the folder moved ($FIOMETER_LOG_DIR changed): follow it
            logging.getLogger(name).removeHandler(_handler)
        _handler.close()
    try:
        handler = _file_handler(log_dir())
    except OSError:
        handler = _file_handler(Path(tempfile.gettempdir()) / f"fiometer-log-{_user()}")
    handler.setFormatter(logging.Formatter(FORMAT))
    for name in LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    _handler = handler
    return log_path()


def _user() -> str:
    getuid = getattr(os, "getuid", None)
    return str(getuid()) if getuid else (os.environ.get("USERNAME") or "user")


def report_unexpected(exc: BaseException, where: str = "") -> str:
    """Log ``exc`` with its traceback; the one line to show the user (what failed and where the details are)."""
    try:
        path = setup_logging()
        log.error(
            "unexpected error%s",
            f" in {where}" if where else "",
            exc_info=(type(exc), exc, exc.__traceback__),
        )
        for h in log.handlers:
            h.flush()
    except Exception:  # pragma: no cover - the last resort must not raise
        path = None
    what = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    if len(what) > 300:
        what = what[:300] + "…"
    details = f"the details are in {path}" if path else "no log file could be written"
    return f"internal error ({what}); {details}. Please report it with that file."
