"""Runs a plan without freezing the window: the engine's Runner on a thread, its listener calls
turned into queued Qt signals that arrive on the GUI thread."""

from __future__ import annotations

import copy
import dataclasses
import functools
import pickle
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEventLoop, QObject, QTimer, Signal

from app.analysis.iometer_update_log import IometerUpdateLog, update_log_path
from app.engine.guards.safety import CreatedFiles, WriteRisk, arm, record_beside
from app.engine.jobs.sequence import Step
from app.engine.run.managers import ManagerError, build_endpoints
from app.engine.run.runner import (
    ManagerEndpoint,
    RunListener,
    Runner,
    RunOptions,
    RunRefused,
    RunSummary,
    StepOutcome,
)
from app.engine.transports.transport import Finished, Message
from app.live.data import charted
from app.model.plan import Plan
from app.session.run_apart import RunApart
from app.session.run_session import RunEnd, RunRequest, RunSession, needed_managers
from app.store import StoreError, open_store
from app.store.db_location import resolve_db_path
from app.ui.run import live_gc

IDLE_STATE = "idle"
STARTING = "starting"  # Start was pressed: the managers are probed and the checks run, off the GUI thread
RUNNING = "running"
STOPPING = "stopping"
CANCELLED = "cancelled"  # the end of a start stopped before it went (Stop, or closing, while STARTING)
TICK_MS = 250  # while a run is on: the window's one pump (charts, table and status redraw on it)

# Asked before a run that writes to raw disks or existing files: (risks) -> armed?
ArmQuestion = Callable[[list[WriteRisk]], bool]
# Asked when new test files need folders that do not exist: (folders) -> create them?
FolderQuestion = Callable[[list[str]], bool]
# Asked when the run writes on plain fio servers: ([(manager, host)]) -> the managers armed (empty: cancel)
HostsQuestion = Callable[[list[tuple[str, str]]], set[str]]


class QtRunListener(QObject, RunListener):
    """The window's listener: each callback (runner thread) becomes a queued signal (GUI thread).

    The runner calls it through the controller's Fanout, after the store recorder.
    """

    runStarted = Signal(object, object)  # steps, endpoints  # noqa: N815 (Qt naming)
    stepStarted = Signal(int, float, object)  # step index, seconds since the run started, Step  # noqa: N815
    samplesArrived = Signal(int, float, object)  # step index, step offset (s), list[Sample]  # noqa: N815
    messageArrived = Signal(object, object)  # Step | None, Message  # noqa: N815
    managerFinished = Signal(object, object)  # Step, Finished (a manager's fio ended)  # noqa: N815
    stepFinished = Signal(object)  # StepOutcome  # noqa: N815
    runFinished = Signal(str)  # complete | stopped | failed  # noqa: N815

    def __init__(self) -> None:
        QObject.__init__(self)
        self.t0 = time.monotonic()
        self.offset = 0.0

    def run_started(self, plan: Plan, steps: list[Step], endpoints: dict[str, ManagerEndpoint]) -> None:
        self.t0 = time.monotonic()
        self.runStarted.emit(steps, endpoints)

    def step_started(self, step: Step, jobfiles: dict) -> None:
        self.offset = time.monotonic() - self.t0
        self.stepStarted.emit(step.index, self.offset, step)

    def samples(self, step: Step, samples: list) -> None:
        # the chart values are computed here, on the runner's thread, not on the GUI thread
        self.samplesArrived.emit(step.index, self.offset, charted(samples))

    def message(self, step: Step | None, message: Message) -> None:
        self.messageArrived.emit(step, message)

    def manager_finished(self, step: Step, finished: Finished) -> None:
        self.managerFinished.emit(step, finished)

    def step_finished(self, outcome: StepOutcome) -> None:
        self.stepFinished.emit(outcome)

    # run_finished: runFinished is emitted by the controller once the run has ended and been recorded
    # (``RunDriver._ended``), so the GUI never waits for its thread or process


STARTUP_GUESS_S = 1.0  # a local fio's start-up and end, before a step has measured it


