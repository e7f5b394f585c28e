"""Runs a plan without freezing the window: the engine's Runner on a thread, its listener calls
turned into queued Qt signals that arrive on the GUI thread."""

from __future__ import annotations

import copy
import platform
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.model.plan import LOCAL, Plan

IDLE_STATE = "idle"
RUNNING = "running"
STOPPING = "stopping"


class EngineMissing(Exception):
    """The engine parts a run needs are not in this build; str() says which."""


def _runner_module() -> Any:
    try:
        from app.engine import runner
    except ImportError as e:  # app.engine.telemetry / local_fio land with the engine
        raise EngineMissing(f"the run engine is not part of this build yet ({e.name or e})") from e
    return runner


def local_endpoint(name: str) -> Any:
    runner = _runner_module()
    try:
        from app.engine.local_fio import LocalFio
    except ImportError as e:
        raise EngineMissing(f"the local fio transport is not part of this build yet ({e.name or e})") from e
    return runner.ManagerEndpoint(name=name, os_name=platform.system(), make_transport=lambda: LocalFio(name),
                                  host=LOCAL)


def remote_endpoint(name: str, host: str) -> Any:
    """An endpoint for a manager on a host running ``fio --server``; EngineMissing until that lands."""
    try:
        from app.engine import remote  # type: ignore[attr-defined]
    except ImportError as e:
        raise EngineMissing(f"remote managers arrive with the engine (manager {name!r} on {host})") from e
    return remote.endpoint(name, host)  # pragma: no cover - adapted when the remote module lands


def build_endpoints(plan: Plan) -> tuple[dict[str, Any], list[str]]:
    """Endpoints for every mapped manager, and problems (unmapped managers are left to the Runner)."""
    endpoints: dict[str, Any] = {}
    problems: list[str] = []
    for m in plan.managers:
        if m.host == LOCAL:
            endpoints[m.name] = local_endpoint(m.name)
        elif m.host:
            try:
                endpoints[m.name] = remote_endpoint(m.name, m.host)
            except EngineMissing as e:
                problems.append(str(e))
    return endpoints, problems


def store_listener() -> Any | None:
    """HOOK: the SQLite store's run recorder, so GUI runs are kept like CLI runs.

    Returns None until ``app.store`` provides a recording listener; then return it here (the run
    controller passes it every Runner callback on the runner thread, before the GUI sees them).
    """
    return None


class QtRunListener(QObject):
    """A RunListener whose callbacks (on the runner thread) become queued signals."""

    run_started = Signal(object, object)  # steps, endpoints
    step_started = Signal(int, float, object)  # step index, seconds since run start, Step
    samples = Signal(int, float, object)  # step index, step offset (s), list[Sample]
    message = Signal(object, object)  # Step | None, Message
    step_finished = Signal(object)  # StepOutcome
    run_finished = Signal(str)  # complete | stopped | failed

    def __init__(self, others: list[Any] | None = None):
        super().__init__()
        self.others = [o for o in (others or []) if o is not None]
        self.t0 = time.monotonic()
        self.offset = 0.0

    def _tee(self, name: str, *args: Any) -> None:
        for o in self.others:
            try:
                getattr(o, name)(*args)
            except Exception:  # a recorder bug must not stop the run or the display
                traceback.print_exc()

    # RunListener interface (runner thread)
    def run_started_cb(self, plan: Plan, steps: list, endpoints: dict) -> None:
        self.t0 = time.monotonic()
        self._tee("run_started", plan, steps, endpoints)
        self.run_started.emit(steps, endpoints)

    def step_started_cb(self, step: Any, jobfiles: dict) -> None:
        self.offset = time.monotonic() - self.t0
        self._tee("step_started", step, jobfiles)
        self.step_started.emit(step.index, self.offset, step)

    def samples_cb(self, step: Any, samples: list) -> None:
        self._tee("samples", step, samples)
        self.samples.emit(step.index, self.offset, samples)

    def message_cb(self, step: Any, message: Any) -> None:
        self._tee("message", step, message)
        self.message.emit(step, message)

    def step_finished_cb(self, outcome: Any) -> None:
        self._tee("step_finished", outcome)
        self.step_finished.emit(outcome)

    def run_finished_cb(self, status: str) -> None:
        self._tee("run_finished", status)
        self.run_finished.emit(status)


