"""Before anything runs: a plan's steps and job files, and every check that may refuse the run.

``prepare(plan, endpoints, options)`` returns a ``PreparedRun`` (what the checks found and decided: the job
files, the objects armed, the remote test files, the notes) that ``runner.Runner`` executes, or raises
``RunRefused`` naming what to fix. It talks to the managers (ssh:// hosts examine their targets, plain fio
servers are asked what is at their test files' paths), so it is an explicit step, never a constructor's:
a window that asks the user about a refusal calls it again with the answers, and nothing else is rebuilt.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.engine.devices import io_uring_host
from app.engine.devices.disks import disk_of
from app.engine.devices.elevation import may_open_raw_disks
from app.engine.guards import unverified
from app.engine.guards.held_targets import Arming, describe_object
from app.engine.guards.safety import (
    CreatedFiles,
    WriteRisk,
    armed_twice,
    is_armed,
    raw_disks_refused,
    unarmed,
    unverified_notes,
    write_risks,
)
from app.engine.jobs.engines import EngineRefused, EngineUse, choose
from app.engine.jobs.job_policy import JobRefused, check_job_text
from app.engine.jobs.jobfile import DEFAULT_FILE_SIZE, JobFile, JobInfo, JobSettings, step_jobfile
from app.engine.jobs.network_jobs import fresh_port_base
from app.engine.jobs.placement import Placement, placer
from app.engine.jobs.sequence import SequenceTooLong, Step, expand
from app.engine.jobs.targets import TargetError, lookup_mapping
from app.engine.remote import files as remote_files
from app.engine.remote import hold as remote_hold
from app.engine.run.endpoint import ManagerEndpoint
from app.engine.run.options import RunOptions
from app.engine.transports.transport import TransportError
from app.model.plan import Plan
from app.model.validation import validate

JobFiles = list[dict[str, JobFile]]  # per step, by manager


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
class PreparedRun:
    """A run whose checks passed: what the Runner executes, and what the checks decided for its steps."""

    plan: Plan
    endpoints: dict[str, ManagerEndpoint]
    options: RunOptions
    steps: list[Step]
    registry: CreatedFiles  # test files Fiometer created (an empty one of this run only when none is known)
    jobfiles: JobFiles = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what could not be verified (targets on remote managers)
    # local test files this run creates, or that were Fiometer's before it: remembered after every step
    own_files: set[tuple[str, str]] = field(default_factory=set)
    remote_files: dict[str, dict[str, remote_files.RemoteFile]] = field(
        default_factory=dict
    )  # by manager, path
    lays_out: set[str] = field(default_factory=set)  # remote managers where a test file would be laid out
    unverifiable: dict[str, str] = field(default_factory=dict)  # ssh:// managers whose checks cannot run: why
    arming: Arming = field(default_factory=Arming)  # the objects armed here, checked again at every step
    armed_there: dict[str, Arming] = field(default_factory=dict)  # the same, per ssh:// manager (its host)

    def arming_of(self, manager: str) -> Arming:
        """What was armed on that manager's host: this machine's, or an ssh:// host's own."""
        if self.endpoints[manager].python_there is None:
            return self.arming
        return self.armed_there.setdefault(manager, Arming())

    def host_key(self, name: str) -> str:
        """The name a host's files are recorded under in the created-files record."""
        ep = self.endpoints[name]
        return ep.shown_as or ep.host

    def checked_there(self, name: str) -> bool:
        """An ssh:// manager whose targets are examined and held on its host (``guards.remote_hold``)."""
        return self.endpoints[name].python_there is not None and name not in self.unverifiable

    def plain(self, name: str) -> bool:
        """A manager where nothing can be verified: a plain fio server (or ssh:// without its checks)."""
        ep = self.endpoints[name]
        return ep.host != "local" and (ep.python_there is None or name in self.unverifiable)

    def where(self, name: str) -> str:
        host = self.endpoints[name].host
        return f"{name} ({host})" if host != "local" else name

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def prepare(
    plan: Plan,
    endpoints: dict[str, ManagerEndpoint],
    options: RunOptions,
    steps: list[Step] | None = None,
) -> PreparedRun:
    """The run of ``plan`` (or of ``steps``: a load search's candidates) checked: raises RunRefused."""
    errors = [f"plan: {p}" for p in validate(plan) if p.severity == "error"]
    if errors:  # checked before expansion: a plan with errors may not even expand
        raise RunRefused("\n".join(errors))
    try:
        steps = expand(plan) if steps is None else steps
    except SequenceTooLong as e:
        raise RunRefused(f"plan: {e}") from e
    registry = options.registry or CreatedFiles(Path(os.devnull))
    run = PreparedRun(plan, endpoints, options, steps, registry)
    run.jobfiles = _Checks(run).run()
    return run


