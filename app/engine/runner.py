"""Runs a plan's steps: for each step one fio run per manager, all managers started together.

Qt-free. The GUI and the CLI both drive it and receive everything through a RunListener (called
on the runner's own thread; the GUI forwards to its thread with queued signals). Stop ends the
current step gracefully (fio's final numbers are kept) and the run after it; Abort ends at once.
"""

from __future__ import annotations

import math
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.engine.disk_telemetry import step_disk_context
from app.engine.fioproto.client import run_delay
from app.engine.job_policy import JobRefused, check_job_text
from app.engine.jobfile import JobFile, JobInfo, step_jobfile, stop_order
from app.engine.message_gate import MessageGate
from app.engine.network_jobs import fresh_port_base, net_failure_hint, reach_address
from app.engine.placement import placer
from app.engine.remote_host import RemoteHost
from app.engine.safety import (
    CreatedFiles,
    WriteRisk,
    armed_twice,
    is_armed,
    unarmed,
    unverified_notes,
    write_risks,
)
from app.engine.sequence import STEADY, SequenceTooLong, Step, expand
from app.engine.step_watch import Action, StepWatch
from app.engine.targets import TargetError, lookup_mapping
from app.engine.telemetry import Sample, StepTelemetry
from app.engine.transport import Event, Finished, Message, Snapshot, Transport, TransportError
from app.model.plan import Plan
from app.model.steady_state import SteadyWatch
from app.model.validation import validate

SENDERS_FIRST_S = 5.0  # Stop: how long network receivers wait for their senders to end before they are stopped


class RunRefused(Exception):
    """The plan cannot start; str() lists what to fix (unmapped managers, unplaceable targets, ...).

    ``risks`` are the unarmed writes and ``missing_folders`` the local folders new test files need, so a
    GUI can ask about exactly those; ``only_asks`` is True when nothing else stands in the way."""

    def __init__(self, text: str, risks: list[WriteRisk] | None = None, missing_folders: list[str] | None = None,
                 only_asks: bool = False):
        super().__init__(text)
        self.risks = risks or []
        self.missing_folders = missing_folders or []
        self.only_asks = only_asks


@dataclass
class ManagerEndpoint:
    """How to reach one manager: its OS (for job text) and a factory for a fresh transport per step."""

    name: str
    os_name: str
    make_transport: Callable[[], Transport]
    host: str = "local"
    fio_version: str = ""
    environment: dict[str, Any] = field(default_factory=dict)  # a remote host as its probe describes it
    protocol: int | None = None  # fio's client/server protocol version (remote managers)
    close: Callable[[], None] | None = None  # ends what reaching it needed (an SSH session), after the run
    server: tuple[str, int] | None = None  # a fio server's (host, port): its connection may run in a RemoteHost

    @property
    def address(self) -> str:
        """Where other managers reach this one (network workers connect here): its host without the port."""
        return reach_address(self.host)


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
    registry: CreatedFiles | None = None  # test files Fiometer created (None: nothing is known)
    # steps with at least this many fio servers read and decode them in another process (0: never)
    decode_apart: int = 1


@dataclass
class StepOutcome:
    step: Step
    status: str  # complete | stopped | partial | failed
    results: list[Sample]  # whole-step numbers per level, from fio's final reports
    finished: dict[str, Finished]
    raw_output: dict[str, str | None]
    started: float
    ended: float
    job_started: dict[str, float] = field(default_factory=dict)  # manager -> fio's job start (time.time())

    @property
    def start_spread(self) -> float | None:
        """Seconds between the first and the last manager's job start, where fio says when."""
        times = list(self.job_started.values())
        return max(times) - min(times) if len(times) > 1 else None


