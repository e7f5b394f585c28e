"""`fiometer pts`: a run of the SNIA PTS (app.model.pts): purge, workload-independent preconditioning, then
rounds of the test's stimuli, each stimulus a step of the run, until the tracking variable is steady by the
PTS rule (app.model.steady_state.pts_steady_state) or ``rounds_max`` rounds have run.

Every step a run may take (the fill and one round's stimuli) is built and checked before anything runs, as
for any run (what fio opens, arming, job options); later rounds run the first round's job files again,
renumbered. The purge runs first, after those checks (app.engine.guards.purge). What the run did and
decided is ``record()``, kept with the run (app.store.run_extras, key ``pts``).
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from app.engine.guards.purge import NONE, PurgeRefused, PurgeResult, check_purge, purge
from app.engine.jobs.jobfile import JobFile
from app.engine.jobs.sequence import FILL, FILL_QUEUE_DEPTH, ActiveWorker, Step
from app.engine.run.curve_runner import _renumbered
from app.engine.run.runner import (
    ManagerEndpoint,
    PreparedRun,
    RunListener,
    Runner,
    RunOptions,
    RunRefused,
    RunSummary,
    StepOutcome,
    summarize,
)
from app.engine.sampling.telemetry import ALL_KEY
from app.engine.transports.transport import Message
from app.model.metrics import Metrics
from app.model.plan import PRECONDITION_FILL, Plan
from app.model.pts import FILL_WORKER, FIRST_THREAD, PTS_REVISION, PtsSetup
from app.model.steady_state import PtsDecision, figure, pts_steady_state

log = logging.getLogger(__name__)


@dataclass
class Round:
    number: int  # 1-based
    steps: list[int]  # the run's step indexes, one per stimulus, in the order they ran
    tracking: float | None  # the tracking variable's figure (None: the tracking step did not finish)
    written: int  # bytes written in the round (every stimulus)
    run: int | None = None  # the earlier run it ran in (a resumed run's inherited rounds), None: this one


@dataclass(frozen=True)
class Resume:
    """A stopped PTS run continued: its purge and preconditioning stand, its rounds count, and the rounds go
    on from the next one (``fiometer pts --resume RUN``)."""

    run: int
    record: dict[str, Any]

    def rounds(self) -> list[Round]:
        out = []
        for r in self.record.get("rounds") or []:
            if isinstance(r, dict) and r.get("tracking") is not None:
                out.append(
                    Round(
                        int(r["round"]),
                        list(r.get("steps") or []),
                        float(r["tracking"]),
                        int(r.get("written") or 0),
                        int(r.get("run") or self.run),
                    )
                )
        return out


@dataclass
class PtsRoundMessage(Message):
    """A round's end, said as a message with its figures (a window plots the convergence from them)."""

    round: int = 0
    value: float | None = None
    reached: bool = False


def tracking_value(variable: str, m: Metrics) -> float | None:
    """The tracking variable of a step's whole-step ALL metrics: IOPS, MB/s or average latency (ms)."""
    if variable == "iops":
        return m.iops
    if variable == "mbps":
        return m.mbps
    n = m.read_lat_n + m.write_lat_n
    return (m.read_lat_sum_ns + m.write_lat_sum_ns) / n / 1e6 if n else None


def _whole(outcome: StepOutcome) -> Metrics | None:
    return next((s.whole for s in outcome.results if s.level == "all" and s.key == ALL_KEY), None)


