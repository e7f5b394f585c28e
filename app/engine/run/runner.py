"""Runs a plan's steps: for each step one fio run per manager, all managers started together.

Qt-free. The GUI and the CLI both drive it and receive everything through a RunListener (called
on the runner's own thread; the GUI forwards to its thread with queued signals). Stop ends the
current step gracefully (fio's final numbers are kept) and the run after it; Abort ends at once.

Building a Runner contacts nothing. ``prepare()`` runs the checks (``run.preflight``: they reach the
managers) and keeps the ``PreparedRun`` they return, or raises RunRefused; ``prepare(options)`` checks
again with the user's answers. ``run()`` executes the prepared run (preparing it first if nobody did).
A step's targets are held by ``run.step_targets``, its managers started by ``run.starting`` and followed
by ``run.step_loop``.
"""

from __future__ import annotations

import logging
import math
import os
import queue
import threading
import time
from collections.abc import Sequence

from app.engine.jobs.jobfile import JobFile, JobInfo, stop_order
from app.engine.jobs.sequence import STEADY, Step
from app.engine.run.endpoint import ManagerEndpoint as ManagerEndpoint
from app.engine.run.listener import RunListener as RunListener
from app.engine.run.listener import RunSummary as RunSummary
from app.engine.run.listener import StepOutcome as StepOutcome
from app.engine.run.listener import io_start_times, summarize
from app.engine.run.managers import TransportPool
from app.engine.run.options import RunOptions as RunOptions
from app.engine.run.preflight import PreparedRun, prepare
from app.engine.run.preflight import RunRefused as RunRefused
from app.engine.run.starting import Starter, pump
from app.engine.run.step_loop import StepLoop
from app.engine.run.step_targets import StepTargets
from app.engine.run.step_watch import StepWatch
from app.engine.sampling.disk_telemetry import step_disk_context
from app.engine.sampling.telemetry import StepTelemetry
from app.engine.transports.transport import Event, Finished, Message, PushesEvents, Transport
from app.model.plan import Plan
from app.model.steady_state import SteadyWatch

__all__ = [
    "ManagerEndpoint",
    "PreparedRun",
    "RunListener",
    "RunOptions",
    "RunRefused",
    "RunSummary",
    "Runner",
    "StepOutcome",
    "io_start_times",
    "summarize",
]

log = logging.getLogger(__name__)
SENDERS_FIRST_S = (
    5.0  # Stop: how long network receivers wait for their senders to end before they are stopped
)
TICK_S = 0.1  # the step's liveness rules and ALL's overdue seconds are judged at most this often
BATCH_MAX = 512  # events handled together at most (their samples in one store transaction)
GATHER_S = 0.05  # after an event, how long the ones following it are waited for to join its batch


