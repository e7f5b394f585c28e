"""Fiometer's own job folders in the temporary directory, and cleaning up the ones a crash left behind.

A local fio run gets a private folder ``fiometer-job-*`` holding its job file and a marker naming
the process that made it (pid, host and start token, as the store's run owners). When Fiometer is
killed, the folder stays; the next Fiometer to start (any command) removes such folders, but only when all of
this holds: the name has the prefix, it is a real folder (not a link) owned by this user, the marker
is there and names a process that is gone, and the folder holds nothing but the marker and job files.
Anything else is left alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
import threading
from pathlib import Path

from app.process_owner import ProcessOwner, current_owner, owner_is_gone

PREFIX = "fiometer-job-"
MARKER = ".fiometer-owner"
JOB_SUFFIX = ".fio"

_swept = False
_sweep_lock = threading.Lock()


def make_workdir(parent: str | os.PathLike[str] | None = None) -> Path:
    """A new private job folder with this process's marker in it. Raises OSError."""
    folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
    me = current_owner()
    (folder / MARKER).write_text(
        json.dumps({"pid": me.pid, "host": me.host, "token": me.token}), encoding="utf-8"
    )
    return folder


def _owner(folder: Path) -> ProcessOwner | None:
    try:
        data = json.loads((folder / MARKER).read_text(encoding="utf-8"))
        return ProcessOwner(int(data["pid"]), str(data["host"]), data.get("token"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def is_stale(folder: Path) -> bool:
    """True when ``folder`` is one of Fiometer's job folders whose process is gone (see module doc)."""
    try:
        st = folder.lstat()
    except OSError:
        return False
    if not folder.name.startswith(PREFIX) or not stat.S_ISDIR(st.st_mode):
        return False
    getuid = getattr(os, "getuid", None)
    if getuid is not None and st.st_uid != getuid():
        return False
    owner = _owner(folder)
    return owner is not None and owner_is_gone(owner)


def remove_stale(parent: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove the stale job folders in ``parent`` (default: the temporary directory); returns them."""
    base = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    removed: list[Path] = []
    try:
        candidates = [p for p in base.iterdir() if p.name.startswith(PREFIX)]
    except OSError:
        return removed
    for folder in candidates:
        if not is_stale(folder):
            continue
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        ours = [
            e
            for e in entries
            if e.name == MARKER or (e.suffix == JOB_SUFFIX and e.is_file() and not e.is_symlink())
        ]
        if len(ours) != len(entries):
            continue  # something else is in there: not ours to delete
        with contextlib.suppress(OSError):
            for e in sorted(ours, key=lambda e: e.name == MARKER):  # the marker last
                e.unlink()
            folder.rmdir()
            removed.append(folder)
    return removed


def sweep_once() -> list[Path]:
    """``remove_stale()`` the first time it is called in this process (at the first local fio start)."""
    global _swept
    with _sweep_lock:
        if _swept:
            return []
        _swept = True
    return remove_stale()