@dataclass
class RunSummary:
    """How many of a run's planned steps completed, were stopped, failed, or never ran."""

    planned: int
    complete: int = 0
    stopped: int = 0
    failed: int = 0

    @property
    def ran(self) -> int:
        return self.complete + self.stopped + self.failed

    @property
    def skipped(self) -> int:
        return self.planned - self.ran

    def text(self) -> str:
        """e.g. '2 of 4 steps ran (1 complete, 1 stopped); 2 skipped'."""
        parts = [f"{n} {what}" for n, what in ((self.complete, "complete"), (self.stopped, "stopped"),
                                                  (self.failed, "failed")) if n]
        ran = f"{self.ran} of {self.planned} step{'s' if self.planned != 1 else ''} ran"
        return ran + (f" ({', '.join(parts)})" if parts else "") + (f"; {self.skipped} skipped" if self.skipped else "")


def summarize(statuses: list[str], planned: int) -> RunSummary:
    """The summary of steps that ended with ``statuses`` (complete | stopped | partial | failed)."""
    out = RunSummary(planned)
    for status in statuses:
        if status == "complete":
            out.complete += 1
        elif status == "stopped":
            out.stopped += 1
        else:
            out.failed += 1
    return out


def idle_jobs(report: Snapshot | None, jobfile: JobFile) -> list[JobInfo]:
    """The jobs of ``jobfile`` that did no I/O in fio's last report (absent ones included): fio refused
    or dropped them (a mounted device, a bad option, a missing file) even when it exits with 0."""
    done: dict[str, int] = {}
    for job in report.jobs if report is not None else []:
        ios = sum(int((job.get(d) or {}).get("total_ios") or 0) for d in ("read", "write", "trim", "mixed"))
        done[str(job.get("jobname"))] = done.get(str(job.get("jobname")), 0) + ios
    return [j for j in jobfile.jobs if not done.get(j.name)]


def no_io_reason(idle: list[JobInfo], said: list[str]) -> str:
    """Why a step failed although fio ended normally: which targets did nothing, in fio's own words."""
    paths = list(dict.fromkeys(j.path for j in idle))
    about = [t for t in said if any(p in t for p in paths)] or said
    words = " / ".join(dict.fromkeys(about[:3]))
    where = ", ".join(paths)
    return (f"fio did no I/O on {where}" + (f"; fio said: {words}" if words else
                                            " and gave no reason (it refused or dropped the job)"))


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


