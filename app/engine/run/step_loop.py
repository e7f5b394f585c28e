"""One step, followed from its managers' events to its outcome (Qt-free, no sockets, no threads).

The runner starts the managers' transports and feeds what they yield to a :class:`StepLoop`:
``on_snapshot`` / ``on_message`` / ``on_finished`` for each event, ``on_tick`` at least every quarter second
with each manager's liveness figures. The loop judges progress (``StepWatch``), turns reports into samples
(``StepTelemetry``), tells the listener, and asks the run through :class:`StepControl` to stop or abort a
manager. So the whole logic of a step can be driven by a scripted list of events.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Protocol

from app.engine.common.message_gate import MessageGate
from app.engine.common.phase_bounds import STOP
from app.engine.jobs.jobfile import JobFile, JobInfo
from app.engine.jobs.network_jobs import net_failure_hint
from app.engine.jobs.sequence import Step
from app.engine.run.live_notes import LiveNotes
from app.engine.run.step_watch import Action, StepWatch
from app.engine.sampling.telemetry import Sample, StepTelemetry
from app.engine.transports.transport import Event, Finished, FioSide, Message, Snapshot
from app.model.steady_state import SteadyWatch

log = logging.getLogger(__name__)
LAYOUT_SAID_S = 1.0  # fio's time before its I/O began is told from this long (shorter: ordinary job set-up)


class StepListener(Protocol):
    """What the loop tells (``runner.RunListener`` is one), in order, on the runner's thread."""

    def samples(self, step: Step, samples: list[Sample]) -> None: ...
    def message(self, step: Step | None, message: Message) -> None: ...
    def manager_finished(self, step: Step, finished: Finished) -> None: ...


class StepControl(Protocol):
    """What the loop asks of the run."""

    def stop_manager(self, name: str) -> None:
        """Graceful stop of one manager's fio (its final numbers still come)."""

    def abort_manager(self, name: str) -> None:
        """Hard stop of one manager's fio."""

    def end_step(self) -> None:
        """The step has done what it is for (a precondition reached steady state): end it as finished."""

    def stopping(self) -> bool:
        """Stop or Abort was pressed in this step: managers ending early did not fail."""


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
    return f"fio did no I/O on {where}" + (
        f"; fio said: {words}" if words else " and gave no reason (it refused or dropped the job)"
    )


def start_skew_text(start_times: dict[str, float]) -> str:
    """The start skew of a step, the same rule for every fio version: when each manager's I/O began
    (a report's arrival less fio's runtime in it, the least over its reports), first to last."""
    first = min(start_times.values())
    spread = max(start_times.values()) - first
    detail = ", ".join(
        f"{n} +{(t - first) * 1000:.0f} ms" for n, t in sorted(start_times.items(), key=lambda x: x[1])
    )
    return (
        f"managers' I/O started within {spread * 1000:.0f} ms ({detail}; from each manager's reports: "
        "arrival less fio's runtime)"
    )


