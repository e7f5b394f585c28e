"""Runs a plan's steps: for each step one fio run per manager, all managers started together.

Qt-free. The GUI and the CLI both drive it and receive everything through a RunListener (called
on the runner's own thread; the GUI forwards to its thread with queued signals). Stop ends the
current step gracefully (fio's final numbers are kept) and the run after it; Abort ends at once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import math
import os
import platform
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.engine.common.phase_bounds import DEFAULT as DEFAULT_BOUNDS
from app.engine.common.phase_bounds import Bounds
from app.engine.devices import io_uring_host
from app.engine.devices.disks import disk_of
from app.engine.devices.elevation import may_open_raw_disks
from app.engine.devices.linux_devices import ObjectId
from app.engine.guards import unverified
from app.engine.guards.held_targets import Arming, Held, HoldRefused, describe_object, hold
from app.engine.guards.safety import (
    CreatedFiles,
    WriteRisk,
    armed_twice,
    is_armed,
    marker_of,
    raw_disks_refused,
    unarmed,
    unverified_notes,
    write_risks,
)
from app.engine.jobs.engines import EngineRefused, EngineUse, choose
from app.engine.jobs.job_policy import JobRefused, check_job_text
from app.engine.jobs.jobfile import DEFAULT_FILE_SIZE, JobFile, JobInfo, step_jobfile, stop_order
from app.engine.jobs.network_jobs import fresh_port_base
from app.engine.jobs.placement import Placement, placer
from app.engine.jobs.sequence import STEADY, SequenceTooLong, Step, expand
from app.engine.jobs.targets import TargetError, lookup_mapping
from app.engine.remote import files as remote_files
from app.engine.remote import hold as remote_hold
from app.engine.run.endpoint import ManagerEndpoint as ManagerEndpoint
from app.engine.run.managers import TransportPool
from app.engine.run.step_loop import StepLoop
from app.engine.run.step_watch import StepWatch
from app.engine.sampling.disk_telemetry import step_disk_context
from app.engine.sampling.telemetry import Sample, StepTelemetry
from app.engine.transports.transport import (
    Event,
    Finished,
    Message,
    PushesEvents,
    Startable,
    TakesDescriptors,
    Transport,
    TransportError,
)
from app.model.plan import Plan
from app.model.steady_state import SteadyWatch
from app.model.validation import validate

log = logging.getLogger(__name__)
SENDERS_FIRST_S = (
    5.0  # Stop: how long network receivers wait for their senders to end before they are stopped
)
TICK_S = 0.1  # the step's liveness rules and ALL's overdue seconds are judged at most this often
BATCH_MAX = 512  # events handled together at most (their samples in one store transaction)
GATHER_S = 0.05  # after an event, how long the ones following it are waited for to join its batch


class RunRefused(Exception):
    """The plan cannot start; str() lists what to fix (unmapped managers, unplaceable targets, ...).

    ``risks`` are the unarmed writes, ``missing_folders`` the local folders new test files need and
    ``unverified`` the plain fio servers written without their host's arming, so a GUI can ask about
    exactly those; ``only_asks`` is True when nothing else stands in the way."""

    def __init__(
        self,
        text: str,
        risks: list[WriteRisk] | None = None,
        missing_folders: list[str] | None = None,
        only_asks: bool = False,
        unverified: list[tuple[str, str]] | None = None,
    ):
        super().__init__(text)
        self.risks = risks or []
        self.missing_folders = missing_folders or []
        self.only_asks = only_asks
        self.unverified = unverified or []  # (manager, host): plain fio servers a write needs armed


@dataclass
class RunOptions:
    run_time: int | None = None  # override every step's run time (quick checks)
    ramp_up: int | None = None
    mapping: dict[str, str] = field(default_factory=dict)
    status_interval: float = 1.0
    engine: str | None = None  # override the ioengine (e.g. "null" in tests)
    default_file_size: int | None = None
    file_size: int | None = None  # override the size of every test file (quick checks)
    allow_write: set[str] = field(default_factory=set)  # armed targets (names or paths)
    allow_write_in_use: set[str] = field(default_factory=set)  # second override: mounted/partitioned
    # plain fio --server managers (name, host:port or host) armed for writes Fiometer cannot verify there
    allow_unverified: set[str] = field(default_factory=set)
    registry: CreatedFiles | None = None  # test files Fiometer created (None: nothing is known)
    # path -> the object (placement.object_id) the user was shown when arming it (GUI): the run refuses to
    # start if that path now leads to anything else
    armed_objects: dict[str, ObjectId] = field(default_factory=dict)
    # path -> what the loop device shown was bound to (None: no loop device), compared as armed_objects
    armed_backings: dict[str, ObjectId | None] = field(default_factory=dict)
    # called with each step after its targets were checked and opened, right before fio starts (tests
    # drive races through it)
    before_fio_start: Callable[[Step], None] | None = None
    # steps with at least this many fio servers read and decode them in another process (0: never)
    decode_apart: int = 1
    # fio servers per such process: more servers spread over more processes (each its own pipe and lock)
    hosts_per_process: int = 16
    # a window's run with at least this many remote managers runs in a process of its own (app.run_apart;
    # 0: never): the runner's and the store's work then leaves the window's process
    run_apart: int = 8
    # how long each phase of a step may take (app.engine.common.phase_bounds; tests scale it down)
    bounds: Bounds = DEFAULT_BOUNDS


@dataclass
class StepOutcome:
    step: Step
    status: str  # complete | stopped | partial | failed
    results: list[Sample]  # whole-step numbers per level, from fio's final reports
    finished: dict[str, Finished]
    raw_output: dict[str, str | None]
    started: float
    ended: float
    job_started: dict[str, float] = field(default_factory=dict)  # manager -> its I/O's start (time.time())
    refused: bool = False  # no manager's fio started (a check or a start refused them all): nothing ran

    @property
    def counted_as(self) -> str:
        """How the run's summary counts this step: its status, or 'refused' when no fio started."""
        return "refused" if self.refused else self.status

    @property
    def start_spread(self) -> float | None:
        """Seconds between the first and the last manager's I/O start (``io_start_times``)."""
        times = list(self.job_started.values())
        return max(times) - min(times) if len(times) > 1 else None


