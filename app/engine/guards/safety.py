"""Destructive writes are armed, not assumed: the one home of the arming rules (CLI, GUI and runner).

Decided on what fio will open (``placement``), never on how the path is spelled. A step needs the
target armed (CLI ``--allow-write TARGET``; the GUI asks) when it writes to a device, writes into an
existing file Fiometer did not create, or would make fio lay an existing file out again: fio does that
to a file smaller than offset + size even for a 100 % read job. A device that is mounted, partitioned,
held (LVM, md, dm-crypt), active swap, or whose use cannot be seen needs a second, explicit override;
only a target armed twice gets fio's ``allow_mounted_write``.

Fiometer's own test files need no arming: ``CreatedFiles`` remembers, per host and absolute path, the
size, identity (device and inode), modification and change times it left there and a marker it wrote into
the file's extended attributes, so a file someone replaced, linked or rewrote in place is foreign again
(the change time moves with every write, metadata change and utime(); no program can set it back).
After a step a file is adopted only through the descriptor fio was given (``adopt``), and only while its
name still leads to that very object.

Each armed risk also carries the object it was armed for (``WriteRisk.obj``): arming a file never arms
the device its name may lead to later (``engine.held_targets`` checks again at every step).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import socket
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.engine.devices.linux_devices import ObjectId
from app.engine.jobs.jobfile import JobFile, JobInfo
from app.engine.jobs.placement import Placement

RECORD_VERSION = 3
MARKER_XATTR = "user.fiometer.test-file"


@dataclass(frozen=True)
class WriteRisk:
    manager: str
    target: str  # the plan's target name
    path: str  # what fio opens
    reason: str
    in_use: bool = False  # needs the second override
    use: str = ""  # what uses it, in words
    spelled: str = ""  # the path as the plan or mapping wrote it
    obj: ObjectId | None = (
        None  # the object shown and armed (placement.object_id), compared again at each step
    )

    def names(self) -> set[str]:
        return {n for n in (self.target, self.path, self.spelled) if n}


def this_host() -> str:
    return socket.gethostname()


Facts = dict[str, int | str | None]
"""One file's record: size, dev, ino, mtime_ns, ctime_ns and marker (as ``_facts_st`` and ``_stamp`` write it)."""