class StepLoop:
    """The state of one running step. ``finished`` holds each manager's end as it is known (those that never
    started are given at construction); the step is over when every manager has one."""

    def __init__(
        self,
        step: Step,
        files: Mapping[str, JobFile],
        telemetry: StepTelemetry,
        watch: StepWatch,
        listener: StepListener,
        control: StepControl,
        *,
        io_expected: Callable[[JobInfo, JobFile], bool] = lambda job, jf: True,
        steady: SteadyWatch | None = None,
        finished: Mapping[str, Finished] | None = None,
    ) -> None:
        self.step, self.files, self.telemetry, self.watch = step, files, telemetry, watch
        self.listener, self.control, self.io_expected, self.steady = listener, control, io_expected, steady
        self.finished: dict[str, Finished] = dict(finished or {})
        for name in self.finished:
            watch.finished(name)
        self.raw: dict[str, str | None] = {name: None for name in files}  # fio's final document, per manager
        self.last: dict[str, Snapshot] = {}  # each manager's newest report (its final one once it ends)
        self.said: dict[str, list[str]] = {
            name: [] for name in files
        }  # fio's warnings and errors, per manager
        self.gates = {name: MessageGate() for name in files}
        self._told: set[str] = set()  # managers whose end the listener and the telemetry have had
        self.notes = (
            LiveNotes()
        )  # late / answering again / ...: one line per kind and second, not per manager
        self._now = 0.0  # the newest time given (on_event, on_tick)
        self._held: list[Sample] | None = None  # samples gathered while a batch of events is handled

    @property
    def over(self) -> bool:
        return len(self.finished) >= len(self.files)

    # --- events ------------------------------------------------------------------------------
    @contextmanager
    def batch(self) -> Iterator[None]:
        """Events handled together (what waited in the runner's queue, then a tick): their samples reach
        the listener as one list (one store transaction, one hand-over to the window), told before any
        message or manager's end that follows them, so the order is kept."""
        self._held = []
        try:
            yield
        finally:
            held, self._held = self._held, None
            if held:
                self._deliver(held)

    def on_event(self, name: str, ev: Event, now: float) -> None:
        """One event from manager ``name``'s transport (ignored once that manager has ended)."""
        if name in self.finished:
            return
        self._now = max(self._now, now)
        if isinstance(ev, Snapshot):
            self.on_snapshot(name, ev, now)
        elif isinstance(ev, Message):
            self.on_message(name, ev)
        else:
            self.on_finished(name, ev)

    def on_snapshot(self, name: str, snap: Snapshot, now: float) -> None:
        if self._act(self.watch.on_snapshot(name, snap.jobs, now)):
            self.last[name] = snap
            if snap.final:
                self.raw[name] = snap.raw
            self._emit(self.telemetry.update(snap))

    def on_message(self, name: str, msg: Message) -> None:
        if msg.level in ("warning", "error"):
            self.said[name].append(msg.text)
        if self.gates[name].admit(msg.text):
            self._say(msg)

    def on_finished(self, name: str, ev: Finished) -> None:
        forced = self.watch.forced_reason(name, ev.ok)
        if forced:
            ev.ok = False
            ev.reason = forced + (f" ({ev.reason})" if ev.reason else "")
        if ev.ok and not (ev.stopped or self.control.stopping()):
            jf = self.files[name]
            idle = [j for j in idle_jobs(self.last.get(name), jf) if self.io_expected(j, jf)]
            if idle:
                ev.ok = False
                ev.reason = no_io_reason(idle, self.said[name])
        if not ev.ok:
            jobs = self.files[name].jobs
            ev.reason = ev.reason or "fio failed"
            if (
                "(phase: " not in ev.reason
            ):  # where it was when its transport gave up (a local fio's watchdog)
                ev.reason += f" (phase: {self._phase(name)})"
            ev.reason = f"{ev.reason} (targets of manager {name!r}: {', '.join(j.path for j in jobs)})"
            ev.reason += net_failure_hint(
                any(j.network for j in jobs), " ".join([ev.reason, *self.said[name]])
            )
            log.warning("step %d, manager %s failed: %s", self.step.index + 1, name, ev.reason)
        self.finished[name] = ev
        self.watch.finished(name)

    def _phase(self, name: str) -> str:
        """The step's phase for manager ``name`` now (stop once Stop was pressed)."""
        return STOP if self.control.stopping() else self.watch.phase(name, self._now)

    def on_tick(
        self,
        now: float,
        bytes_received: Mapping[str, int | None],
        last_heard: Mapping[str, float | None],
        fio_side: Mapping[str, FioSide | None] | None = None,
    ) -> None:
        """Time passed (``now``: time.monotonic()): deadlines and stalls, managers that ended, the second's
        numbers. ``bytes_received`` / ``last_heard`` / ``fio_side``: each running manager's liveness figures
        (Transport)."""
        self._now = max(self._now, now)
        if self.control.stopping():
            self.watch.stop_asked(now)
        self._act(self.watch.due(now, bytes_received, last_heard, fio_side))
        for note in self.notes.due(now):
            self._tell(note)
        for name, ended in self.finished.items():
            if name not in self._told:
                self._told.add(name)
                self._emit(self.telemetry.manager_done(name, failed=not ended.ok))
                self._release()
                self.listener.manager_finished(self.step, ended)  # as it happens: a failure shows at once
        self._emit(self.telemetry.tick(now))

    def flush(self) -> None:
        """Every manager has ended: the numbers and liveness notes still held back."""
        self._emit(self.telemetry.flush())
        for note in self.notes.flush():
            self._tell(note)

    # --- the end -----------------------------------------------------------------------------
    def closing_messages(self, dropped: Mapping[str, str | None]) -> list[Message]:
        """What to say once the step is over: what transports dropped (``dropped``: their notes), the
        messages held back, how long fio laid out files before the step's clock started, reports that came
        late or partial, and how far apart the managers started."""
        out: list[Message] = []
        for name, gate in self.gates.items():
            out += [
                Message(name, note, "warning") for note in (dropped.get(name), gate.summary(name)) if note
            ]
        out += [
            Message(
                name,
                f"fio spent {s:.1f} s before its I/O began (laying out test files, setting up its "
                "jobs); the step's time starts after it",
                "info",
            )
            for name, s in self.telemetry.layout_s.items()
            if s >= LAYOUT_SAID_S
        ]
        clock = self.telemetry.all_clock
        out += [
            Message("", note, level)
            for note, level in ((clock.late_summary(), "info"), (clock.partial_summary(), "warning"))
            if note
        ]
        start_times = self.telemetry.io_start
        if len(start_times) > 1:
            out.append(Message("", start_skew_text(start_times), "info"))
        return out

    def status(self) -> str:
        """complete | stopped | partial | failed."""
        ok = [f for f in self.finished.values() if f.ok]
        if self.control.stopping():
            return "stopped"
        if len(ok) == len(self.files):
            return "complete"
        return "partial" if ok else "failed"

    # --- inside ------------------------------------------------------------------------------
    def _emit(self, samples: list[Sample]) -> None:
        if not samples:
            return
        if self._held is not None:
            self._held += samples
            return
        self._deliver(samples)

    def _deliver(self, samples: list[Sample]) -> None:
        self.listener.samples(self.step, samples)
        if self.steady is not None and steady_reached(self.steady, samples):
            self.steady = None
            self.control.end_step()

    def _say(self, msg: Message) -> None:
        """Tell a message now, or hold a liveness note for its kind's summary line (``live_notes``)."""
        for m in self.notes.add(msg, self._now):
            self._tell(m)

    def _tell(self, msg: Message) -> None:
        self._release()
        self.listener.message(self.step, msg)

    def _release(self) -> None:
        """The samples gathered so far are told first (what came before a message stays before it)."""
        if self._held:
            held, self._held = self._held, []
            self._deliver(held)

    def _act(self, actions: list[Action]) -> bool:
        """Apply the watch's actions; False when the report that caused them must not be used."""
        use = True
        for a in actions:
            self._say(Message(a.manager, a.text, a.level, a.note))
            if a.kind in ("stop", "abort"):  # a deadline passed, a manager silent or sending nonsense
                log.warning("step %d, manager %s: %s: %s", self.step.index + 1, a.manager, a.kind, a.text)
            if a.kind == "stop":
                self.control.stop_manager(a.manager)
            elif a.kind == "abort":
                use = False
                self.control.abort_manager(a.manager)
                if a.manager not in self.finished:
                    self.finished[a.manager] = Finished(a.manager, False, a.text)
        return use


def steady_reached(watch: SteadyWatch, samples: list[Sample]) -> bool:
    """A precondition step's ALL numbers have met the steady-state rule."""
    return any([watch.add(s.t, s.interval.ios, s.interval.seconds) for s in samples if s.level == "all"])