class Runner:
    def __init__(self, plan: Plan, endpoints: dict[str, ManagerEndpoint], listener: RunListener | None = None,
                 options: RunOptions | None = None, *, steps: list[Step] | None = None):
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
        self._stop_order: tuple[set[str], set[str]] = (set(), set())  # network senders first (jobfile.stop_order)
        self._later_stop_at: float | None = None  # when the receivers are stopped at the latest
        self.outcomes: list[StepOutcome] = []
        self.last_telemetry: StepTelemetry | None = None
        self.notes: list[str] = []  # what could not be verified (targets on remote managers)
        self._own_files: set[tuple[str, str]] = set()
        self._remote_host: RemoteHost | None = None
        self.jobfiles = self._prepare()

    # --- before anything runs --------------------------------------------------------------
    def _prepare(self) -> list[dict[str, JobFile]]:
        problems: list[str] = []
        if not self.steps:
            problems.append("plan: nothing to run — no worker has both an assigned access spec and a target")
        used = sorted({mi for s in self.steps for mi in s.managers()})
        unmapped = [self.plan.managers[mi].name for mi in used if self.plan.managers[mi].name not in self.endpoints]
        if unmapped:
            problems.append("managers without a host: " + ", ".join(repr(n) for n in unmapped)
                            + " — map each with --manager NAME=HOST[:PORT] (the address in an imported file "
                              "is never contacted)")
            raise RunRefused("\n".join(problems))
        out: list[dict[str, JobFile]] = []
        o = self.options
        missing: list[str] = []
        names = list(dict.fromkeys(t.name.strip() for m in self.plan.managers for w in m.workers for t in w.targets))
        for key, value in o.mapping.items():
            if not any(lookup_mapping(n, {key: key}) for n in names):
                problems.append(f"--map {key}={value}: no target of the plan is named {key!r}; its targets are "
                                + (", ".join(repr(n) for n in names[:20]) or "none"))
        for step in self.steps:
            net_ports = fresh_port_base()
            files: dict[str, JobFile] = {}
            for mi in step.managers():
                ep = self.endpoints[self.plan.managers[mi].name]
                kwargs = {"default_file_size": o.default_file_size} if o.default_file_size else {}
                kwargs["file_size"] = o.file_size
                kwargs["peer_addresses"] = {n: e.address for n, e in self.endpoints.items()}
                kwargs["net_port_base"] = net_ports  # fresh ports per step: a listener left over never answers
                try:
                    files[ep.name] = step_jobfile(
                        self.plan, step, mi, ep.os_name, mapping=o.mapping, run_time=o.run_time,
                        ramp_up=o.ramp_up, engine=o.engine, title=self.plan.name,
                        place=placer(ep.host == "local", ep.os_name, ep.name),
                        allow_mounted=lambda job: armed_twice(job, o.allow_write, o.allow_write_in_use), **kwargs)
                except TargetError as e:
                    problems.append(f"step {step.index + 1}, manager {ep.name!r}: {e}")
                    continue
                for job in files[ep.name].jobs:
                    folder = job.placement.missing_folder if job.placement else None
                    if folder and folder not in missing and o.engine != "null":  # null never opens files
                        missing.append(folder)
            out.append(files)
        registry = o.registry or CreatedFiles(Path(os.devnull))
        # local test files this run creates, or that were Fiometer's before it: remembered after every step
        self._own_files = {(j.manager, j.path) for files in out for jf in files.values() for j in jf.jobs
                           if not j.is_device and j.placement is not None and j.placement.verified
                           and (not j.placement.exists or registry.owns(j.placement))}
        risks: list[WriteRisk] = []
        for files in out:
            risks += [r for r in write_risks(files, registry, o.engine)
                      if r not in risks and not is_armed(r, o.allow_write, o.allow_write_in_use)]
            self.notes += [n for n in unverified_notes(files) if n not in self.notes]
        for files in out:
            for jf in files.values():
                try:
                    check_job_text(jf.text)
                except JobRefused as e:
                    problems.append(f"manager {jf.manager!r}: {e}")
        asks = [f"the folder {f} does not exist (fio would create it without a word); create it first, "
                "or choose another place for the test file" for f in missing]
        asks += unarmed(risks, o.allow_write, o.allow_write_in_use)
        if problems or asks:
            raise RunRefused("\n".join(dict.fromkeys(problems + asks)), risks, missing, not problems)
        return out

    def step_seconds(self, index: int) -> int:
        """Ramp-up + run time of step ``index`` from its job files; 0 when it runs until Stop."""
        return max((jf.step_seconds for jf in self.jobfiles[index].values()), default=0)

    @property
    def summary(self) -> RunSummary:
        return summarize([o.status for o in self.outcomes], len(self.steps))

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
        status = "failed"  # what the store records if anything below raises
        try:
            status = self._run_steps()
        finally:
            if self._remote_host is not None:
                self._remote_host.close()
            self.close_endpoints()
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
            outcome = self._run_step(step, files)
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

    def _run_step(self, step: Step, files: dict[str, JobFile]) -> StepOutcome:
        events: queue.Queue[tuple[str, Event]] = queue.Queue()
        jobs = [j for jf in files.values() for j in jf.jobs]
        disks = step_disk_context(jobs, {n: self.endpoints[n].os_name for n in files},
                                  [n for n in files if self.endpoints[n].host == "local"], self.options.engine)
        telemetry = StepTelemetry({j.name: (j.manager, j.worker_key, j.target_key) for j in jobs},
                                  self.options.status_interval, disks)
        self.last_telemetry = telemetry
        finished: dict[str, Finished] = {}
        raw: dict[str, str | None] = {name: None for name in files}
        started = time.time()
        registry = self.options.registry
        ours = [j.path for jf in files.values() for j in jf.jobs if (j.manager, j.path) in self._own_files]
        self._stopping_step = False
        with self._lock:
            self._stop_order, self._later_stop_at = stop_order(files), None
        steady = SteadyWatch(self.plan.setup.precondition) if step.phase == STEADY else None
        self.listener.step_started(step, files)
        transports = self._start_together(files, finished)
        go_at = time.monotonic()
        threads = []
        for name, transport in transports.items():
            th = threading.Thread(target=self._pump, args=(name, transport, events), daemon=True,
                                  name=f"fiometer-{name}")
            th.start()
            threads.append(th)
        watch = StepWatch({n: f"{n} ({self.endpoints[n].host})" if self.endpoints[n].host != "local" else n
                           for n in files},
                          run_s=max(jf.run_time + jf.tail_s for jf in files.values()),
                          ramp_s=max(jf.ramp_up for jf in files.values()),
                          interval=self.options.status_interval,
                          ramp=any(jf.ramp_up for jf in files.values()), go_at=go_at)
        for name in finished:
            watch.finished(name)
        gates = {name: MessageGate() for name in files}
        done: set[str] = set()
        last: dict[str, Snapshot] = {}  # each manager's newest report (its final one once it ends)
        said: dict[str, list[str]] = {name: [] for name in files}  # fio's warnings and errors, per manager

        def emit(samples: list[Sample]) -> None:
            nonlocal steady
            if samples:
                self.listener.samples(step, samples)
                if steady is not None and self._steady(steady, samples):
                    steady = None
                    self._end_transports()

        def act(actions: list[Action]) -> bool:
            """Apply the watch's actions; False when the report that caused them must not be used."""
            use = True
            for a in actions:
                tr = transports.get(a.manager)
                self.listener.message(step, Message(a.manager, a.text, a.level))
                if a.kind == "stop" and tr is not None:
                    tr.stop()
                elif a.kind == "abort":
                    use = False
                    if tr is not None:
                        tr.abort()
                    if a.manager not in finished:
                        finished[a.manager] = Finished(a.manager, False, a.text)
            return use

        try:
            while len(finished) < len(files):
                try:
                    name, ev = events.get(timeout=0.25)
                except queue.Empty:
                    name, ev = "", None
                now = time.monotonic()
                if ev is not None and name not in finished:
                    if isinstance(ev, Snapshot):
                        if act(watch.on_snapshot(name, ev.jobs, now)):
                            last[name] = ev
                            if ev.final:
                                raw[name] = ev.raw
                            emit(telemetry.update(ev))
                    elif isinstance(ev, Message):
                        if ev.level in ("warning", "error"):
                            said[name].append(ev.text)
                        if gates[name].admit(ev.text):
                            self.listener.message(step, ev)
                    elif isinstance(ev, Finished):
                        forced = watch.forced_reason(name, ev.ok)
                        if forced:
                            ev.ok = False
                            ev.reason = forced + (f" ({ev.reason})" if ev.reason else "")
                        if ev.ok and not (ev.stopped or self._stopping_step or self._abort.is_set()):
                            idle = [j for j in idle_jobs(last.get(name), files[name])
                                    if self._io_expected(j, files[name])]
                            if idle:
                                ev.ok = False
                                ev.reason = no_io_reason(idle, said[name])
                        if not ev.ok:
                            paths = ", ".join(j.path for j in files[name].jobs)
                            ev.reason = f"{ev.reason or 'fio failed'} (targets of manager {name!r}: {paths})"
                            ev.reason += net_failure_hint(any(j.network for j in files[name].jobs),
                                                          " ".join([ev.reason, *said[name]]))
                        finished[name] = ev
                        watch.finished(name)
                act(watch.due(now, {n: getattr(t, "bytes_received", None) for n, t in transports.items()},
                              {n: getattr(t, "last_heard", None) for n, t in transports.items()}))
                self._stop_later(now, finished)
                for n in finished:
                    if n not in done:
                        done.add(n)
                        emit(telemetry.manager_done(n))
                        self.listener.manager_finished(step, finished[n])  # as it happens: a failure shows at once
                emit(telemetry.tick(now))
            emit(telemetry.flush())
        except BaseException:  # a listener failed (e.g. the results database): fio must not run on
            self.abort()
            raise
        finally:
            for th in threads:
                th.join(timeout=5)
            with self._lock:
                self._current.clear()
        for name, gate in gates.items():
            for note in (getattr(transports.get(name), "dropped_note", None), gate.summary(name)):
                if note:
                    self.listener.message(step, Message(name, note, "warning"))
        start_times = {n: t for n, tr in transports.items() if (t := getattr(tr, "job_started_at", None))}
        if len(start_times) > 1:
            first = min(start_times.values())
            spread = max(start_times.values()) - first
            detail = ", ".join(f"{n} +{(t - first) * 1000:.0f} ms" for n, t in sorted(start_times.items()))
            self.listener.message(step, Message("", f"managers' jobs started within {spread * 1000:.0f} ms "
                                                    f"({detail})", "info"))
        if ours and registry is not None and self.options.engine != "null":
            registry.add(p for p in ours if os.path.isfile(p))
        ok = [f for f in finished.values() if f.ok]
        if self._stopping_step or self._abort.is_set():
            status = "stopped"
        elif len(ok) == len(files):
            status = "complete"
        elif ok:
            status = "partial"
        else:
            status = "failed"
        return StepOutcome(step, status, telemetry.final_results(), finished, raw, started, time.time(),
                           start_times)

    def _start_together(self, files: dict[str, JobFile], finished: dict[str, Finished]) -> dict[str, Transport]:
        """Load every manager's job first (remote ones in parallel), then start them all at once:
        RUN to the fio servers, then the local fio processes (which start when launched)."""
        transports = self._make_transports(files)
        loadable = {n: t for n, t in transports.items() if hasattr(t, "go")}
        errors: dict[str, str] = {}

        def load(name: str, transport: Transport) -> None:
            try:
                transport.start(files[name].text, status_interval=self.options.status_interval)
            except TransportError as e:
                errors[name] = str(e)

        loaders = [threading.Thread(target=load, args=item, daemon=True, name=f"fiometer-load-{item[0]}")
                   for item in loadable.items()]
        for th in loaders:
            th.start()
        for th in loaders:
            th.join()
        loaded = [t for n, t in loadable.items() if n not in errors and getattr(t, "loaded_at", None) is not None]
        if len(loaded) > 1:
            time.sleep(run_delay([t.loaded_at for t in loaded], time.monotonic()))  # type: ignore[attr-defined]
        for name, transport in transports.items():
            if name in errors:
                continue
            if name in loadable:
                transport.go()  # type: ignore[attr-defined]
            else:
                try:
                    transport.start(files[name].text, status_interval=self.options.status_interval)
                except TransportError as e:
                    errors[name] = str(e)
                    continue
            with self._lock:
                self._current[name] = transport
                if self._stop_all.is_set() or self._stopping_step:  # Stop pressed while managers started
                    transport.stop()
        for name, reason in errors.items():
            finished[name] = Finished(name, False, reason)
            transports.pop(name)
        return transports

    def _make_transports(self, files: dict[str, JobFile]) -> dict[str, Transport]:
        """A fresh transport per manager; fio servers through the run's RemoteHost when the step has
        ``decode_apart`` of them or more."""
        eps = {name: self.endpoints[name] for name in files}
        servers = {name: ep.server for name, ep in eps.items() if ep.server is not None}
        if not (0 < self.options.decode_apart <= len(servers)):
            return {name: ep.make_transport() for name, ep in eps.items()}
        if self._remote_host is None:
            self._remote_host = RemoteHost()
        host = self._remote_host
        return {name: host.transport(servers[name], name) if name in servers else ep.make_transport()
                for name, ep in eps.items()}

    def _io_expected(self, job: JobInfo, jf: JobFile) -> bool:
        """A job should have done I/O unless its spec waits (Iometer's delay) about as long as the step runs."""
        spec = self.plan.spec(job.spec)
        delay_ms = max((ln.delay for ln in spec.lines), default=0) if spec else 0
        return 2 * delay_ms < jf.run_time * 1000

    @staticmethod
    def _steady(watch: SteadyWatch, samples: list[Sample]) -> bool:
        """A precondition step's ALL numbers have met the steady-state rule."""
        return any([watch.add(s.t, s.interval.ios, s.interval.seconds) for s in samples if s.level == "all"])

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