def steps_words(numbers: list[int]) -> str:
    """'step 3', 'steps 1 to 128', 'steps 1, 4 and 7'."""
    if len(numbers) == 1:
        return f"step {numbers[0]}"
    if numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"steps {numbers[0]} to {numbers[-1]}"
    return "steps " + ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"


class _Checks:
    """One pass of the checks over ``run`` (a fresh one for every ``prepare``)."""

    def __init__(self, run: PreparedRun) -> None:
        self.run_ = run
        self.plan, self.endpoints, self.options = run.plan, run.endpoints, run.options
        self.problems: list[str] = []  # what stands in the way
        self.missing: list[str] = []  # local folders new test files need
        self.engines: dict[str, EngineUse] = {}
        self.target_errors: dict[tuple[str, str], list[int]] = {}
        self.net_ports: dict[int, int] = {}  # each step's first network port (a rebuilt job file keeps it)
        self.reconfirm: list[WriteRisk] = []  # armed by name, but confirmed (window) for another object

    def run(self) -> JobFiles:
        run, o, problems = self.run_, self.options, self.problems
        if not run.steps:
            problems.append("plan: nothing to run — no worker has both an assigned access spec and a target")
        used = sorted({mi for s in run.steps for mi in s.managers()})
        self._refuse_unmapped(used)
        self.engines = self._choose_engines(used)
        self._unknown_map_keys()
        out = [self._step_files(step) for step in run.steps]
        problems += [
            f"{steps_words(numbers)}, manager {name!r}: {text}"
            for (name, text), numbers in self.target_errors.items()
        ]
        self._place_over_ssh(out)
        run.own_files = self._own_files(out)
        risks = self._local_risks(out)
        risks += [
            r
            for r in self._check_remote_files(out)
            if r not in risks and not is_armed(r, o.allow_write, o.allow_write_in_use)
        ]
        problems += self._job_text_refused(out)
        problems += raw_disks_refused(out, may_open_raw_disks())
        problems += self._polled_queues_refused(out)
        self._refuse(out, risks)
        return out

    def _refuse(self, out: JobFiles, risks: list[WriteRisk]) -> None:
        """RunRefused when anything stands in the way, or is left to ask (arming, folders, hosts)."""
        o = self.options
        asks = [
            f"the folder {f} does not exist (fio would create it without a word); create it first, "
            "or choose another place for the test file"
            for f in self.missing
        ]
        asks += unarmed(risks, o.allow_write, o.allow_write_in_use)
        asks += [
            f"manager {r.manager!r}, target {r.target!r}: {r.spelled or r.path} changed after you confirmed "
            f"writing to it: it now leads to {r.path}, {describe_object(r.obj)}"
            + (f", a loop device over {describe_object(r.backing)}" if r.backing else "")
            + "; nothing was written — confirm it again"
            for r in self.reconfirm
        ]
        risks += [r for r in self.reconfirm if r not in risks]
        plain = self._unarmed_plain_servers(out)
        asks += [unverified.refusal(name, host, self.run_.unverifiable.get(name, "")) for name, host in plain]
        if self.problems or asks:
            raise RunRefused(
                "\n".join(dict.fromkeys(self.problems + asks)),
                risks,
                self.missing,
                not self.problems,
                unverified=plain,
            )

    def _refuse_unmapped(self, used: list[int]) -> None:
        unmapped = [
            self.plan.managers[mi].name for mi in used if self.plan.managers[mi].name not in self.endpoints
        ]
        if unmapped:
            self.problems.append(
                "managers without a host: "
                + ", ".join(repr(n) for n in unmapped)
                + " — map each with --manager NAME=HOST[:PORT] (the address in an imported file "
                "is never contacted)"
            )
            raise RunRefused("\n".join(self.problems))

    def _unknown_map_keys(self) -> None:
        names = list(
            dict.fromkeys(t.name.strip() for m in self.plan.managers for w in m.workers for t in w.targets)
        )
        for key, value in self.options.mapping.items():
            if not any(lookup_mapping(n, {key: key}) for n in names):
                self.problems.append(
                    f"--map {key}={value}: no target of the plan is named {key!r}; its targets are "
                    + (", ".join(repr(n) for n in names[:20]) or "none")
                )

    def _own_files(self, out: JobFiles) -> set[tuple[str, str]]:
        registry = self.run_.registry
        return {
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

    @staticmethod
    def _job_text_refused(out: JobFiles) -> list[str]:
        said: list[str] = []
        for files in out:
            for jf in files.values():
                try:
                    check_job_text(jf.text)
                except JobRefused as e:
                    said.append(f"manager {jf.manager!r}: {e}")
        return said

    def _choose_engines(self, used: list[int]) -> dict[str, EngineUse]:
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
                self.problems.append(str(e))
                out[ep.name] = EngineUse("")  # the run is refused; its job files are still checked
                continue
            if use.note:
                self.run_.notes.append(f"manager {ep.name!r}: {use.note}")
        return out

    def _polled_queues_refused(self, out: JobFiles) -> list[str]:
        """hipri (polled completions) on a local target whose disk has no polled queues: fio's I/O would
        fail there at once, so the run is refused first, naming the target and the disk."""
        said: list[str] = []
        for files in out:
            for name, jf in files.items():
                use = self.engines.get(name)
                if use is None or "hipri" not in use.options or self.endpoints[name].host != "local":
                    continue
                if not self.plan.setup.direct_io:
                    said.append(
                        f"manager {name!r}: io_uring's hipri needs direct I/O; tick Direct I/O or untick hipri"
                    )
                said += [_unpolled(name, job) for job in jf.jobs if not _polled(job)]
        return list(dict.fromkeys(said))

    def _place_over_ssh(self, out: JobFiles) -> None:
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
                placed = remote_hold.place_there(ep.python_there, self.run_.host_key(name), wanted)
            except remote_hold.RemoteUnavailable as e:
                self.run_.unverifiable[name] = str(e)
                self.run_.note(
                    f"manager {name!r}: Fiometer's checks could not run on that host ({e}; they need "
                    "python3 there); it cannot verify that host's targets, as on a plain fio server"
                )
                continue
            self._rebuild_over_ssh(name, out, placed)
            for files in out:
                for j in files[name].jobs if name in files else []:
                    if not j.network:
                        self._place_job(name, j, placed.get(j.path))

    def _rebuild_over_ssh(self, name: str, out: JobFiles, placed: dict[str, Placement | str]) -> None:
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

        for step, files in zip(self.run_.steps, out, strict=True):
            if name not in files:
                continue
            mi = next(i for i in step.managers() if self.plan.managers[i].name == name)
            with contextlib.suppress(TargetError):  # built once already: the same targets, placed
                files[name] = self._jobfile(step, mi, place, self.net_ports[step.index])

    def _place_job(self, name: str, j: JobInfo, found: object) -> None:
        where = f"manager {name!r}, target {j.target_name!r}"
        if not isinstance(found, Placement):
            self.problems.append(f"{where} on that host: {found or 'not examined'}")
        elif found.path != j.path:
            self.problems.append(
                f"{where}: {j.path} leads to {found.path} on that host (a link); give {found.path} "
                "itself, so fio opens what was checked"
            )
        elif found.missing_folder:
            self.problems.append(
                f"{where}: the folder {found.missing_folder} does not exist on that host (fio would create "
                "it without a word); create it there first"
            )
        else:
            j.placement = dataclasses.replace(found, spelled=j.placement.spelled if j.placement else j.path)

    def _unarmed_plain_servers(self, out: JobFiles) -> list[tuple[str, str]]:
        """(manager, host) of the plain fio servers this run writes on without the host's arming; the armed
        ones get a note."""
        if self.options.engine == "null":  # the null engine never opens its files
            return []
        found: list[tuple[str, str]] = []
        for name, ep in self.endpoints.items():
            jobs = [j for files in out for j in (files[name].jobs if name in files else [])]
            if not self.run_.plain(name) or not unverified.writes_there(jobs, name in self.run_.lays_out):
                continue
            if unverified.armed(name, ep.host, self.options.allow_unverified):
                self.run_.note(unverified.note(name, ep.shown_as or ep.host))
            else:
                found.append((name, ep.shown_as or ep.host))
        return found

    def _step_files(self, step: Step) -> dict[str, JobFile]:
        """The step's job file per manager; what stands in the way goes to ``problems``, the local folders
        new test files need to ``missing``."""
        net_ports = fresh_port_base()  # fresh ports per step: a listener left over never answers
        self.net_ports[step.index] = net_ports
        files: dict[str, JobFile] = {}
        for mi in step.managers():
            ep = self.endpoints[self.plan.managers[mi].name]
            try:
                place = placer(ep.host == "local", ep.os_name, ep.name, ep.python_there is not None)
                files[ep.name] = self._jobfile(step, mi, place, net_ports)
            except TargetError as e:  # said once per run, with the steps it stands in the way of
                self.target_errors.setdefault((ep.name, str(e)), []).append(step.index + 1)
                continue
            if self.options.engine == "null":  # null never opens files
                continue
            for job in files[ep.name].jobs:
                folder = job.placement.missing_folder if job.placement else None
                if folder and folder not in self.missing:
                    self.missing.append(folder)
        return files

    def _jobfile(self, step: Step, mi: int, place: Callable[[str], Placement], net_ports: int) -> JobFile:
        """One manager's job file for the step, its targets placed by ``place``. Raises TargetError."""
        o = self.options
        ep = self.endpoints[self.plan.managers[mi].name]
        settings = JobSettings(
            mapping=o.mapping,
            run_time=o.run_time,
            ramp_up=o.ramp_up,
            engine=self.engines[ep.name].name or None,
            engine_options=self.engines[ep.name].options,
            title=self.plan.name,
            place=place,
            allow_mounted=lambda job: armed_twice(job, o.allow_write, o.allow_write_in_use),
            default_file_size=o.default_file_size or DEFAULT_FILE_SIZE,
            file_size=o.file_size,
            peer_addresses={n: e.address for n, e in self.endpoints.items()},
            net_port_base=net_ports,
        )
        return step_jobfile(self.plan, step, mi, ep.os_name, settings)

    def _local_risks(self, out: JobFiles) -> list[WriteRisk]:
        """The unarmed writes of the steps' job files; armed ones are remembered (``arming``) for the
        object the user confirmed, and one whose name leads to another object now is to be confirmed again
        (``reconfirm``): a confirmation binds to the object shown, never to a name."""
        o, run = self.options, self.run_
        risks: list[WriteRisk] = []
        for files in out:
            for r in write_risks(files, run.registry, o.engine):
                if not is_armed(r, o.allow_write, o.allow_write_in_use):
                    if r not in risks:
                        risks.append(r)
                    continue
                self._armed(r)
            for jf in files.values():
                run.arming_of(jf.manager).in_use |= {
                    j.path for j in jf.jobs if armed_twice(j, o.allow_write, o.allow_write_in_use)
                }
            for n in unverified_notes(files):
                run.note(n)
        return risks

    def _armed(self, r: WriteRisk) -> None:
        """An armed write: bound to the object the user was shown, or to be confirmed again."""
        o = self.options
        shown = {(o.armed_objects[n], o.armed_backings.get(n)) for n in r.names() if n in o.armed_objects}
        if shown and (r.obj, r.backing) not in shown:  # confirmed for another object: asked again
            if r not in self.reconfirm:
                self.reconfirm.append(r)
            return
        self.run_.arming_of(r.manager).objects[r.path] = r.obj  # armed for this object only
        if r.obj is not None and r.obj[0] != "file" and r.spelled and r.spelled != r.path:
            self.run_.note(
                f"manager {r.manager!r}, target {r.target!r}: {r.spelled} is a link to the raw "
                f"device {r.path} ({r.obj[0]} {r.obj[1]}:{r.obj[2]}); armed, that device is written"
            )

    def _check_remote_files(self, out: JobFiles) -> list[WriteRisk]:
        """Ask each remote manager's fio what is at its test files' paths (app.engine.transports.remote_files)."""
        if self.options.engine == "null":  # the null engine never opens its files
            return []
        risks: list[WriteRisk] = []
        for name, ep in self.endpoints.items():
            if ep.host == "local" or self.run_.checked_there(name):
                continue  # this machine's and ssh:// hosts' targets: placed and armed as local ones
            mine = [files[name] for files in out if name in files]
            found = remote_files.remote_targets(mine)
            if found:
                risks += self._probe_remote(name, ep, mine, found)
        return risks

    def _probe_remote(
        self,
        name: str,
        ep: ManagerEndpoint,
        mine: list[JobFile],
        found: dict[str, remote_files.RemoteFile],
    ) -> list[WriteRisk]:
        self.run_.remote_files[name] = found
        targets = {j.path: j.target_name for jf in mine for j in jf.jobs}
        try:
            probed = remote_files.probe(
                ep.make_transport,
                list(found.values()),
                windows=ep.windows,
                where=self.run_.where(name),
                bounds=self.options.bounds,
            )
        except TransportError as e:
            self.problems.append(
                f"manager {name!r}: Fiometer could not check its test files through fio: {e}"
            )
            return []
        risks, problems = remote_files.assess(name, list(found.values()), probed, targets)
        self.problems += problems
        if any(probed[f].state in (remote_files.MISSING, remote_files.SMALLER) for f in found if f in probed):
            self.run_.lays_out.add(name)
        return risks


def _polled(job: JobInfo) -> bool:
    """A network job, or a target on a disk with polled queues (io_uring's hipri works there)."""
    if job.network:
        return True
    disk = disk_of(job.path)
    return bool(disk and io_uring_host.polled_queues(disk))


def _unpolled(name: str, job: JobInfo) -> str:
    disk = disk_of(job.path)
    where = f"/sys/block/{disk}/queue/io_poll is not 1" if disk else "no disk is known behind it"
    return (
        f"manager {name!r}, target {job.target_name!r} ({job.path}): io_uring's hipri needs a "
        f"disk with polled queues ({where}; NVMe gets them from the nvme module's poll_queues); "
        "untick hipri"
    )