class CreatedFiles:
    """The test files Fiometer created (one JSON record beside the results database, shared by the CLI
    and the GUI), so reusing them needs no arming."""

    def __init__(self, path: Path, host: str | None = None):
        self.path = path
        self.host = host or this_host()
        self._memory: dict[str, Facts] = {}  # the record when ``path`` is os.devnull (kept for one run)

    def _key(self, file: str) -> str:
        return f"{self.host}\n{os.path.abspath(file)}"

    def _load(self) -> dict[str, Facts]:
        if str(self.path) == os.devnull:
            return dict(self._memory)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, TypeError):
            return {}
        if not isinstance(data, dict) or data.get("version") != RECORD_VERSION:
            return {}  # an older record kept no identity: its files count as foreign again
        files = data.get("files")
        return files if isinstance(files, dict) else {}

    def owns(self, placed: Placement) -> bool:
        """The file is still the one Fiometer left: same path, size, identity, times and marker."""
        if not placed.verified or not placed.exists or placed.identity is None:
            return False
        known = self._load().get(self._key(placed.path))
        return (
            isinstance(known, dict)
            and known.get("marker") is not None
            and known == {**_facts_of(placed), "marker": marker_of(placed.path)}
        )

    def owns_stat(self, path: str, st: os.stat_result, marker: str | None) -> bool:
        """As ``owns`` for an object Fiometer holds open (``st`` and ``marker`` read through its descriptor)."""
        known = self._load().get(self._key(path))
        return isinstance(known, dict) and known == {**_facts_st(st), "marker": marker}

    def __contains__(self, file: str) -> bool:
        try:
            st = os.lstat(file)
        except OSError:
            return False
        return stat.S_ISREG(st.st_mode) and self.owns_stat(file, st, marker_of(file))

    def add(self, files: Iterable[str]) -> None:
        """Remember these files (regular, one link, not through a symlink) as Fiometer's, as they are now."""
        found = {}
        for f in files:
            with contextlib.suppress(OSError):
                fd = os.open(f, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
                try:
                    facts = _stamp(fd)
                    if facts is not None and _same(f, fd):
                        found[f] = facts
                finally:
                    os.close(fd)
        self._store(found, ())

    def adopt(self, held: dict[str, int], forget: Iterable[str] = ()) -> list[str]:
        """After a step: remember the files fio was given (path -> the descriptor Fiometer held), each only
        while its name still leads to that object with one link; ``forget`` drops records. Returns the
        paths adopted."""
        adopted = {}
        for f, fd in held.items():
            facts = _stamp(fd)
            if facts is not None and _same(f, fd):
                adopted[f] = facts
        self._store(adopted, [*forget, *(f for f in held if f not in adopted)])
        return list(adopted)

    def _store(self, adopted: dict[str, Facts], forget: Iterable[str]) -> None:
        known = self._load()
        for f in forget:
            known.pop(self._key(f), None)
        known.update({self._key(f): facts for f, facts in adopted.items()})
        if str(self.path) == os.devnull:  # no record on disk (a Runner without a registry): this run only
            self._memory = known
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        from app.safe_files import write_file  # never through a link planted beside the database

        write_file(self.path, json.dumps({"version": RECORD_VERSION, "files": known}, indent=1))


def _facts_of(placed: Placement) -> Facts:
    dev, ino = placed.identity or (None, None)
    return {
        "size": placed.size,
        "dev": dev,
        "ino": ino,
        "mtime_ns": placed.mtime_ns,
        "ctime_ns": placed.ctime_ns,
    }


def _facts_st(st: os.stat_result) -> Facts:
    return {
        "size": st.st_size,
        "dev": st.st_dev,
        "ino": st.st_ino,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
    }


def marker_of(where: str | int) -> str | None:
    """Fiometer's marker on a file (by path, not following a link, or by descriptor); "" where the file
    system keeps no extended attributes; None when absent."""
    try:
        if isinstance(where, int):
            return os.getxattr(where, MARKER_XATTR).decode("ascii", "replace")
        return os.getxattr(where, MARKER_XATTR, follow_symlinks=False).decode("ascii", "replace")
    except OSError as e:
        return "" if e.errno in (errno.ENOTSUP, errno.EOPNOTSUPP) else None
    except AttributeError:  # pragma: no cover - no extended attributes on this OS (Windows)
        return ""


def _stamp(fd: int) -> Facts | None:
    """Write a fresh marker on the open file and return its facts (after: the marker moves its change time).
    None unless it is a regular file with exactly one link."""
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode) or before.st_nlink != 1:
            return None
        token = secrets.token_hex(8)
        try:
            os.setxattr(fd, MARKER_XATTR, token.encode("ascii"))
        except OSError as e:
            if e.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP):
                return None
            token = ""
        except AttributeError:  # pragma: no cover - Windows
            token = ""
        st = os.fstat(fd)
    except OSError:
        return None
    return {**_facts_st(st), "marker": token}


def _same(path: str, fd: int) -> bool:
    """The name still leads to the open object: not a link, same device and inode, one link."""
    try:
        st, held = os.lstat(path), os.fstat(fd)
    except OSError:
        return False
    return (
        stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)
    )


def record_beside(db_path: str | os.PathLike[str]) -> CreatedFiles:
    """The created-files record that belongs to a results database (same folder, same stem)."""
    db = Path(db_path).absolute()
    return CreatedFiles(db.with_name(db.name + ".test-files.json"))