class Runner:
    """One run: ``prepare()`` (the checks, ``run.preflight``), then ``run()`` on a thread of the caller's;
    ``stop_step``, ``stop`` and ``abort`` from any thread."""

    def __init__(
        self,
        plan: Plan,
        endpoints: dict[str, ManagerEndpoint],
        listener: RunListener | None = None,
        options: RunOptions | None = None,
        *,
        steps: list[Step] | None = None,
    ):
        """``steps``: run these instead of the plan's own sequence (a load search's candidates). Nothing is
        contacted or checked here: ``prepare`` does that."""
        self.plan = plan
        self.endpoints = endpoints
        self.listener = listener or RunListener()
        self.options = options or RunOptions()
        self._given_steps = steps
        self.prepared: PreparedRun | None = None  # once the checks passed (``prepare``)
        self.steps: list[Step] = list(steps or [])  # the run's steps (the plan's, expanded, once prepared)
        self.jobfiles: list[dict[str, JobFile]] = []  # per step, by manager, once prepared
        self.notes: list[str] = []  # what could not be verified (targets on remote managers), once prepared
        self._stop_all = threading.Event()
        self._abort = threading.Event()
        self._lock = threading.Lock()
        self._current: dict[str, Transport] = {}
        self._stopping_step = False
        # network senders first (jobfile.stop_order)
        self._stop_order: tuple[set[str], set[str]] = (set(), set())
        self._later_stop_at: float | None = None  # when the receivers are stopped at the latest
        self.outcomes: list[StepOutcome] = []
        self.last_telemetry: StepTelemetry | None = None
        self._pool = TransportPool(self.options.decode_apart, self.options.hosts_per_process)
        self._record_said = False  # the created-files record's problem was said
        self._targets: StepTargets | None = None

    # --- before anything runs --------------------------------------------------------------
    def prepare(self, options: RunOptions | None = None) -> PreparedRun:
        """Run the checks (with ``options``, e.g. the writes the user armed since, when given) and keep what
        they found for ``run``; raises RunRefused. Only the checks run again: the endpoints stay."""
        self.prepared = None  # a refused check leaves nothing to run
        if options is not None:
            self.options = options
            self._pool = TransportPool(options.decode_apart, options.hosts_per_process)
        prepared = prepare(self.plan, self.endpoints, self.options, self._given_steps)
        self.prepared = prepared
        self.steps, self.jobfiles, self.notes = prepared.steps, prepared.jobfiles, prepared.notes
        self._targets = StepTargets(prepared, self._abort.is_set)
        return prepared

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
        Stop or Stop All; see ``summary``) | failed (a step failed). Prepares the run first if nobody did
        (RunRefused then comes from here)."""
        prepared = self.prepared if self.prepared is not None else self.prepare()
        self.listener.run_prepared(prepared.jobfiles)
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
        assert self.prepared is not None and self._targets is not None, "prepare() first"
        self._stopping_step = False
        with self._lock:
            self._stop_order, self._later_stop_at = stop_order(files), None
        telemetry = self._step_telemetry(files)
        laid_out: list[Message] = []
        held, refusal = self._targets.hold(files, laid_out)
        finished = {} if refusal else self._targets.remote_refusals(files, laid_out)
        started = time.time()  # after any test file was laid out, here or on a remote manager
        own = self.prepared.own_files
        ours = [
            j.path
            for jf in files.values()
            for j in jf.jobs
            if (j.manager, j.path) in own and j.manager not in held
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
        transports = self._starter().start_together(
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
        try:
            self._follow_transports(loop, transports)
        finally:
            self._targets.release(held)
        self._after_step(step, loop, transports, ours)
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

    def _follow_transports(self, loop: StepLoop, transports: dict[str, Transport]) -> None:
        """The step's transports read (pushed to, or pumped by a thread each) and followed until all ended."""
        events: queue.Queue[tuple[str, Event]] = queue.Queue()
        for transport in transports.values():
            if isinstance(transport, PushesEvents):
                transport.push_to(events.put)
        threads = [
            threading.Thread(
                target=pump, args=(name, transport, events), daemon=True, name=f"fiometer-{name}"
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

    def _after_step(
        self, step: Step, loop: StepLoop, transports: dict[str, Transport], ours: list[str]
    ) -> None:
        """What the step's end says, and the local test files it created remembered as Fiometer's."""
        assert self.prepared is not None
        for note in loop.closing_messages({n: t.dropped_note for n, t in transports.items()}):
            self.listener.message(step, note)
        registry = self.options.registry
        if ours and registry is not None and self.options.engine != "null":
            registry.add(p for p in ours if os.path.isfile(p))
        problem = self.prepared.registry.problem
        if problem is not None and not self._record_said:  # said once, the run goes on
            self._record_said = True
            self.listener.message(step, Message("", problem, "warning"))

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

    def _starter(self) -> Starter:
        return Starter(self.endpoints, self._pool, self.options.status_interval, self._started)

    def _started(self, name: str, transport: Transport) -> None:
        with self._lock:
            self._current[name] = transport
            if self._stop_all.is_set() or self._stopping_step:  # Stop pressed while managers started
                transport.stop()

    def _make_transports(self, files: dict[str, JobFile]) -> dict[str, Transport]:
        """A fresh transport per manager of the step (``managers.TransportPool``)."""
        return self._starter().make_transports(files)

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
