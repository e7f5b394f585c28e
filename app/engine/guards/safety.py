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
import json
import os
import socket
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.engine.devices.elevation import RAW_DISK_NEEDS_ADMIN
from app.engine.devices.linux_devices import ObjectId
from app.engine.guards.arming_hint import shell_arg
from app.engine.guards.file_marks import MARKER_XATTR as MARKER_XATTR
from app.engine.guards.file_marks import Facts
from app.engine.guards.file_marks import facts_st as _facts_st
from app.engine.guards.file_marks import marker_of as marker_of
from app.engine.guards.file_marks import same as _same
from app.engine.guards.file_marks import stamp as _stamp
from app.engine.jobs.jobfile import JobFile, JobInfo
from app.engine.jobs.placement import Placement

RECORD_VERSION = 3


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
    backing: ObjectId | None = None  # of a loop device: what it writes to (bound again, another target)

    def names(self) -> set[str]:
        return {n for n in (self.target, self.path, self.spelled) if n}


def this_host() -> str:
    return socket.gethostname()


class CreatedFiles:
    """The test files Fiometer created (one JSON record beside the results database, shared by the CLI
    and the GUI), so reusing them needs no arming."""

    def __init__(self, path: Path, host: str | None = None):
        self.path = path
        self.host = host or this_host()
        self._memory: dict[str, Facts] = {}  # the record when ``path`` is os.devnull (kept for one run)
        # the record could not be written (a link or a folder planted there, a read-only folder): why and what
        # to do, in words; the record is then kept in memory for this run, and the run goes on
        self.problem: str | None = None

    def _key(self, file: str, host: str | None = None) -> str:
        return f"{host or self.host}\n{os.path.abspath(file)}"

    def _load(self) -> dict[str, Facts]:
        if str(self.path) == os.devnull or self.problem is not None:
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
        known = self._load().get(self._key(placed.path, placed.host))
        marker = placed.marker if placed.host else marker_of(placed.path)  # read there, for another host
        return (
            isinstance(known, dict)
            and known.get("marker") is not None
            and known == {**_facts_of(placed), "marker": marker}
        )

    def known(self, host: str, path: str) -> Facts | None:
        """What the record holds for a file on ``host`` (an ``ssh://`` manager's host checks it there)."""
        found = self._load().get(self._key(path, host))
        return found if isinstance(found, dict) else None

    def remember(self, host: str, adopted: dict[str, Facts], forget: Iterable[str] = ()) -> None:
        """Record files on another host as Fiometer's (their facts read and stamped there, through the
        descriptor fio used), and drop ``forget``."""
        known = self._load()
        for f in forget:
            known.pop(self._key(f, host), None)
        known.update({self._key(f, host): facts for f, facts in adopted.items()})
        self._write(known)

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
        self._write(known)

    def _write(self, known: dict[str, Facts]) -> None:
        if str(self.path) == os.devnull:  # no record on disk (a Runner without a registry): this run only
            self._memory = known
            return
        from app.safe_files import write_file  # never through a link planted beside the database

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_file(self.path, json.dumps({"version": RECORD_VERSION, "files": known}, indent=1))
        except OSError as e:  # refused (UnsafeOutput says what it is) or failed: said, never a crash mid-run
            self._memory = known
            why = (str(e) if e.filename else f"{self.path}: {e.strerror or e}").rstrip(".")
            self.problem = (
                f"The record of Fiometer's test files cannot be written: {why}. The run's results are "
                "stored; its new test files are not recorded as Fiometer's, so the next run asks before "
                f"writing them. Remove or rename {self.path} (it must be a regular file, not a link) and run "
                "again."
            )


def _facts_of(placed: Placement) -> Facts:
    dev, ino = placed.identity or (None, None)
    return {
        "size": placed.size,
        "dev": dev,
        "ino": ino,
        "mtime_ns": placed.mtime_ns,
        "ctime_ns": placed.ctime_ns,
    }


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
            placed.backing if placed else None,
        )
    if placed is None or not placed.verified or not placed.exists:
        return None
    need = job.offset + (job.size or 0)
    lays_out = placed.size is not None and placed.size < need
    if (writes or lays_out) and placed.in_use:
        return WriteRisk(
            job.manager,
            job.target_name,
            job.path,
            "writes overwrite this file"
            if writes
            else f"the file has {placed.size} bytes, less than the {need} the job uses, so it would be laid "
            "out again, overwriting it",
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
    if lays_out:
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
                f"manager {r.manager!r}, target {r.target!r} ({shown}): {r.reason}"
                + (f" (in use: {r.use})" if r.in_use and r.use else "")
                + f"; arm it with --allow-write {shell_arg(r.target)}"
            )
        elif r.in_use and not r.names() & allow_in_use:
            msgs.append(
                f"manager {r.manager!r}, target {r.target!r} ({shown}) is in use ({r.use}); "
                f"writing would corrupt what is on it — if you really mean it, add "
                f"--allow-write-mounted {shell_arg(r.target)}"
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


def raw_disks_refused(steps: list[dict[str, JobFile]], may_open_raw_disks: bool) -> list[str]:
    """Why local raw-disk targets cannot run (Windows without Administrator rights), once per path;
    nothing when this process may open raw disks. Remote managers' rights are their own."""
    if may_open_raw_disks:
        return []
    return list(
        dict.fromkeys(
            f"manager {j.manager!r}, target {j.target_name!r}: {j.path} {RAW_DISK_NEEDS_ADMIN}"
            for files in steps
            for jf in files.values()
            for j in jf.jobs
            if j.is_device and not j.network and j.placement is not None and j.placement.verified
        )
    )