@dataclass
class RunProgress:
    steps: int = 0
    step: int = 0  # 1-based, 0 before the first step
    started: float = 0.0  # time.monotonic()
    step_started: float = 0.0
    step_seconds: list[float] = field(default_factory=list)  # ramp + run of each step; 0 = until Stop
    # seconds each step took beyond its ramp + run (fio's start-up: job files, laying out test files,
    # connecting to remote managers, its end): measured from the steps done, guessed before the first ends
    overheads: list[float] = field(default_factory=list)

    def elapsed(self) -> float:
        return time.monotonic() - self.started if self.started else 0.0

    def begin_step(self, step: int, now: float | None = None) -> None:
        """Step ``step`` (1-based) starts now; the step before it took what it took."""
        now = time.monotonic() if now is None else now
        if self.step and self.step - 1 < len(self.step_seconds):
            self.overheads.append(max(now - self.step_started - self.step_seconds[self.step - 1], 0.0))
        self.step, self.step_started = step, now

    def overhead(self) -> float:
        """The start-up (and end) each step adds to its ramp + run: the mean of the steps done so far."""
        return sum(self.overheads) / len(self.overheads) if self.overheads else STARTUP_GUESS_S

    def remaining(self, now: float | None = None) -> float | None:
        """Seconds until the last step ends, fio's start-up of each step included; None when a step runs
        until stopped."""
        if not self.step_seconds or any(s <= 0 for s in self.step_seconds[max(self.step - 1, 0) :]):
            return None
        now = time.monotonic() if now is None else now
        extra = self.overhead()
        if not self.step:
            return sum(self.step_seconds) + extra * len(self.step_seconds)
        current = self.step_seconds[self.step - 1] + extra - (now - self.step_started)
        after = self.step_seconds[self.step :]
        return max(current, 0.0) + sum(after) + extra * len(after)


