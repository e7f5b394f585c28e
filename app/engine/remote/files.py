"""Test files on a remote manager (`fio --server`, plain or started over SSH), checked through fio itself.

Fiometer cannot look at a remote machine's files; it can only send fio jobs. So it asks fio:

- **The probe** (before the run and again at the start of every step, before anything is written): one
  read-only fio job per test file, ``allow_file_create=0`` (fio never creates it) and ``create_on_open=1``
  (fio never lays it out again, whatever its size), reading the 4 KiB right after the region the run
  uses and verifying it against Fiometer's marker (``verify=pattern``). fio's answer says what is there:
  error 0: the marker, a Fiometer test file; ENOENT: nothing; EILSEQ: a file (or a device) without the
  marker, at least as large as the run needs; a short read (EIO): something smaller than the run needs,
  which fio would lay out again even for a read-only job; EISDIR: a folder. A job before it reads each
  parent folder (EISDIR: it exists; ENOENT: missing, and then the file is not probed at all, because
  fio creates a job's missing folders even for a read-only job that may not create its file).
- **Fiometer's own file**: a missing test file is laid out by Fiometer before the first step: the marker
  written first, right after the region the run uses (so the benchmark's own writes never touch it),
  then the region itself filled with fio's usual random data (as fio's own layout would).

The marker is 64 bytes, repeated over 4 KiB: ``FIOMETER TEST FILE v1`` and a hash of the path, which a
foreign file does not hold by accident. What fio cannot tell: whether a device is mounted or in use (fio's
own mount check still applies), and whether the object changes between the probe and fio's open.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import math
import queue
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from app.engine.common.phase_bounds import DEFAULT, LAYOUT, PROBE, Bounds
from app.engine.guards.safety import WriteRisk
from app.engine.jobs.jobfile import JobFile
from app.engine.jobs.targets import fio_filename
from app.engine.transports.transport import Event, Finished, Message, Snapshot, Transport, TransportError
from app.model.units import parse_size

log = logging.getLogger(__name__)
MARK_SIZE = 4096
STATUS_S = 0.1
TICK_S = 0.1  # how often a probe or layout job's progress is judged
_EIO, _ENOENT, _EILSEQ, _EISDIR, _ENOTDIR = errno.EIO, errno.ENOENT, 84, errno.EISDIR, errno.ENOTDIR

OURS, MISSING, FOREIGN, SMALLER, FOLDER, UNKNOWN = (
    "ours",
    "missing",
    "foreign",
    "smaller",
    "folder",
    "unknown",
)


@dataclass(frozen=True)
class RemoteFile:
    path: str  # as fio opens it on the remote host
    used: int  # bytes the run uses (the largest offset + size of any job on it)
    writes: bool = True
    # bytes an I/O may reach past ``used``: fio starts a random I/O at any ``blockalign`` boundary below the
    # size, so a block larger than the alignment runs past it (into the real file); the marker sits beyond
    spill: int = 0

    @property
    def mark_at(self) -> int:
        return self.used + self.spill


@dataclass(frozen=True)
class Probed:
    state: str  # OURS | MISSING | FOREIGN | SMALLER | FOLDER | UNKNOWN
    folder_exists: bool | None = None
    detail: str = ""  # fio's words when it is UNKNOWN


def marker(path: str) -> bytes:
    """64 bytes that say "Fiometer's test file at this path"."""
    head = b"FIOMETER TEST FILE v1 "
    return (
        head + hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[: 64 - len(head)].encode()
    )


def _pattern(path: str) -> str:
    return "0x" + marker(path).hex()


def _folder(path: str) -> str:
    """The folder of a remote path (POSIX '/' or Windows '\\' separators)."""
    cut = max(path.rstrip("/\\").rfind("/"), path.rstrip("/\\").rfind("\\"))
    head = path[:cut] if cut > 0 else path[:1]
    return head + "\\" if head.endswith(":") else head


_PROBE_GLOBAL = [
    "[global]",
    "ioengine=sync",
    "allow_file_create=0",
    "create_on_open=1",
    "thread=0",
    "numjobs=1",
    "",
]


def folder_job(folders: list[str]) -> str:
    """Read-only: is each folder there (fio: EISDIR) or not (ENOENT)? A folder's own parent is never
    missing, so fio (which creates a job file's missing folders) creates nothing here."""
    out = list(_PROBE_GLOBAL)
    for i, d in enumerate(folders):
        out += [f"[folder{i}]", f"filename={fio_filename(d)}", "rw=read", "bs=4096", "size=4096", ""]
    return "\n".join(out)


def probe_job(files: Iterable[RemoteFile]) -> str:
    """Read-only: per test file (in a folder that exists) the marker region, verified."""
    out = list(_PROBE_GLOBAL)
    for i, f in enumerate(files):
        out += [
            f"[mark{i}]",
            f"filename={fio_filename(f.path)}",
            "rw=read",
            f"bs={MARK_SIZE}",
            f"offset={f.mark_at}",
            f"size={MARK_SIZE}",
            "verify=pattern",
            f"verify_pattern={_pattern(f.path)}",
            "",
        ]
    return "\n".join(out)


def layout_job(f: RemoteFile) -> str:
    """Create a missing test file as Fiometer's: the marker first (fio makes a file of mark_at + 4 KiB),
    then the used region filled with data (the file is already large enough: nothing is laid out)."""
    return "\n".join(
        [
            "[global]",
            "ioengine=sync",
            "thread=0",
            f"filename={fio_filename(f.path)}",
            "",
            "[mark]",
            "rw=write",
            f"bs={MARK_SIZE}",
            f"offset={f.mark_at}",
            f"size={MARK_SIZE}",
            f"buffer_pattern={_pattern(f.path)}",
            "",
            "[fill]",
            "stonewall",
            "rw=write",
            f"bs={min(1 << 20, f.used)}",
            "offset=0",
            f"size={f.used}",
            "overwrite=1",
            "",
        ]
    )


def _state(error: int) -> str:
    return {0: OURS, _ENOENT: MISSING, _EILSEQ: FOREIGN, _EIO: SMALLER, _EISDIR: FOLDER}.get(error, UNKNOWN)


@dataclass
class _JobProgress:
    """A probe or layout job's progress so far (monotonic times)."""

    began: float
    report_at: float | None = None
    ios: int | None = None
    ios_at: float | None = None
    silent: bool = False  # the server sent nothing at all for a while (a host short of CPU, or gone)
    answering_from: float = 0.0  # when it answered again after such a silence

    def saw(self, jobs: Iterable[Mapping[str, Any]], now: float, gap: float = math.inf) -> None:
        """A report at ``now``. After a silence of ``gap`` or more (the whole server without a CPU, not its
        jobs stuck: it did not answer either) the counters' clock starts again: they could not move."""
        if self.report_at is not None and now - self.report_at >= gap and self.ios_at is not None:
            self.ios_at = now
        self.report_at = now
        ios = sum(int((j.get(d) or {}).get("total_ios") or 0) for j in jobs for d in ("read", "write"))
        if ios and ios != self.ios:
            self.ios, self.ios_at = ios, now

    def stuck(self, now: float, bounds: Bounds, heard: float | None = None) -> str | None:
        """Why the job is given up on now, or None (``phase_bounds``: no report while the server answers,
        no I/O, I/O unmoved). ``heard``: when the server last sent a byte of any kind (None: not known); a
        server that sends nothing at all is busy or gone, which its transport's silence watchdog decides
        (a host short of CPU is waited for, as in a step)."""
        stall = bounds.stall_s(STATUS_S)
        answering = heard is None or now - heard < stall / 2
        if not answering:
            self.silent = True
        elif self.silent:  # answering again: the time it was silent is not counted against its reports
            self.silent, self.answering_from = False, now
        quiet = now - max(self.report_at or self.began, self.began, self.answering_from)
        if quiet >= stall and answering:
            since = "" if self.report_at is not None else " since it started"
            return (
                f"no report for {quiet:.0f} s{since} while its server still answers (fio reports every "
                f"{STATUS_S:g} s: job processes stopped or stuck?)"
            )
        if self.ios is None and now - self.began >= bounds.setup:
            return f"no I/O within {bounds.setup:g} s of its start"
        if (
            self.ios_at is not None
            and self.report_at is not None
            and self.report_at - self.ios_at >= stall  # fio's own reports show them unmoved for so long
        ):
            return (
                f"fio's I/O counters stayed at {self.ios} for {self.report_at - self.ios_at:.0f} s while its "
                "reports came"
            )
        return None


def run_job(
    make: Callable[[], Transport],
    text: str,
    *,
    phase: str = PROBE,
    where: str = "",
    bounds: Bounds = DEFAULT,
) -> tuple[dict[str, int], list[str]]:
    """Run one short job file on a manager: (fio's error number per job name, fio's messages). Bounded by
    progress (``phase_bounds``): a job whose reports stop, whose I/O never begins or stays put is aborted
    and raises TransportError naming ``phase`` (probe | layout) and ``where`` (the manager)."""
    t = make()
    t.start(text, status_interval=STATUS_S)
    events: queue.Queue[Event] = queue.Queue()

    def pump() -> None:
        try:
            for ev in t.events():
                events.put(ev)
                if isinstance(ev, Finished):
                    return
        except Exception as e:  # a transport bug must not hang the check
            events.put(Finished("", False, f"internal error reading the {phase} job: {e}"))
            return
        events.put(Finished("", False, "fio ended without a report"))

    threading.Thread(target=pump, daemon=True, name=f"fiometer-{phase}").start()
    errors: dict[str, int] = {}
    said: list[str] = []
    progress = _JobProgress(time.monotonic())
    while True:
        try:
            ev: Event | None = events.get(timeout=TICK_S)
        except queue.Empty:
            ev = None
        now = time.monotonic()
        if isinstance(ev, Snapshot):
            progress.saw(ev.jobs, now, bounds.stall_s(STATUS_S) / 2)
            for j in ev.jobs:
                errors[str(j.get("jobname"))] = int(j.get("error") or 0)
        elif isinstance(ev, Message):
            said.append(ev.text.strip())
        elif isinstance(ev, Finished):
            if not (ev.ok or errors):
                said.append(ev.reason)
                raise TransportError("; ".join(s for s in said if s) or "fio ended without a report")
            return errors, said
        why = progress.stuck(now, bounds, t.last_heard)
        if why is not None:
            _give_up(t, events, bounds)
            text_ = f"the {phase} job on manager {where or '?'} made no progress (phase: {phase}): {why}; it was aborted"
            log.warning("%s", text_)
            raise TransportError(text_)


def _give_up(t: Transport, events: queue.Queue[Event], bounds: Bounds) -> None:
    """Abort a stuck job and wait (at most the stop grace) for its transport to end."""
    t.abort()
    until = time.monotonic() + bounds.stop_grace
    while (left := until - time.monotonic()) > 0:
        try:
            if isinstance(events.get(timeout=left), Finished):
                return
        except queue.Empty:
            return


def probe(
    make: Callable[[], Transport],
    files: list[RemoteFile],
    windows: bool = False,
    *,
    where: str = "",
    bounds: Bounds = DEFAULT,
) -> dict[str, Probed]:
    """What is at each test file's path on the remote host, as fio found it (two short read-only fio
    jobs: the folders first, then the files whose folder is there). ``windows``: the host runs Windows,
    whose fio reports a folder opened for reading as "access denied" (EACCES), not EISDIR."""
    if not files:
        return {}
    folders = list(dict.fromkeys(_folder(f.path) for f in files))
    errors, _said = run_job(make, folder_job(folders), phase=PROBE, where=where, bounds=bounds)
    there = {d: errors.get(f"folder{i}") for i, d in enumerate(folders)}
    out: dict[str, Probed] = {}
    look = []
    for f in files:
        e = there[_folder(f.path)]
        if e == _EISDIR or (windows and e == errno.EACCES):
            look.append(f)
        elif e in (_ENOENT, _ENOTDIR):
            out[f.path] = Probed(MISSING, False)
        else:
            out[f.path] = Probed(
                UNKNOWN, None, f"its folder {_folder(f.path)} is not a folder (fio error {e})"
            )
    if look:
        errors, said = run_job(make, probe_job(look), phase=PROBE, where=where, bounds=bounds)
        for i, f in enumerate(look):
            mark = errors.get(f"mark{i}")
            state = _state(mark) if mark is not None else UNKNOWN
            detail = (
                ""
                if state != UNKNOWN
                else (f"fio error {mark}: " if mark else "") + "; ".join(s for s in said if f.path in s)[:300]
            )
            out[f.path] = Probed(state, True, detail)
    return out


def lay_out(
    make: Callable[[], Transport], f: RemoteFile, *, where: str = "", bounds: Bounds = DEFAULT
) -> None:
    """Create Fiometer's test file (the caller probed it missing). Raises TransportError."""
    errors, said = run_job(make, layout_job(f), phase=LAYOUT, where=where, bounds=bounds)
    bad = {k: v for k, v in errors.items() if v}
    if bad:
        raise TransportError(
            f"{f.path}: Fiometer could not lay out its test file ("
            + "; ".join(said[-3:] or [f"fio error {v}" for v in bad.values()])
            + ")"
        )


def reason(p: Probed, f: RemoteFile) -> str | None:
    """Why running on this file needs arming, or None."""
    if p.state in (OURS, MISSING):
        return None
    if p.state == FOREIGN:
        return (
            "exists and does not carry Fiometer's marker (fio read it); writes overwrite it"
            if f.writes
            else None
        )
    if p.state == SMALLER:
        return (
            f"exists without Fiometer's marker and holds fewer than the {f.mark_at + MARK_SIZE} bytes the run "
            "uses, so fio would lay it out again (even to read it), overwriting it"
        )
    return f"could not be checked through fio ({p.detail or 'no answer'}); writing may destroy what is there"


def remote_targets(jobfiles: Iterable[JobFile]) -> dict[str, RemoteFile]:
    """The test files of one remote manager's job files (devices and network jobs left out), each with
    the most bytes any of them uses (where the marker goes) and whether any of them writes."""
    by: dict[str, RemoteFile] = {}
    for jf in jobfiles:
        spill = largest_block(jf.text)
        for j in jf.jobs:
            if j.is_device or j.network or j.size is None:
                continue
            old = by.get(j.path)
            by[j.path] = RemoteFile(
                j.path,
                max(j.offset + j.size, old.used if old else 0),
                j.writes or (old.writes if old else False),
                max(spill, old.spill if old else 0),
            )
    return by


_BLOCK_OPTIONS = re.compile(r"^(?:bs|bssplit|bsrange)=(.*)$", re.MULTILINE)


def largest_block(text: str) -> int:
    """The largest transfer size a job file names (bs=, bsrange=, bssplit= sizes), in bytes."""
    sizes = [0]
    for m in _BLOCK_OPTIONS.finditer(text):
        for entry in re.split(r"[,:]", m.group(1)):
            for size in entry.split("/", 1)[0].split("-"):
                sizes.append(parse_size(size.strip()) or 0 if size.strip() else 0)
    return max(sizes)


def assess(
    manager: str, files: list[RemoteFile], probed: dict[str, Probed], targets: dict[str, str]
) -> tuple[list[WriteRisk], list[str]]:
    """(what needs arming, what cannot run at all) for these files as fio found them; ``targets`` maps a
    path to the plan's target name."""
    risks: list[WriteRisk] = []
    problems: list[str] = []
    for f in files:
        p = probed.get(f.path, Probed(UNKNOWN))
        name = targets.get(f.path, f.path)
        if p.state == FOLDER:
            problems.append(
                f"manager {manager!r}, target {name!r}: {f.path} is a folder on that host; give a "
                "test file inside it"
            )
            continue
        if p.state == MISSING and p.folder_exists is False:
            problems.append(
                f"manager {manager!r}, target {name!r}: the folder {_folder(f.path)} does not exist "
                "on that host (fio would create it without a word); create it there first"
            )
            continue
        why = reason(p, f)
        if why:
            risks.append(WriteRisk(manager, name, f.path, why))
    return risks, problems
