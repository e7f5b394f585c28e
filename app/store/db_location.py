"""Where the results database lives when the user does not say.

Linux/BSD: ``$XDG_DATA_HOME/fiometer/fiometer.db`` (``~/.local/share`` when unset or relative);
Windows: ``%LOCALAPPDATA%\\Fiometer\\fiometer.db``; macOS: ``~/Library/Application Support/Fiometer``.
An explicit path wins, then ``$FIOMETER_DB``, then the OS default.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

DB_FILENAME = "fiometer.db"
ENV_OVERRIDE = "FIOMETER_DB"


def default_db_path_for(system: str, env: Mapping[str, str], home: str) -> PurePath:
    """The default database path on ``system`` (a ``platform.system()`` value), given env and home."""
    if system == "Windows":
        base = env.get("LOCALAPPDATA") or str(PureWindowsPath(home, "AppData", "Local"))
        return PureWindowsPath(base, "Fiometer", DB_FILENAME)
    if system == "Darwin":
        return PurePosixPath(home, "Library", "Application Support", "Fiometer", DB_FILENAME)
    xdg = env.get("XDG_DATA_HOME", "")
    base = (
        xdg if xdg.startswith("/") else str(PurePosixPath(home, ".local", "share"))
    )  # spec: ignore relative
    return PurePosixPath(base, "fiometer", DB_FILENAME)


def resolve_db_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The database file to use: ``explicit``, else ``$FIOMETER_DB``, else this OS's default."""
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get(ENV_OVERRIDE):
        return Path(os.environ[ENV_OVERRIDE]).expanduser()
    return Path(default_db_path_for(platform.system(), os.environ, str(Path.home())))


TEST_FILENAME = "fiometer-test.tst"


def default_test_file() -> Path:
    """Where a bundled example's test file goes on this machine: the user's data folder (the default
    database's folder), never the working directory."""
    return Path(default_db_path_for(platform.system(), os.environ, str(Path.home()))).with_name(TEST_FILENAME)


def suggested_test_file(os_name: str) -> str:
    """A test file path that exists on a typical ``os_name`` host (for remote managers)."""
    return "C:\\" + TEST_FILENAME if os_name.startswith("Windows") else "/tmp/" + TEST_FILENAME