class RunDriver(QObject):
    """Drives a run for the window (``window.controller``): prepares and arms it, runs its session on a thread
    or in a process of its own (app.session), and turns its listener calls into Qt signals. The buttons,
    questions and what the window shows are ``window.running.RunControl``'s."""

    state_changed = Signal(str)
    tick = Signal()  # every TICK_MS while a run is on, and once when it has ended
    refused = Signal(str)  # the run could not start: message for the user
    finished = Signal(str)  # complete | stopped | failed

    def __init__(
        self,
        parent: QObject | None = None,
        registry: CreatedFiles | None = None,
        db_path: str | Path | None = None,
        record: bool = True,
    ):
        """``db_path`` None: the user's results database (``$FIOMETER_DB`` or the OS default);
        ``record`` False runs without storing (nothing else changes)."""
        super().__init__(parent)
        self.state = IDLE_STATE
        self.registry = registry if registry is not None else record_beside(resolve_db_path(db_path))
        self.db_path = db_path
        self.record = record
        # the runner as the window prepared it (its steps, notes); it runs in ``session``: on a thread here, or
        # in a process of its own
        self.runner: Runner | None = None
        self.session: RunSession | RunApart | None = None
        self.thread: threading.Thread | None = None
        self.listener: QtRunListener | None = None
        # the last run's end: what was stored (run id, validity notes), where
        self.run_end: RunEnd | None = None
        self.progress = RunProgress()
        self.last_status = ""
        self.last_summary: RunSummary | None = None  # of the last run: steps ran, stopped, failed, skipped
        self._cancel_start = False  # Stop (or closing) came while the run was starting
        self.pump = QTimer(self)
        self.pump.setInterval(TICK_MS)
        self.pump.timeout.connect(self.tick.emit)

    @property
    def running(self) -> bool:
        return self.state != IDLE_STATE

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            if state == IDLE_STATE:
                self.pump.stop()
                self.tick.emit()
            elif not self.pump.isActive():
                self.pump.start()
            self.state_changed.emit(state)

    def _off_gui(self, work: Callable[[], Any]) -> Any:
        """``work()`` on a thread of its own while the window's event loop goes on (it paints, answers input,
        and Stop or closing reach ``stop``): probing remote managers and the checks on them take a second and
        more, which held the window still. Its result, or its exception raised here."""
        done: dict[str, Any] = {}

        def run() -> None:
            try:
                done["result"] = work()
            except BaseException as e:  # noqa: BLE001 - raised again on the GUI thread
                done["error"] = e

        th = threading.Thread(target=run, name="fiometer-start", daemon=True)
        th.start()
        loop = QEventLoop()
        poll = QTimer()
        poll.setInterval(10)
        poll.timeout.connect(lambda: None if th.is_alive() else loop.quit())
        poll.start()
        if th.is_alive():
            loop.exec()
        poll.stop()
        th.join()
        if "error" in done:
            raise done["error"]
        return done.get("result")

    def prepare(
        self,
        plan: Plan,
        options: RunOptions | None = None,
        endpoints: dict[str, ManagerEndpoint] | None = None,
        arm_question: ArmQuestion | None = None,
        create_folders: FolderQuestion | None = None,
        make=None,
        arm_hosts: HostsQuestion | None = None,
    ) -> tuple[Runner, RunOptions] | None:
        """A ready Runner for a copy of ``plan``, or None after emitting ``refused`` (or when the
        user did not arm the writes, or create the folders, asked about). ``make(plan, endpoints, listener,
        options)`` builds another kind of runner (a load search's)."""
        plan = copy.deepcopy(plan)  # edits while it runs must not change the run
        options = dataclasses.replace(options) if options is not None else RunOptions()
        if options.registry is None:
            options.registry = self.registry
        try:
            if endpoints is None:
                endpoints = self._off_gui(lambda: build_endpoints(plan, needed=needed_managers(plan)))
        except ManagerError as e:
            self.refused.emit(str(e))
            return None
        if self._cancel_start:
            return None
        if self.record:  # a run that cannot be stored does not start: measurements are never lost
            try:  # (a database's first opening creates and migrates it: tens of ms, off the GUI thread too)
                self._off_gui(lambda: open_store(self.db_path).close())
            except StoreError as e:
                self.refused.emit(f"The results database cannot be used: {e}")
                return None
        return self._checked(plan, endpoints, options, arm_question, create_folders, make, arm_hosts)

    def _checked(
        self,
        plan: Plan,
        endpoints: dict[str, ManagerEndpoint],
        options: RunOptions,
        arm_question: ArmQuestion | None,
        create_folders: FolderQuestion | None,
        make,
        arm_hosts: HostsQuestion | None,
    ) -> tuple[Runner, RunOptions] | None:
        """The Runner once its checks pass, asking the user what they leave to ask (arming, folders, hosts)
        and checking again with the answers; None when refused, not armed or cancelled."""
        asked_folders = False
        runner = (make or Runner)(plan, endpoints, None, options)  # contacts nothing: prepare() checks
        while True:  # the engine decides what needs asking; the user's answers arm exactly that
            try:  # only the checks run again with the answers (run.preflight), on the same runner
                self._off_gui(functools.partial(runner.prepare, options))
                if self._cancel_start:
                    runner.close_endpoints()
                    return None
                return runner, options
            except RunRefused as e:
                if e.only_asks and e.missing_folders and not asked_folders and create_folders is not None:
                    asked_folders = True
                    if create_folders(e.missing_folders) and self._make_folders(e.missing_folders):
                        continue
                    return None
                if e.only_asks and e.risks and not e.missing_folders and arm_question is not None:
                    if not arm_question(e.risks):
                        return None
                    allow, in_use = arm(e.risks, options.allow_write, options.allow_write_in_use)
                    shown = {  # the objects shown, under every name the user may know them by
                        **options.armed_objects,
                        **{n: r.obj for r in e.risks if r.obj is not None for n in r.names()},
                    }
                    backings = {  # and what a loop device among them was bound to
                        **options.armed_backings,
                        **{n: r.backing for r in e.risks if r.obj is not None for n in r.names()},
                    }
                    if (allow, in_use, shown, backings) == (
                        options.allow_write,
                        options.allow_write_in_use,
                        options.armed_objects,
                        options.armed_backings,
                    ):
                        self.refused.emit(str(e))
                        return None
                    options = dataclasses.replace(
                        options,
                        allow_write=allow,
                        allow_write_in_use=in_use,
                        armed_objects=shown,
                        armed_backings=backings,
                    )  # the objects shown, checked at Start
                    continue
                if e.only_asks and e.unverified and not e.risks and not e.missing_folders and arm_hosts:
                    chosen = arm_hosts(e.unverified)
                    if not chosen:
                        return None
                    if chosen <= options.allow_unverified:
                        self.refused.emit(str(e))
                        return None
                    options = dataclasses.replace(options, allow_unverified=options.allow_unverified | chosen)
                    continue
                self.refused.emit(str(e))
                return None

    def _make_folders(self, folders: list[str]) -> bool:
        for folder in folders:
            try:
                Path(folder).mkdir(parents=True, exist_ok=True)
            except OSError as e:
                self.refused.emit(f"Cannot create the folder {folder}: {e.strerror}")
                return False
        return True

    def start(
        self,
        plan: Plan,
        options: RunOptions | None = None,
        endpoints: dict[str, ManagerEndpoint] | None = None,
        arm_question: ArmQuestion | None = None,
        create_folders: FolderQuestion | None = None,
        make=None,
        results_file: str | Path | None = None,
        connect: Callable[[QtRunListener], None] | None = None,
        arm_hosts: HostsQuestion | None = None,
    ) -> QtRunListener | None:
        """Start a run; returns the listener whose signals carry it, or None if it did not start. ``make``: see
        ``prepare``; a load search (CurveRunner) keeps what it found with the run once it ends.
        ``connect(listener)`` is called once the run is prepared and before it goes (its thread or process
        starts): the caller's handlers are connected before the first event can be emitted, which a signal
        emitted with nobody connected is not (prepare, connect, go).
        ``results_file``: Iometer's results file; the run is appended to it when it ends and, with Record Last
        Update Results ENABLED, every update goes to inst<results file> beside it as the run goes."""
        if self.running:
            self.refused.emit("A test is already running.")
            return None
        update_log = None
        if results_file is not None and plan.setup.iometer.record_last_update:
            update_log = IometerUpdateLog(update_log_path(results_file))
            try:
                update_log.open()  # a name that cannot be written refuses the run before fio starts
            except OSError as e:
                self.refused.emit(
                    f"Iometer's per-update results file {update_log.path} cannot be written: "
                    f"{e.strerror or e}"
                )
                return None
        self._cancel_start = False
        self._set_state(STARTING)
        try:
            prepared = self.prepare(plan, options, endpoints, arm_question, create_folders, make, arm_hosts)
        except BaseException:
            self._set_state(IDLE_STATE)
            raise
        if prepared is None:
            if update_log is not None:
                update_log.discard()
            self._not_started()
            return None
        runner, options = prepared
        listener = QtRunListener()
        self.runner, self.listener, self.run_end = runner, listener, None
        planned = getattr(runner, "planned_steps", None)  # a search chooses its steps as it goes
        self.progress = (
            RunProgress(
                len(runner.steps),
                0,
                time.monotonic(),
                0.0,
                [float(runner.step_seconds(i)) for i in range(len(runner.steps))],
            )
            if planned is None
            else RunProgress(planned, 0, time.monotonic(), 0.0, [float(runner.step_seconds(0))] * planned)
        )
        listener.stepStarted.connect(self._on_step)
        listener.runFinished.connect(self._on_finished)
        results = Path(results_file) if results_file is not None else None
        request: RunRequest | None = None
        if self._apart(runner, options, endpoints, make):  # prepare
            runner.close_endpoints()  # the run's process reaches the managers itself (SSH sessions too)
            if update_log is not None:
                update_log.close()  # checked writable here; appended to there
            log_path = update_log.path if update_log is not None else None
            request = RunRequest(
                runner.plan, options, make, self.db_path, self.record, results, log_path, charted
            )
        else:
            self.session = RunSession(runner, listener, self.db_path, self.record, results, update_log)
            self.thread = threading.Thread(target=self._run, name="fiometer-run", daemon=True)
        if connect is not None:  # connect
            connect(listener)
        if request is not None:  # go: the run's process starts here and sends its first events at once
            try:
                self.session = RunApart(request, listener, self._ended)
            except OSError as e:
                self.runner = self.listener = None
                self.refused.emit(f"The run's own process could not be started: {e}")
                self._not_started()
                return None
        self._set_state(RUNNING)
        live_gc.run_starting()
        if self.thread is not None:
            self.thread.start()
        return listener

    def _not_started(self) -> None:
        """Back to idle after a start that did not go; a start cancelled by Stop (or by closing) ends as a run
        does, so that whoever waits for the end (a closing window) hears of it."""
        self._set_state(IDLE_STATE)
        if self._cancel_start:
            self._cancel_start = False
            self.last_status, self.last_summary, self.run_end = CANCELLED, None, None
            self.finished.emit(CANCELLED)

    @staticmethod
    def _apart(
        runner: Runner, options: RunOptions, endpoints: dict[str, ManagerEndpoint] | None, make: object
    ) -> bool:
        """Whether the run goes to a process of its own: from ``options.run_apart`` remote managers on, when
        everything it needs can cross (endpoints built here, no test hook, a runner maker that pickles)."""
        remote = sum(ep.host != "local" for ep in runner.endpoints.values())
        if not (0 < options.run_apart <= remote) or endpoints is not None or options.before_fio_start:
            return False
        try:
            pickle.dumps(make)
        except (pickle.PicklingError, AttributeError, TypeError):
            return False
        return True

    def _run(self) -> None:
        """The runner thread: the run and its recording (the store connection is opened on this thread)."""
        assert isinstance(self.session, RunSession)
        self._ended(self.session.run())

    def _ended(self, end: RunEnd) -> None:
        """The run's thread (or the reader of its process), last: what it stored, then the window is told."""
        self.run_end = end
        assert self.listener is not None
        self.listener.runFinished.emit(end.status)

    def _on_step(self, index: int, _offset: float, _step: Step) -> None:
        self.progress.begin_step(index + 1)

    def _on_finished(self, status: str) -> None:
        self.last_status = status
        if self.run_end is not None:
            self.last_summary = self.run_end.summary
        if self.thread is not None:
            self.thread.join(timeout=1)  # it has emitted this as its last act: returns at once
        self.thread = None
        self.runner = None
        self.session = None
        live_gc.run_ended()
        self._set_state(IDLE_STATE)
        self.finished.emit(status)

    @property
    def stored_in(self) -> Path | None:
        return self.run_end.stored_in if self.run_end is not None else None

    def stop_step(self) -> None:
        """Iometer's Stop: end the current step with fio's final numbers and go on with the next."""
        if self.session is not None and self.state == RUNNING:
            self.session.stop_step()

    def stop(self) -> None:
        """Iometer's Stop All: the current step ends with fio's final numbers; no further steps. While the
        run is starting, it does not go."""
        if self.state == STARTING:
            self._cancel_start = True
            return
        if self.session is not None and self.state == RUNNING:
            self._set_state(STOPPING)
            self.session.stop()

    def abort(self) -> None:
        """End at once (final numbers of the current step may be lost)."""
        if self.state == STARTING:
            self._cancel_start = True
            return
        if self.session is not None:
            self._set_state(STOPPING)
            self.session.abort()

    def wait(self, timeout: float) -> bool:
        """Block until the run ends (for closing); True if it did."""
        session, th = self.session, self.thread
        if isinstance(session, RunApart):
            return session.wait(timeout)
        if th is not None:
            th.join(timeout)
            return not th.is_alive()
        return True
