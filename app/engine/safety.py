"""Destructive writes are armed, not assumed: the one home of the arming rules (CLI, GUI and runner).

Decided on what fio will open (``placement``), never on how the path is spelled. A step needs the
target armed (CLI ``--allow-write TARGET``; the GUI asks) when it writes to a device, writes into an
existing file Fiometer did not create, or would make fio lay an existing file out again: fio does that
to a file smaller than offset + size even for a 100 % read job. A device that is mounted, partitioned,
held (LVM, md, dm-crypt), active swap, or whose use cannot be seen needs a second, explicit override;
only a target armed twice gets fio's ``allow_mounted_write``.

Fiometer's own test files need no arming: ``CreatedFiles`` remembers, per host and absolute path, the
size, identity and modification time it left there, so a file someone replaced is foreign again.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.engine.jobfile import JobFile, JobInfo
from app.engine.placement import Placement

RECORD_VERSION = 2


@dataclass(frozen=True)
class WriteRisk:
    manager: str
    target: str  # the plan's target name
    path: str  # what fio opens
    reason: str
    in_use: bool = False  # needs the second override
    use: str = ""  # what uses it, in words
    spelled: str = ""  # the path as the plan or mapping wrote it

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

    def _key(self, file: str) -> str:
        return f"{self.host}\n{os.path.abspath(file)}"

    def _load(self) -> dict[str, dict]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, TypeError):
            return {}
        if not isinstance(data, dict) or data.get("version") != RECORD_VERSION:
            return {}  # an older record kept no identity: its files count as foreign again
        files = data.get("files")
        return files if isinstance(files, dict) else {}

    def owns(self, placed: Placement) -> bool:
        """The file is still the one Fiometer left: same path, size, identity and modification time."""
        if not placed.verified or not placed.exists or placed.identity is None:
            return False
        known = self._load().get(self._key(placed.path))
        return isinstance(known, dict) and known == _facts(placed.size, placed.identity, placed.mtime_ns)

    def __contains__(self, file: str) -> bool:
        try:
            st = os.stat(file)
        except OSError:
            return False
        return self._load().get(self._key(file)) == _facts(st.st_size, (st.st_dev, st.st_ino), st.st_mtime_ns)

    def add(self, files: Iterable[str]) -> None:
        """Remember these files as they are now (after Fiometer's run left them)."""
        known = self._load()
        for f in files:
            try:
                st = os.stat(f)
            except OSError:
                continue
            known[self._key(f)] = _facts(st.st_size, (st.st_dev, st.st_ino), st.st_mtime_ns)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        from app.safe_files import write_file  # never through a link planted beside the database

        write_file(self.path, json.dumps({"version": RECORD_VERSION, "files": known}, indent=1))


def _facts(size: int | None, identity: tuple[int, int] | None, mtime_ns: int | None) -> dict:
    return {"size": size, "dev": identity[0] if identity else None, "ino": identity[1] if identity else None,
            "mtime_ns": mtime_ns}


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
        return WriteRisk(job.manager, job.target_name, job.path, "writes to a raw device destroy its data",
                         bool(uses), "; ".join(uses), spelled)
    if placed is None or not placed.verified or not placed.exists or registry.owns(placed):
        return None
    if writes:
        return WriteRisk(job.manager, job.target_name, job.path, "the file exists and Fiometer did not create "
                         "it (or it changed since); writes overwrite it", spelled=spelled)
    need = job.offset + (job.size or 0)
    if placed.size is not None and placed.size < need:
        return WriteRisk(job.manager, job.target_name, job.path,
                         f"the file exists with {placed.size} bytes, less than the {need} bytes the job uses "
                         "(start offset + size), so fio would lay it out again, overwriting it", spelled=spelled)
    return None


def write_risks(jobfiles: dict[str, JobFile], registry: CreatedFiles,
                engine: str | None = None) -> list[WriteRisk]:
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
            msgs.append(f"manager {r.manager!r}, target {r.target!r} ({shown}): {r.reason}; "
                        f"arm it with --allow-write '{r.target}'")
        elif r.in_use and not r.names() & allow_in_use:
            msgs.append(f"manager {r.manager!r}, target {r.target!r} ({shown}) is in use ({r.use}); "
                        f"writing would corrupt what is on it — if you really mean it, add "
                        f"--allow-write-mounted '{r.target}'")
    return msgs


def unverified_notes(jobfiles: dict[str, JobFile]) -> list[str]:
    """What could not be checked (targets on remote managers), once per path."""
    return list(dict.fromkeys(j.placement.note for jf in jobfiles.values() for j in jf.jobs
                              if j.placement is not None and j.placement.note))