def io_start_times(io_start: dict[str, float]) -> dict[str, float]:
    """Each manager's I/O start (StepTelemetry.io_start, monotonic) as time.time()."""
    offset = time.time() - time.monotonic()
    return {n: t + offset for n, t in io_start.items()}


@dataclass
class RunSummary:
    """How many of a run's planned steps completed, were stopped, failed, or never ran."""

    planned: int
    complete: int = 0
    stopped: int = 0
    failed: int = 0
    refused: int = 0  # steps that failed before any fio started: they did not run

    @property
    def ran(self) -> int:
        return self.complete + self.stopped + self.failed

    @property
    def skipped(self) -> int:
        return self.planned - self.ran - self.refused

    def text(self) -> str:
        """e.g. '2 of 4 steps ran (1 complete, 1 stopped); 2 skipped'."""
        parts = [
            f"{n} {what}"
            for n, what in ((self.complete, "complete"), (self.stopped, "stopped"), (self.failed, "failed"))
            if n
        ]
        ran = f"{self.ran} of {self.planned} step{'s' if self.planned != 1 else ''} ran"
        return (
            ran
            + (f" ({', '.join(parts)})" if parts else "")
            + (f"; {self.refused} refused before fio started" if self.refused else "")
            + (f"; {self.skipped} skipped" if self.skipped else "")
        )


def summarize(statuses: list[str], planned: int) -> RunSummary:
    """The summary of steps that ended with ``statuses`` (complete | stopped | partial | failed | refused:
    ``StepOutcome.counted_as``)."""
    out = RunSummary(planned)
    for status in statuses:
        if status == "refused":
            out.refused += 1
        elif status == "complete":
            out.complete += 1
        elif status == "stopped":
            out.stopped += 1
        else:
            out.failed += 1
    return out


class RunListener:
    """Override what you need. All calls come from the runner thread, in order."""

    def run_started(self, plan: Plan, steps: list[Step], endpoints: dict[str, ManagerEndpoint]) -> None: ...
    def step_started(self, step: Step, jobfiles: dict[str, JobFile]) -> None: ...
    def samples(self, step: Step, samples: list[Sample]) -> None: ...
    def message(self, step: Step | None, message: Message) -> None: ...
    def manager_finished(self, step: Step, finished: Finished) -> None:
        """A manager's fio ended in this step (``finished.ok`` False: failed or lost), as it happens."""

    def step_finished(self, outcome: StepOutcome) -> None: ...
    def run_finished(self, status: str) -> None: ...


def _steps_words(numbers: list[int]) -> str:
    """'step 3', 'steps 1 to 128', 'steps 1, 4 and 7'."""
    if len(numbers) == 1:
        return f"step {numbers[0]}"
    if numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"steps {numbers[0]} to {numbers[-1]}"
    return "steps " + ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"


def holds_here() -> bool:
    """Local targets are opened and held here (``guards.held_targets``: descriptors fio inherits as
    ``/proc/self/fd/N``) on Linux only; an ssh:// manager's are held on its host, wherever this runs."""
    return platform.system() == "Linux"