class PtsRunner(Runner):
    """Runs a PTS test. ``on_round(round, decision)`` is told after every round (the CLI prints it)."""

    def __init__(
        self,
        plan: Plan,
        endpoints: dict[str, ManagerEndpoint],
        listener: RunListener | None = None,
        options: RunOptions | None = None,
        *,
        setup: PtsSetup,
        device: dict[str, Any] | None = None,
        on_round: Callable[[Round, PtsDecision], None] | None = None,
        resume: Resume | None = None,
    ):
        plan = copy.deepcopy(plan)
        self.setup = setup
        self.device = device or {}
        self.on_round = on_round
        qd, threads = setup.load()
        self.resume = resume
        fill = (
            [Step(0, 0, [ActiveWorker(0, FILL_WORKER, [0], PRECONDITION_FILL, FILL_QUEUE_DEPTH)], FILL)]
            if setup.definition.precondition and resume is None
            else []
        )
        stimuli = setup.stimuli()
        round_steps = [
            Step(
                len(fill) + i,
                i,
                [ActiveWorker(0, FIRST_THREAD + t, [0], s.spec.name, qd) for t in range(threads)],
            )
            for i, s in enumerate(stimuli)
        ]
        super().__init__(plan, endpoints, listener, _own_times(options), steps=fill + round_steps)
        self._fills, self._per_round = len(fill), len(round_steps)
        self._fill: list[tuple[Step, dict[str, JobFile]]] = []
        self._round: list[tuple[Step, dict[str, JobFile]]] = []
        self.purge_result: PurgeResult | None = None
        self.fill_step: int | None = None
        self.rounds: list[Round] = resume.rounds() if resume is not None else []
        self.decision: PtsDecision | None = None
        self.started = self.ended = 0.0

    def prepare(self, options: RunOptions | None = None) -> PreparedRun:
        """The runner's checks, then the purge's (refused before anything runs)."""
        prepared = super().prepare(_own_times(options) if options is not None else None)
        n, steps, files = self._fills, prepared.steps, prepared.jobfiles
        self._fill = list(zip(steps[:n], files[:n], strict=True))
        self._round = list(zip(steps[n:], files[n:], strict=True))
        if self.setup.purge != NONE and self.resume is None:
            try:
                check_purge(self.setup.target, self.setup.purge, self.options.allow_write)
            except PurgeRefused as e:
                self.close_endpoints()
                raise RunRefused(str(e)) from e
        return prepared

    @property
    def planned_steps(self) -> int:
        return self._fills + self._per_round * self.setup.rounds_max

    @property
    def summary(self) -> RunSummary:
        return summarize([o.counted_as for o in self.outcomes], len(self.outcomes))

    def run(self) -> str:
        if self.prepared is None:
            self.prepare()
        self.steps, self.jobfiles = [], []  # the steps that ran, appended as they run
        self.started = time.time()
        try:
            return super().run()
        finally:
            self.ended = time.time()

    def _say(self, text: str, level: str = "info") -> None:
        log.info("pts: %s", text)
        self.listener.message(None, Message("", text, level))

    def _run_one(self, step: Step, files: dict[str, JobFile]) -> StepOutcome:
        step = replace(step, index=len(self.steps))
        files = _renumbered(files, step.index)
        self.steps.append(step)
        self.jobfiles.append(files)
        outcome = self._step(step, files)
        self.outcomes.append(outcome)
        self.listener.step_finished(outcome)
        return outcome

    def _ended(self, outcome: StepOutcome) -> str | None:
        """The run's status when this step ends it, else None."""
        if self._stop_all.is_set() or outcome.status == "stopped":
            return "stopped"
        if outcome.status in ("failed", "partial") or outcome.refused:
            return "failed"
        return None

    def _run_steps(self) -> str:
        if self.resume is not None:
            self._say(
                f"resuming PTS run {self.resume.run} after its preconditioning: its purge and preconditioning "
                f"stand, its {len(self.rounds)} round(s) count, the rounds go on from round {len(self.rounds) + 1}"
            )
            return self._run_rounds()
        self.purge_result = purge(self.setup.target, self.setup.purge)
        self._say(self.purge_result.sentence(), "info" if self.purge_result.ok else "error")
        if not self.purge_result.ok:
            return "failed"
        for step, files in self._fill:
            if self._stop_all.is_set():
                return "stopped"
            self._say(f"{PTS_REVISION}: workload-independent preconditioning (128 KiB sequential writes)")
            outcome = self._run_one(step, files)
            self.fill_step = outcome.step.index
            if (ended := self._ended(outcome)) is not None:
                return ended
        return self._run_rounds()

    def _run_rounds(self) -> str:
        track = self.setup.tracking_index()
        variable = self.setup.definition.variable
        for number in range(len(self.rounds) + 1, self.setup.rounds_max + 1):
            current = Round(number, [], None, 0)
            self.rounds.append(current)
            for i, (step, files) in enumerate(self._round):
                if self._stop_all.is_set():
                    return "stopped"
                outcome = self._run_one(step, files)
                current.steps.append(outcome.step.index)
                whole = _whole(outcome)
                current.written += whole.write_bytes if whole is not None else 0
                if i == track and whole is not None and outcome.status == "complete":
                    current.tracking = tracking_value(variable, whole)
                if (ended := self._ended(outcome)) is not None:
                    return ended
            values = [r.tracking or 0.0 for r in self.rounds]
            self.decision = pts_steady_state(values, max_rounds=self.setup.rounds_max)
            text = f"round {number}: {self.setup.definition.variable_title} {figure(current.tracking or 0)}; "
            log.info("pts: %s", text + self.decision.sentence())
            self.listener.message(
                None,
                PtsRoundMessage(
                    "",
                    text + self.decision.sentence(),
                    "info",
                    None,
                    number,
                    current.tracking,
                    self.decision.reached,
                ),
            )
            if self.on_round is not None:
                self.on_round(current, self.decision)
            if self.decision.reached and self.setup.definition.stops_when_steady:
                return "complete"
        return "complete"

    def record(self) -> dict[str, Any]:
        """What the run did and decided, as kept with the run (key ``pts``; read by app.analysis.pts)."""
        s, d = self.setup, self.decision
        qd, threads = s.load()
        return {
            "revision": PTS_REVISION,
            "test": s.test,
            "variant": s.variant,
            "target": s.target,
            "device": self.device,
            "tested_by": s.tested_by,
            "started": self.started,
            "ended": self.ended,
            "settings": {
                "active_range_pct": s.variant_def.active_range_pct,
                "queue_depth": qd,
                "threads": threads,
                "write_cache_asked": s.variant_def.write_cache,
                "data_pattern": "random",
                "round_time_s": s.round_time,
                "rounds_max": s.rounds_max,
                "stimulus_set": s.stimulus_set,
                "precondition_scale": s.precondition_scale,
                "stimuli": [st.spec.name for st in s.stimuli()],
                "tracking": s.stimuli()[s.tracking_index()].spec.name,
                "variable": s.definition.variable,
                "variable_title": s.definition.variable_title,
            },
            "purge": self.purge_result.as_dict() if self.purge_result else None,
            "fill_step": self.fill_step,
            "resumed_from": None
            if self.resume is None
            else {
                "run": self.resume.run,
                "purge": self.resume.record.get("purge"),
                "fill_step": self.resume.record.get("fill_step"),
            },
            "rounds": [
                {
                    "round": r.number,
                    "steps": r.steps,
                    "tracking": r.tracking,
                    "written": r.written,
                    "run": r.run,
                }
                for r in self.rounds
            ],
            "decision": None if d is None else decision_dict(d),
        }


def _own_times(options: RunOptions | None) -> RunOptions | None:
    """The round time is the PTS's: no override of step times or file sizes."""
    return None if options is None else replace(options, run_time=None, ramp_up=None, file_size=None)


def decision_dict(d: PtsDecision) -> dict[str, Any]:
    return {
        "reached": d.reached,
        "at_round": d.at_round,
        "first_round": d.first_round,
        "rounds": list(d.rounds),
        "rounds_run": d.rounds_run,
        "average": d.fit.average,
        "range": d.fit.range_value,
        "range_pct": d.range_pct,
        "slope": d.fit.slope,
        "intercept": d.fit.intercept,
        "fit_excursion": d.fit_excursion,
        "fit_excursion_pct": d.fit_excursion_pct,
        "why": d.why,
        "sentence": d.sentence(),
    }