def job_risk(job: JobInfo, registry: CreatedFiles) -> WriteRisk | None:
    """Why running this job would destroy data, or None."""
    placed = job.placement
    writes = job.writes  # decided on the spec the job really runs (a preconditioning fill writes)
    spelled = placed.spelled if placed else ""
    if job.is_device:
        if not writes:
            return None
        uses = placed.in_use if placed else ()
        return WriteRisk(
            job.manager,
            job.target_name,
            job.path,
            "writes to a raw device destroy its data",
            bool(uses),
            "; ".join(uses),
            spelled,
            placed.obj if placed else None,
        )
    if placed is None or not placed.verified or not placed.exists:
        return None
    if writes and placed.in_use:
        return WriteRisk(
            job.manager,
            job.target_name,
            job.path,
            "writes overwrite this file",
            True,
            "; ".join(placed.in_use),
            spelled,
            placed.obj,
        )
    if registry.owns(placed):
        return None
    if writes:
        return WriteRisk(
            job.manager,
            job.target_name,
            job.path,
            "the file exists and Fiometer did not create it (or it changed since); writes overwrite it",
            spelled=spelled,
            obj=placed.obj,
        )
    need = job.offset + (job.size or 0)
    if placed.size is not None and placed.size < need:
        return WriteRisk(
            job.manager,
            job.target_name,
            job.path,
            f"the file exists with {placed.size} bytes, less than the {need} bytes the job uses "
            "(start offset + size), so fio would lay it out again, overwriting it",
            spelled=spelled,
            obj=placed.obj,
        )
    return None


def write_risks(
    jobfiles: dict[str, JobFile], registry: CreatedFiles, engine: str | None = None
) -> list[WriteRisk]:
    """Targets of one step that would be written or rewritten, and why."""
    if engine == "null":  # the null engine never opens its files
        return []
    out: list[WriteRisk] = []
    for jf in jobfiles.values():
        for job in jf.jobs:
            risk = job_risk(job, registry)
            if risk is not None and risk not in out:
                out.append(risk)
    return out


def is_armed(risk: WriteRisk, allow: set[str], allow_in_use: set[str]) -> bool:
    return bool(risk.names() & allow) and (not risk.in_use or bool(risk.names() & allow_in_use))


def armed_twice(job: JobInfo, allow: set[str], allow_in_use: set[str]) -> bool:
    """The user armed this target with both overrides: the only case fio gets allow_mounted_write."""
    names = job.names()
    return bool(names & allow) and bool(names & allow_in_use)


def arm(risks: Iterable[WriteRisk], allow: set[str], allow_in_use: set[str]) -> tuple[set[str], set[str]]:
    """The arming sets after the user confirmed these risks (in-use ones get the second override)."""
    allow, allow_in_use = set(allow), set(allow_in_use)
    for r in risks:
        allow.add(r.path)
        if r.in_use:
            allow_in_use.add(r.path)
    return allow, allow_in_use


def unarmed(risks: list[WriteRisk], allow: set[str], allow_in_use: set[str]) -> list[str]:
    """Messages for risks the user has not armed; empty means the step may run."""
    msgs = []
    for r in risks:
        shown = f"{r.spelled} -> {r.path}" if r.spelled and r.spelled != r.path else r.path
        if not r.names() & allow:
            msgs.append(
                f"manager {r.manager!r}, target {r.target!r} ({shown}): {r.reason}; "
                f"arm it with --allow-write '{r.target}'"
            )
        elif r.in_use and not r.names() & allow_in_use:
            msgs.append(
                f"manager {r.manager!r}, target {r.target!r} ({shown}) is in use ({r.use}); "
                f"writing would corrupt what is on it — if you really mean it, add "
                f"--allow-write-mounted '{r.target}'"
            )
    return msgs


def unverified_notes(jobfiles: dict[str, JobFile]) -> list[str]:
    """What could not be checked (targets on remote managers), once per path."""
    return list(
        dict.fromkeys(
            j.placement.note
            for jf in jobfiles.values()
            for j in jf.jobs
            if j.placement is not None and j.placement.note
        )
    )