class Runner:
    def __init__(
        self,
        plan: Plan,
        endpoints: dict[str, ManagerEndpoint],
        listener: RunListener | None = None,
        options: RunOptions | None = None,
        *,
        steps: list[Step] | None = None,
    ):
        """``steps``: run these instead of the plan's own sequence (a load search's candidates)."""
        self.plan = plan
        self.endpoints = endpoints
        self.listener = listener or RunListener()
        self.options = options or RunOptions()
        errors = [f"plan: {p}" for p in validate(plan) if p.severity == "error"]
        if errors:  # checked before expansion: a plan with errors may not even expand
            raise RunRefused("\n".join(errors))
        try:
            self.steps = expand(plan) if steps is None else steps
        except SequenceTooLong as e:
            raise RunRefused(f"plan: {e}") from e
        self._stop_all = threading.Event()
        self._abort = threading.Event()
        self._lock = threading.Lock()
        self._current: dict[str, Transport] = {}
        self._stopping_step = False
        self._stop_order: tuple[set[str], set[str]] = (
            set(),
            set(),
        )  # network senders first (jobfile.stop_order)
        self._later_stop_at: float | None = None  # when the receivers are stopped at the latest
        self.outcomes: list[StepOutcome] = []
        self.last_telemetry: StepTelemetry | None = None
        self.notes: list[str] = []  # what could not be verified (targets on remote managers)
        self._own_files: set[tuple[str, str]] = set()
        self._remote_files: dict[str, dict[str, remote_files.RemoteFile]] = {}  # per remote manager, by path
        self._lays_out: set[str] = set()  # remote managers where a test file would be laid out (a write)
        self._unverifiable: dict[str, str] = {}  # ssh:// managers whose checks over SSH could not run: why
        self._pool = TransportPool(
            self.options.decode_apart, self.options.hosts_per_process
        )  # each step's transports
        self._registry = self.options.registry or CreatedFiles(Path(os.devnull))
        self._record_said = False  # the created-files record's problem was said
        self._arming = Arming()  # the objects armed, checked again at every step (engine.held_targets)
        self._reconfirm: list[WriteRisk] = []  # armed by name, but confirmed (window) for another object
        self._armed_there: dict[str, Arming] = {}  # the same, per ssh:// manager (its own host)
        self._held_there: dict[str, remote_hold.HeldThere] = {}  # this step's targets held on ssh:// hosts
        self.jobfiles = self._prepare()

    # --- before anything runs --------------------------------------------------------------
    def _prepare(self) -> list[dict[str, JobFile]]:
        problems: list[str] = []
        if not self.steps:
            problems.append("plan: nothing to run — no worker has both an assigned access spec and a target")
        used = sorted({mi for s in self.steps for mi in s.managers()})
        unmapped = [
            self.plan.managers[mi].name for mi in used if self.plan.managers[mi].name not in self.endpoints
        ]
        if unmapped:
            problems.append(
                "managers without a host: "
                + ", ".join(repr(n) for n in unmapped)
                + " — map each with --manager NAME=HOST[:PORT] (the address in an imported file "
                "is never contacted)"
            )
            raise RunRefused("\n".join(problems))
        self._engines = self._choose_engines(used, problems)
        out: list[dict[str, JobFile]] = []
        o = self.options
        missing: list[str] = []
        names = list(
            dict.fromkeys(t.name.strip() for m in self.plan.managers for w in m.workers for t in w.targets)
        )
        for key, value in o.mapping.items():
            if not any(lookup_mapping(n, {key: key}) for n in names):
                problems.append(
                    f"--map {key}={value}: no target of the plan is named {key!r}; its targets are "
                    + (", ".join(repr(n) for n in names[:20]) or "none")
                )
        self._target_errors: dict[tuple[str, str], list[int]] = {}
        self._net_ports: dict[int, int] = {}  # each step's first network port (a rebuilt job file keeps it)
        for step in self.steps:
            out.append(self._step_files(step, problems, missing))
        problems += [
            f"{_steps_words(numbers)}, manager {name!r}: {text}"
            for (name, text), numbers in self._target_errors.items()
        ]
        self._place_over_ssh(out, problems)
        registry = self._registry
        # local test files this run creates, or that were Fiometer's before it: remembered after every step
        self._own_files = {
            (j.manager, j.path)
            for files in out
            for jf in files.values()
            for j in jf.jobs
            if not j.is_device
            and self.endpoints[j.manager].host == "local"
            and j.placement is not None
            and j.placement.verified
            and (not j.placement.exists or registry.owns(j.placement))
        }
        risks = self._local_risks(out, problems)
        risks += [
            r
            for r in self._check_remote_files(out, problems)
            if r not in risks and not is_armed(r, o.allow_write, o.allow_write_in_use)
        ]
        for files in out:
            for jf in files.values():
                try:
                    check_job_text(jf.text)
                except JobRefused as e:
                    problems.append(f"manager {jf.manager!r}: {e}")
        problems += raw_disks_refused(out, may_open_raw_disks())
        problems += self._polled_queues_refused(out)
        asks = [
            f"the folder {f} does not exist (fio would create it without a word); create it first, "
            "or choose another place for the test file"
            for f in missing
        ]
        asks += unarmed(risks, o.allow_write, o.allow_write_in_use)
        asks += [
            f"manager {r.manager!r}, target {r.target!r}: {r.spelled or r.path} changed after you confirmed "
            f"writing to it: it now leads to {r.path}, {describe_object(r.obj)}"
            + (f", a loop device over {describe_object(r.backing)}" if r.backing else "")
            + "; nothing was written — confirm it again"
            for r in self._reconfirm
        ]
        risks += [r for r in self._reconfirm if r not in risks]
        plain = self._unarmed_plain_servers(out)
        asks += [unverified.refusal(name, host, self._unverifiable.get(name, "")) for name, host in plain]
        if problems or asks:
            raise RunRefused(
                "\n".join(dict.fromkeys(problems + asks)), risks, missing, not problems, unverified=plain
            )
        return out

    def _choose_engines(self, used: list[int], problems: list[str]) -> dict[str, EngineUse]:
        """Each used manager's I/O engine (app.engine.jobs.engines); ``--engine`` (tests, benchmarks) wins."""
        out: dict[str, EngineUse] = {}
        for mi in used:
            ep = self.endpoints[self.plan.managers[mi].name]
            if self.options.engine:
                out[ep.name] = EngineUse(self.options.engine)
                continue
            try:
                out[ep.name] = use = choose(
                    self.plan.setup,
                    ep.name,
                    ep.os_name,
                    local=ep.host == "local",
                    uring_refusal=functools.partial(io_uring_host.refusal, ep.fio_path or "fio"),
                )
            except EngineRefused as e:
                problems.append(str(e))
                out[ep.name] = EngineUse("")  # the run is refused; its job files are still checked
                continue
            if use.note:
                self.notes.append(f"manager {ep.name!r}: {use.note}")
        return out

    def _polled_queues_refused(self, out: list[dict[str, JobFile]]) -> list[str]:
        """hipri (polled completions) on a local target whose disk has no polled queues: fio's I/O would
        fail there at once, so the run is refused first, naming the target and the disk."""
        said: list[str] = []
        for files in out:
            for name, jf in files.items():
                use = self._engines.get(name)
                if use is None or "hipri" not in use.options or self.endpoints[name].host != "local":
                    continue
                if not self.plan.setup.direct_io:
                    said.append(
                        f"manager {name!r}: io_uring's hipri needs direct I/O; tick Direct I/O or untick hipri"
                    )
                for job in jf.jobs:
                    disk = None if job.network else disk_of(job.path)
                    if job.network or (disk and io_uring_host.polled_queues(disk)):
                        continue
                    where = (
                        f"/sys/block/{disk}/queue/io_poll is not 1" if disk else "no disk is known behind it"
                    )
                    said.append(
                        f"manager {name!r}, target {job.target_name!r} ({job.path}): io_uring's hipri needs a "
                        f"disk with polled queues ({where}; NVMe gets them from the nvme module's poll_queues); "
                        "untick hipri"
                    )
        return list(dict.fromkeys(said))

    def _arming_of(self, manager: str) -> Arming:
        """What was armed on that manager's host: this machine's, or an ssh:// host's own."""
        if self.endpoints[manager].python_there is None:
            return self._arming
        return self._armed_there.setdefault(manager, Arming())

    def _place_over_ssh(self, out: list[dict[str, JobFile]], problems: list[str]) -> None:
        """ssh:// managers: every target examined on its host by the local rules (``guards.remote_hold``);
        the jobs then carry those placements, so arming is decided on them as on local ones. A manager whose
        rules cannot run there counts as a plain fio server."""
        if self.options.engine == "null":  # the null engine never opens its files
            return
        for name, ep in self.endpoints.items():
            jobs = [j for files in out if name in files for j in files[name].jobs if not j.network]
            if ep.python_there is None or not jobs:
                continue
            wanted = list(dict.fromkeys((j.path, j.is_device) for j in jobs))
            try:
                placed = remote_hold.place_there(ep.python_there, self._host_key(name), wanted)
            except remote_hold.RemoteUnavailable as e:
                self._unverifiable[name] = str(e)
                note = (
                    f"manager {name!r}: Fiometer's checks could not run on that host ({e}; they need "
                    "python3 there); it cannot verify that host's targets, as on a plain fio server"
                )
                if note not in self.notes:
                    self.notes.append(note)
                continue
            self._rebuild_over_ssh(name, out, placed)
            for files in out:
                for j in files[name].jobs if name in files else []:
                    if not j.network:
                        self._place_job(name, j, placed.get(j.path), problems)

    def _rebuild_over_ssh(
        self, name: str, out: list[dict[str, JobFile]], placed: dict[str, Placement | str]
    ) -> None:
        """An ssh:// manager's job files again, now that its targets were examined on its host: Iometer's
        geometry (sector, "align 0", an existing file's size) is the object's there, by the rule used here."""
        ep = self.endpoints[name]
        base = placer(False, ep.os_name, ep.name, True)

        def place(path: str) -> Placement:
            p = base(path)
            found = placed.get(p.path)
            if isinstance(found, Placement) and found.path == p.path and not found.missing_folder:
                return dataclasses.replace(found, spelled=p.spelled)
            return p

        for step, files in zip(self.steps, out, strict=True):
            if name not in files:
                continue
            mi = next(i for i in step.managers() if self.plan.managers[i].name == name)
            with contextlib.suppress(TargetError):  # built once already: the same targets, placed
                files[name] = self._jobfile(step, mi, place, self._net_ports[step.index])

    def _place_job(self, name: str, j: JobInfo, found: object, problems: list[str]) -> None:
        where = f"manager {name!r}, target {j.target_name!r}"
        if not isinstance(found, Placement):
            problems.append(f"{where} on that host: {found or 'not examined'}")
        elif found.path != j.path:
            problems.append(
                f"{where}: {j.path} leads to {found.path} on that host (a link); give {found.path} "
                "itself, so fio opens what was checked"
            )
        elif found.missing_folder:
            problems.append(
                f"{where}: the folder {found.missing_folder} does not exist on that host (fio would create "
                "it without a word); create it there first"
            )
        else:
            j.placement = dataclasses.replace(found, spelled=j.placement.spelled if j.placement else j.path)

    def _host_key(self, name: str) -> str:
        """The name a host's files are recorded under in the created-files record."""
        ep = self.endpoints[name]
        return ep.shown_as or ep.host

    def _checked_there(self, name: str) -> bool:
        """An ssh:// manager whose targets are examined and held on its host (``guards.remote_hold``)."""
        return self.endpoints[name].python_there is not None and name not in self._unverifiable

    def _plain(self, name: str) -> bool:
        """A manager where nothing can be verified: a plain fio server (or ssh:// without its checks)."""
        ep = self.endpoints[name]
        return ep.host != "local" and (ep.python_there is None or name in self._unverifiable)

    def _unarmed_plain_servers(self, out: list[dict[str, JobFile]]) -> list[tuple[str, str]]:
        """(manager, host) of the plain fio servers this run writes on without the host's arming; the armed
        ones get a note."""
        if self.options.engine == "null":  # the null engine never opens its files
            return []
        found: list[tuple[str, str]] = []
        for name, ep in self.endpoints.items():
            jobs = [j for files in out for j in (files[name].jobs if name in files else [])]
            if not self._plain(name) or not unverified.writes_there(jobs, name in self._lays_out):
                continue
            if unverified.armed(name, ep.host, self.options.allow_unverified):
                if (n := unverified.note(name, ep.shown_as or ep.host)) not in self.notes:
                    self.notes.append(n)
            else:
                found.append((name, ep.shown_as or ep.host))
        return found

    def _step_files(self, step: Step, problems: list[str], missing: list[str]) -> dict[str, JobFile]:
        """The step's job file per manager; what stands in the way goes to ``problems``, the local folders
        new test files need to ``missing``."""
        net_ports = fresh_port_base()  # fresh ports per step: a listener left over never answers
        self._net_ports[step.index] = net_ports
        files: dict[str, JobFile] = {}
        for mi in step.managers():
            ep = self.endpoints[self.plan.managers[mi].name]
            try:
                place = placer(ep.host == "local", ep.os_name, ep.name, ep.python_there is not None)
                files[ep.name] = self._jobfile(step, mi, place, net_ports)
            except TargetError as e:  # said once per run, with the steps it stands in the way of
                self._target_errors.setdefault((ep.name, str(e)), []).append(step.index + 1)
                continue
            for job in files[ep.name].jobs:
                folder = job.placement.missing_folder if job.placement else None
                if (
                    folder and folder not in missing and self.options.engine != "null"
                ):  # null never opens files
                    missing.append(folder)
        return files

    def _jobfile(self, step: Step, mi: int, place: Callable[[str], Placement], net_ports: int) -> JobFile:
        """One manager's job file for the step, its targets placed by ``place``. Raises TargetError."""
        o = self.options
        ep = self.endpoints[self.plan.managers[mi].name]
        return step_jobfile(
            self.plan,
            step,
            mi,
            ep.os_name,
            mapping=o.mapping,
            run_time=o.run_time,
            ramp_up=o.ramp_up,
            engine=self._engines[ep.name].name or None,
            engine_options=self._engines[ep.name].options,
            title=self.plan.name,
            place=place,
            allow_mounted=lambda job: armed_twice(job, o.allow_write, o.allow_write_in_use),
            default_file_size=o.default_file_size or DEFAULT_FILE_SIZE,
            file_size=o.file_size,
            peer_addresses={n: e.address for n, e in self.endpoints.items()},
            net_port_base=net_ports,
        )

    def _local_risks(self, out: list[dict[str, JobFile]], problems: list[str]) -> list[WriteRisk]:
        """The unarmed writes of the steps' job files; armed ones are remembered (``_arming``) for the
        object the user confirmed, and one whose name leads to another object now is to be confirmed again
        (``_reconfirm``): a confirmation binds to the object shown, never to a name."""
        o = self.options
        risks: list[WriteRisk] = []
        for files in out:
            for r in write_risks(files, self._registry, o.engine):
                if not is_armed(r, o.allow_write, o.allow_write_in_use):
                    if r not in risks:
                        risks.append(r)
                    continue
                shown = {
                    (o.armed_objects[n], o.armed_backings.get(n)) for n in r.names() if n in o.armed_objects
                }
                if shown and (r.obj, r.backing) not in shown:  # confirmed for another object: asked again
                    if r not in self._reconfirm:
                        self._reconfirm.append(r)
                    continue
                self._arming_of(r.manager).objects[r.path] = r.obj  # armed for this object only
                if r.obj is not None and r.obj[0] != "file" and r.spelled and r.spelled != r.path:
                    n = (
                        f"manager {r.manager!r}, target {r.target!r}: {r.spelled} is a link to the raw "
                        f"device {r.path} ({r.obj[0]} {r.obj[1]}:{r.obj[2]}); armed, that device is written"
                    )
                    if n not in self.notes:
                        self.notes.append(n)
            for jf in files.values():
                self._arming_of(jf.manager).in_use |= {
                    j.path for j in jf.jobs if armed_twice(j, o.allow_write, o.allow_write_in_use)
                }
            self.notes += [n for n in unverified_notes(files) if n not in self.notes]
        return risks

    def _check_remote_files(self, out: list[dict[str, JobFile]], problems: list[str]) -> list[WriteRisk]:
        """Ask each remote manager's fio what is at its test files' paths (app.engine.transports.remote_files)."""
        if self.options.engine == "null":  # the null engine never opens its files
            return []
        risks: list[WriteRisk] = []
        for name, ep in self.endpoints.items():
            if ep.host == "local" or self._checked_there(name):
                continue  # this machine's and ssh:// hosts' targets: placed and armed as local ones
            mine = [files[name] for files in out if name in files]
            found = remote_files.remote_targets(mine)
            if not found:
                continue
            self._remote_files[name] = found
            targets = {j.path: j.target_name for jf in mine for j in jf.jobs}
            try:
                probed = remote_files.probe(
                    ep.make_transport,
                    list(found.values()),
                    windows=ep.windows,
                    where=self._where(name),
                    bounds=self.options.bounds,
                )
            except TransportError as e:
                problems.append(f"manager {name!r}: Fiometer could not check its test files through fio: {e}")
                continue
            r, p = remote_files.assess(name, list(found.values()), probed, targets)
            risks += r
            problems += p
            if any(
                probed[f].state in (remote_files.MISSING, remote_files.SMALLER) for f in found if f in probed
            ):
                self._lays_out.add(name)
        return risks

    def _recheck_remote_files(self, files: dict[str, JobFile], said: list[Message]) -> dict[str, str]:
        """At a step's start, before anything is written: each remote test file is still what was armed or
        Fiometer's own (a missing one is laid out now, with Fiometer's marker, which goes to ``said``). Why a
        manager must not start, by manager."""
        o = self.options
        refused: dict[str, str] = {}
        for name, jf in files.items():
            known = self._remote_files.get(name)
            if not known:
                continue
            step = remote_files.remote_targets([jf])
            wanted = [dataclasses.replace(known[path], writes=f.writes) for path, f in step.items()]
            try:
                probed = self._probe_and_lay_out(name, wanted, said)
            except TransportError as e:
                refused[name] = str(e)
                continue
            risks, problems = remote_files.assess(
                name, wanted, probed, {j.path: j.target_name for j in jf.jobs}
            )
            why = problems + [
                f"{r.path}: {r.reason}" for r in risks if not is_armed(r, o.allow_write, o.allow_write_in_use)
            ]
            if why:
                refused[name] = (
                    "not started, nothing written: a test file changed since the run was "
                    "checked — " + "; ".join(why)
                )
        return refused

    def _where(self, name: str) -> str:
        host = self.endpoints[name].host
        return f"{name} ({host})" if host != "local" else name

    def _probe_and_lay_out(
        self, name: str, wanted: list[remote_files.RemoteFile], said: list[Message]
    ) -> dict[str, remote_files.Probed]:
        """A remote manager's test files probed before the step, and missing ones laid out (each phase
        bounded: ``phase_bounds``); what was laid out goes to ``said``. Raises TransportError naming the
        phase."""
        ep, bounds, where = self.endpoints[name], self.options.bounds, self._where(name)
        try:
            probed = remote_files.probe(
                ep.make_transport, wanted, windows=ep.windows, where=where, bounds=bounds
            )
        except TransportError as e:
            raise TransportError(
                f"Fiometer could not check the test files through fio before the step: {e}"
            ) from None
        for f in wanted:
            if probed[f.path].state == remote_files.MISSING and probed[f.path].folder_exists:
                if self._plain(name) and not unverified.armed(name, ep.host, self.options.allow_unverified):
                    raise TransportError(
                        "Fiometer could not check the test files through fio before the step: "
                        f"{f.path} is gone, and laying it out again would write on a host not "
                        f"armed for unverified writes ({unverified.OPTION})"
                    )
                began = time.monotonic()
                try:
                    remote_files.lay_out(ep.make_transport, f, where=where, bounds=bounds)
                except TransportError as e:
                    raise TransportError(
                        f"Fiometer could not lay out the test file {f.path} before the step: {e}"
                    ) from None
                said.append(
                    Message(
                        name,
                        f"laid out the test file {f.path} in "
                        f"{time.monotonic() - began:.1f} s (before the step's time)",
                        "info",
                    )
                )
                probed[f.path] = remote_files.Probed(remote_files.OURS, True)
        return probed

    def step_seconds(self, index: int) -> int:
        """Ramp-up + run time of step ``index`` from its job files; 0 when it runs until Stop."""
        return max((jf.step_seconds for jf in self.jobfiles[index].values()), default=0)

    @property
    def summary(self) -> RunSummary:
        return summarize([o.counted_as for o in self.outcomes], len(self.steps))

    # --- control (any thread) ----------------------------------------------------------------
    def stop_step(self) -> None:
        """Iometer's Stop: the current step ends now with fio's final numbers kept; the next one starts."""
        with self._lock:
            self._stopping_step = True
        self._end_transports()

    def stop(self) -> None:
        """Iometer's Stop All: the current step ends with fio's final numbers kept; no further steps run."""
        self._stop_all.set()
        self.stop_step()

    def abort(self) -> None:
        self._abort.set()
        self._stop_all.set()
        with self._lock:
            for t in self._current.values():
                t.abort()

    # --- the run -----------------------------------------------------------------------------
    def run(self) -> str:
        """Run every step; returns the run status: complete (every step ran to its end) | stopped (by
        Stop or Stop All; see ``summary``) | failed (a step failed)."""
        self.listener.run_started(self.plan, self.steps, self.endpoints)
        log.info(
            "run %r started: %d steps, managers %s",
            self.plan.name,
            len(self.steps),
            ", ".join(self.endpoints),
        )
        status = "failed"  # what the store records if anything below raises
        try:
            status = self._run_steps()
        finally:
            self._pool.close()
            self.close_endpoints()
            log.info("run %r ended: %s", self.plan.name, status)
            self.listener.run_finished(status)
        return status

    def close_endpoints(self) -> None:
        """End what the managers needed (SSH sessions running fio --server); safe to call twice."""
        for ep in self.endpoints.values():
            if ep.close is not None:
                ep.close()

    def _run_steps(self) -> str:
        status = "complete"
        for step, files in zip(self.steps, self.jobfiles, strict=True):
            if self._stop_all.is_set():
                status = "stopped"
                break
            outcome = self._step(step, files)
            self.outcomes.append(outcome)
            self.listener.step_finished(outcome)
            if self._stop_all.is_set():
                status = "stopped"
                break
            if outcome.status == "failed":
                status = "failed"
                break
            if outcome.status == "partial":
                status = "failed"
            elif outcome.status == "stopped" and status == "complete":
                status = "stopped"  # a step ended early by Stop: the run is not complete either
        return status

    def _step(self, step: Step, files: dict[str, JobFile]) -> StepOutcome:
        """One step: its targets checked and held, its managers started together, their events followed
        by a StepLoop until every manager has ended."""
        self._stopping_step = False
        with self._lock:
            self._stop_order, self._later_stop_at = stop_order(files), None
        telemetry = self._step_telemetry(files)
        laid_out: list[Message] = []
        held, refusal = self._hold_targets(files, laid_out)
        finished = {} if refusal else self._remote_refusals(files, laid_out)
        started = time.time()  # after any test file was laid out, here or on a remote manager
        ours = [
            j.path
            for jf in files.values()
            for j in jf.jobs
            if (j.manager, j.path) in self._own_files and j.manager not in held
        ]
        self.listener.step_started(step, files)
        for entry in laid_out:
            self.listener.message(step, entry)
        if refusal:
            who, why = refusal
            self.listener.message(step, Message(who, why, "error"))
            finished = {name: Finished(name, False, f"manager {who!r}: {why}") for name in files}
        elif not finished and self.options.before_fio_start is not None:
            self.options.before_fio_start(step)
        transports = self._start_together(
            {n: f for n, f in files.items() if n not in finished}, finished, held
        )
        loop = StepLoop(
            step,
            files,
            telemetry,
            self._step_watch(files, time.monotonic()),
            self.listener,
            _Control(self),
            io_expected=self._io_expected,
            finished=finished,
            steady=SteadyWatch(self.plan.setup.precondition) if step.phase == STEADY else None,
        )
        events: queue.Queue[tuple[str, Event]] = queue.Queue()
        for transport in transports.values():
            if isinstance(transport, PushesEvents):
                transport.push_to(events.put)
        threads = [
            threading.Thread(
                target=self._pump, args=(name, transport, events), daemon=True, name=f"fiometer-{name}"
            )
            for name, transport in transports.items()
            if not isinstance(transport, PushesEvents)
        ]
        for th in threads:
            th.start()
        try:
            self._follow(loop, events, transports)
        except BaseException:  # a listener failed (e.g. the results database): fio must not run on
            self.abort()
            raise
        finally:
            for th in threads:
                th.join(timeout=5)
            with self._lock:
                self._current.clear()
            self._release(held)
        for note in loop.closing_messages({n: t.dropped_note for n, t in transports.items()}):
            self.listener.message(step, note)
        registry = self.options.registry
        if ours and registry is not None and self.options.engine != "null":
            registry.add(p for p in ours if os.path.isfile(p))
        if self._registry.problem is not None and not self._record_said:  # said once, the run goes on
            self._record_said = True
            self.listener.message(step, Message("", self._registry.problem, "warning"))
        return StepOutcome(
            step,
            loop.status(),
            telemetry.final_results(),
            loop.finished,
            loop.raw,
            started,
            time.time(),
            io_start_times(telemetry.io_start),
            refused=not transports,
        )

    def _step_telemetry(self, files: dict[str, JobFile]) -> StepTelemetry:
        jobs = [j for jf in files.values() for j in jf.jobs]
        disks = step_disk_context(
            jobs,
            {n: self.endpoints[n].os_name for n in files},
            [n for n in files if self.endpoints[n].host == "local"],
            self.options.engine,
        )
        self.last_telemetry = StepTelemetry(
            {j.name: (j.manager, j.worker_key, j.target_key) for j in jobs},
            self.options.status_interval,
            disks,
            {j.name: j.transfers for j in jobs},
        )
        return self.last_telemetry

    def _step_watch(self, files: dict[str, JobFile], go_at: float) -> StepWatch:
        where = {
            n: f"{n} ({self.endpoints[n].host})" if self.endpoints[n].host != "local" else n for n in files
        }
        return StepWatch(
            where,
            run_s=max(jf.run_time + jf.tail_s for jf in files.values()),
            ramp_s=max(jf.ramp_up for jf in files.values()),
            interval=self.options.status_interval,
            ramp=any(jf.ramp_up for jf in files.values()),
            go_at=go_at,
            bounds=self.options.bounds,
        )

    def _follow(
        self, loop: StepLoop, events: queue.Queue[tuple[str, Event]], transports: dict[str, Transport]
    ) -> None:
        """Feed the managers' events and the time to ``loop`` until every manager has ended. What waited in
        the queue, and what followed within GATHER_S (the servers' reports of one second come as a wave), is
        handled as one batch (its samples told together: one store transaction), and the
        liveness figures are read and judged at most every TICK_S (with 64 managers, once per event was
        64 judgements of every manager a second), and at once when a manager ends."""
        ticked = -math.inf
        while not loop.over:
            try:
                batch = [events.get(timeout=0.25)]
            except queue.Empty:
                batch = []
            gather_until = time.monotonic() + GATHER_S  # fio servers report together: take the wave
            while batch and len(batch) < BATCH_MAX:
                try:
                    batch.append(events.get(timeout=max(gather_until - time.monotonic(), 0.0)))
                except queue.Empty:
                    break
            now = time.monotonic()
            with loop.batch():
                for name, ev in batch:
                    loop.on_event(name, ev, now)
                if now - ticked < TICK_S and not any(isinstance(ev, Finished) for _n, ev in batch):
                    continue
                ticked = now
                loop.on_tick(
                    now,
                    {n: t.bytes_received for n, t in transports.items()},
                    {n: t.last_heard for n, t in transports.items()},
                    {n: t.fio_side for n, t in transports.items()},
                )
            self._stop_later(now, loop.finished)
        loop.flush()

    def _hold_targets(
        self, files: dict[str, JobFile], said: list[Message]
    ) -> tuple[dict[str, Held], tuple[str, str] | None]:
        """Open, verify and lay out the local managers' targets for this step (``engine.held_targets``):
        ({manager: what it holds}, (manager, why the step may not run) or None); what it did goes to ``said``."""
        held: dict[str, Held] = {}
        if self.options.engine == "null":  # null never opens its files
            return held, None
        for name, jf in files.items():
            # ssh:// hosts hold their own targets whatever this machine runs; local ones only here on Linux
            if not self._checked_there(name) and (self.endpoints[name].host != "local" or not holds_here()):
                continue

            def say(text: str, n: str = name) -> None:
                said.append(Message(n, text, "info"))

            try:
                if self._checked_there(name):
                    held[name] = self._hold_there(name, jf, say)
                    continue
                held[name] = hold(
                    jf,
                    self._arming,
                    self._owns,
                    cancelled=self._abort.is_set,
                    say=say,
                    others=[h for n, h in held.items() if n not in self._held_there],
                )
            except (HoldRefused, remote_hold.RemoteUnavailable) as e:
                self._release(held, adopt=False)
                return {}, (name, str(e))
        return held, None

    def _hold_there(self, name: str, jf: JobFile, say: Callable[[str], None]) -> Held:
        """An ssh:// manager's targets opened, checked and held on its host; fio there gets
        ``/proc/<pid>/fd/N`` of the process holding them. Raises HoldRefused or RemoteUnavailable."""
        ep = self.endpoints[name]
        assert ep.python_there is not None
        host = self._host_key(name)
        known = {j.path: facts for j in jf.jobs if (facts := self._registry.known(host, j.path)) is not None}
        try:
            there = remote_hold.hold_there(
                ep.python_there, jf, self._arming_of(name), known, cancelled=self._abort.is_set
            )
        except remote_hold.RemoteUnavailable as e:
            raise remote_hold.RemoteUnavailable(
                f"Fiometer could not check and hold the targets on that host ({e}); nothing was written"
            ) from e
        for text in there.said:
            say(text)
        self._held_there[name] = there
        return Held(there.text)

    def _owns(self, path: str, st: os.stat_result, fd: int) -> bool:
        return self._registry.owns_stat(path, st, marker_of(fd))

    def _release(self, held: dict[str, Held], adopt: bool = True) -> None:
        """After a step: adopt the test files fio was given (only while their names still lead to them), then
        let go of every descriptor (here, and held on ssh:// hosts)."""
        for h in held.values():
            if h.files and adopt:
                self._registry.adopt(h.files)
            h.close()
        for name, there in self._held_there.items():
            if adopt and there.files:
                facts = there.adopt()
                self._registry.remember(
                    self._host_key(name), facts, [f for f in there.files if f not in facts]
                )
            there.close()
        self._held_there.clear()

    def _start_together(
        self, files: dict[str, JobFile], finished: dict[str, Finished], held: dict[str, Held] | None = None
    ) -> dict[str, Transport]:
        """Load every manager's job first (remote ones in parallel), then start them all at once:
        RUN to the fio servers, then the local fio processes (which start when launched). Managers in
        ``held`` get its job text and descriptors."""
        held = held or {}
        texts = {n: held[n].text if n in held else jf.text for n, jf in files.items()}
        transports = self._make_transports(files)
        for name, h in held.items():
            t = transports.get(name)
            if isinstance(t, TakesDescriptors):
                t.pass_fds = tuple(h.fds.values())
                t.disks = tuple(dict.fromkeys(d for p in h.fds if (d := disk_of(p))))
        errors = self._prepare_endpoints(files)
        self._load(
            {n: t for n, t in transports.items() if isinstance(t, Startable) and n not in errors},
            texts,
            errors,
        )
        for name, transport in transports.items():
            if name not in errors:
                self._launch(name, transport, texts[name], errors)
        for name, reason in errors.items():
            log.warning("manager %s could not start: %s", name, reason)
            finished[name] = Finished(name, False, reason)
            transports.pop(name)
        return transports

    def _remote_refusals(self, files: dict[str, JobFile], said: list[Message]) -> dict[str, Finished]:
        """The remote test files checked again (and missing ones laid out) before the step's clock starts; if
        any is refused, no manager starts: the step fails before anything is written."""
        refused = self._recheck_remote_files(files, said)
        if not refused:
            return {}
        return {
            name: Finished(
                name,
                False,
                refused.get(name)
                or "not started: another manager's test file changed since the run was checked",
            )
            for name in files
        }

    def _prepare_endpoints(self, files: dict[str, JobFile]) -> dict[str, str]:
        """Each endpoint's preparation for a step (re-opening an SSH session); why it failed, by manager.
        (Here, not in the loaders: an SSH process dies with the thread that started it.)"""
        errors: dict[str, str] = {}
        for name in files:
            prepare = self.endpoints[name].prepare
            if prepare is not None:
                try:
                    prepare()
                except TransportError as e:
                    errors[name] = str(e)
        return errors

    def _load(self, startable: dict[str, Startable], texts: dict[str, str], errors: dict[str, str]) -> None:
        """Load the two-phase managers' jobs in parallel, then wait as the pool says before they go."""

        def load(name: str, transport: Startable) -> None:
            try:
                transport.start(texts[name], status_interval=self.options.status_interval)
            except TransportError as e:
                errors[name] = str(e)

        loaders = [
            threading.Thread(target=load, args=item, daemon=True, name=f"fiometer-load-{item[0]}")
            for item in startable.items()
        ]
        for th in loaders:
            th.start()
        for th in loaders:
            th.join()
        loaded = [at for n, t in startable.items() if n not in errors and (at := t.loaded_at) is not None]
        time.sleep(self._pool.go_delay(loaded, time.monotonic()))

    def _launch(self, name: str, transport: Transport, text: str, errors: dict[str, str]) -> None:
        """Start one manager: a loaded one goes; another is started now (a local fio, which runs at once)."""
        if isinstance(transport, Startable):
            transport.go()
        else:
            try:
                transport.start(text, status_interval=self.options.status_interval)
            except TransportError as e:
                errors[name] = str(e)
                return
        with self._lock:
            self._current[name] = transport
            if self._stop_all.is_set() or self._stopping_step:  # Stop pressed while managers started
                transport.stop()

    def _make_transports(self, files: dict[str, JobFile]) -> dict[str, Transport]:
        """A fresh transport per manager of the step (``managers.TransportPool``)."""
        return self._pool.make({name: self.endpoints[name] for name in files})

    @property
    def _remote_hosts(self) -> Sequence[object]:
        """The processes decoding fio servers (``managers.TransportPool``; tests)."""
        return self._pool.hosts

    @property
    def _remote_host(self) -> object | None:
        """The first process decoding fio servers, if any (tests)."""
        return self._pool.hosts[0] if self._pool.hosts else None

    def _io_expected(self, job: JobInfo, jf: JobFile) -> bool:
        """A job should have done I/O unless its spec waits (Iometer's delay) about as long as the step runs."""
        spec = self.plan.spec(job.spec)
        delay_ms = max((ln.delay for ln in spec.lines), default=0) if spec else 0
        return 2 * delay_ms < jf.run_time * 1000

    def _end_transports(self) -> None:
        """End the current step as finished (not stopped): fio's final numbers are kept. Managers sending
        over the network are stopped first, their receivers once they have ended (``_stop_later``)."""
        with self._lock:
            first, later = self._stop_order
            for name, t in self._current.items():
                if name not in later:
                    t.stop()
            if later and self._later_stop_at is None:
                self._later_stop_at = time.monotonic() + SENDERS_FIRST_S

    def _stop_later(self, now: float, finished: dict[str, Finished]) -> None:
        """Stop the network receivers once every sender has ended (or SENDERS_FIRST_S after the Stop)."""
        with self._lock:
            first, later = self._stop_order
            if self._later_stop_at is None or not (now >= self._later_stop_at or first <= finished.keys()):
                return
            self._later_stop_at = math.inf  # once
            for name in later:
                if name in self._current:
                    self._current[name].stop()

    @staticmethod
    def _pump(name: str, transport: Transport, out: queue.Queue[tuple[str, Event]]) -> None:
        try:
            for ev in transport.events():
                out.put((name, ev))
                if isinstance(ev, Finished):
                    return
        except Exception as e:  # a transport bug must not hang the step
            out.put((name, Finished(name, False, f"internal error reading manager {name!r}: {e}")))
            return
        out.put((name, Finished(name, False, f"manager {name!r} ended without a result")))


class _Control:
    """The runner as a StepLoop sees it (``run.step_loop.StepControl``): the current step's transports."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def _transport(self, name: str) -> Transport | None:
        with self._runner._lock:
            return self._runner._current.get(name)

    def stop_manager(self, name: str) -> None:
        t = self._transport(name)
        if t is not None:
            t.stop()

    def abort_manager(self, name: str) -> None:
        t = self._transport(name)
        if t is not None:
            t.abort()

    def end_step(self) -> None:
        self._runner._end_transports()

    def stopping(self) -> bool:
        return self._runner._stopping_step or self._runner._abort.is_set()