class _Adapter:
    """The object handed to the Runner: RunListener's method names, forwarded to QtRunListener."""

    def __init__(self, q: QtRunListener):
        self.q = q

    def run_started(self, plan: Plan, steps: list, endpoints: dict) -> None:
        self.q.run_started_cb(plan, steps, endpoints)

    def step_started(self, step: Any, jobfiles: dict) -> None:
        self.q.step_started_cb(step, jobfiles)

    def samples(self, step: Any, samples: list) -> None:
        self.q.samples_cb(step, samples)

    def message(self, step: Any, message: Any) -> None:
        self.q.message_cb(step, message)

    def step_finished(self, outcome: Any) -> None:
        self.q.step_finished_cb(outcome)

    def run_finished(self, status: str) -> None:
        self.q.run_finished_cb(status)


@dataclass
class RunProgress:
    steps: int = 0
    step: int = 0  # 1-based, 0 before the first step
    started: float = 0.0  # time.monotonic()
    step_started: float = 0.0
    step_seconds: list[float] = field(default_factory=list)  # ramp + run of each step; 0 = until Stop

    def elapsed(self) -> float:
        return time.monotonic() - self.started if self.started else 0.0

    def remaining(self) -> float | None:
        if not self.step_seconds or any(s <= 0 for s in self.step_seconds[max(self.step - 1, 0):]):
            return None
        current = self.step_seconds[self.step - 1] - (time.monotonic() - self.step_started) if self.step else 0.0
        later = sum(self.step_seconds[self.step:]) if self.step else sum(self.step_seconds)
        return max(current, 0.0) + later


class RunController(QObject):
    state_changed = Signal(str)
    refused = Signal(str)  # the run could not start: message for the user
    finished = Signal(str)  # complete | stopped | failed

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.state = IDLE_STATE
        self.runner: Any = None
        self.thread: threading.Thread | None = None
        self.listener: QtRunListener | None = None
        self.progress = RunProgress()
        self.last_status = ""

    @property
    def running(self) -> bool:
        return self.state != IDLE_STATE

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.state_changed.emit(state)

    def start(self, plan: Plan, options: Any = None, endpoints: dict[str, Any] | None = None) -> QtRunListener | None:
        """Start a run of a copy of ``plan`` (edits during the run do not change it).

        Returns the listener whose signals carry the run, or None after emitting ``refused``.
        """
        if self.running:
            self.refused.emit("A test is already running.")
            return None
        plan = copy.deepcopy(plan)
        try:
            runner_mod = _runner_module()
            problems: list[str] = []
            if endpoints is None:
                endpoints, problems = build_endpoints(plan)
            options = options or runner_mod.RunOptions()
            listener = QtRunListener([store_listener()])
            runner = runner_mod.Runner(plan, endpoints, _Adapter(listener), options)
        except EngineMissing as e:
            self.refused.emit(f"Cannot start: {e}.")
            return None
        except Exception as e:  # RunRefused and anything else the engine says before running
            text = str(e)
            if problems:
                text = "\n".join([*problems, text])
            self.refused.emit(text)
            return None
        self.runner, self.listener = runner, listener
        run_time = getattr(options, "run_time", None)
        ramp = getattr(options, "ramp_up", None)
        per = (plan.setup.ramp_up if ramp is None else ramp) + (plan.setup.run_time if run_time is None else run_time)
        run_s = plan.setup.run_time if run_time is None else run_time
        self.progress = RunProgress(len(runner.steps), 0, time.monotonic(), 0.0,
                                    [per if run_s else 0 for _ in runner.steps])
        listener.step_started.connect(self._on_step)
        listener.run_finished.connect(self._on_finished)
        self._set_state(RUNNING)
        self.thread = threading.Thread(target=self._run, name="fiometer-run", daemon=True)
        self.thread.start()
        return listener

    def _run(self) -> None:
        try:
            self.runner.run()
        except Exception as e:  # an engine crash ends the run visibly, never silently
            traceback.print_exc()
            from app.engine.transport import Message

            self.listener.message_cb(None, Message("", f"internal error: {e}", "error"))
            self.listener.run_finished_cb("failed")

    def _on_step(self, index: int, _offset: float, _step: Any) -> None:
        self.progress.step = index + 1
        self.progress.step_started = time.monotonic()

    def _on_finished(self, status: str) -> None:
        self.last_status = status
        if self.thread is not None:
            self.thread.join(timeout=5)
        self.thread = None
        self.runner = None
        self._set_state(IDLE_STATE)
        self.finished.emit(status)

    def stop(self) -> None:
        """Graceful: the current step ends with fio's final numbers; no further steps."""
        if self.runner is not None and self.state == RUNNING:
            self._set_state(STOPPING)
            self.runner.stop()

    def abort(self) -> None:
        """End at once (final numbers of the current step may be lost)."""
        if self.runner is not None:
            self._set_state(STOPPING)
            self.runner.abort()
