"""`fiometer curve`: a run whose steps a load search chooses (app.engine.run.curve_search), one access spec after another.

Every load the search may pick is expanded into a candidate step before anything runs, so the runner's checks
(what fio will open, whether writes are armed, the job options) cover all of them; the search then runs the
chosen candidates, numbered in the order they ran, as an ordinary run's steps. The load is the queue depth of
every active target, or, when the plan cycles workers, how many workers of each manager run (the first N).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, replace
from typing import Any

from app.engine.jobs.jobfile import JobFile
from app.engine.jobs.sequence import RUNNABLE_KINDS, Step, _Series
from app.engine.run.curve_search import SEARCH_BUDGET, GridSweep, KneeSearch, Probe, load_grid
from app.engine.run.runner import (
    ManagerEndpoint,
    PreparedRun,
    RunListener,
    Runner,
    RunOptions,
    RunRefused,
    RunSummary,
    summarize,
)
from app.engine.sampling.telemetry import ALL_KEY
from app.engine.transports.transport import Message
from app.model.plan import IDLE, Plan, Precondition

QUEUE_DEPTH, WORKERS = "queue depth", "workers"
LOAD_SEARCH = "load_search"  # Message.kind of the line said after each load the search measured
WORKER_CYCLING = ("CYCLE_WORKERS", "CYCLE_WORKERS_AND_TARGETS")
DEFAULT_MAX_QD = 256


@dataclass
class SpecCurve:
    """One access spec position's search and the steps it ran (indexes in the run)."""

    access_index: int
    label: str
    search: KneeSearch
    steps: list[int] = field(default_factory=list)


def curve_dimension(plan: Plan) -> str:
    return WORKERS if plan.setup.test_type in WORKER_CYCLING else QUEUE_DEPTH


def _positions(plan: Plan) -> int:
    return max((len(w.specs) for m in plan.managers for w in m.workers), default=0)


def candidate_steps(plan: Plan, grids: dict[int, list[int]], dimension: str) -> dict[tuple[int, int], Step]:
    """(access index, load) -> the step measuring that load (its index is set when it runs)."""
    out: dict[tuple[int, int], Step] = {}
    for access_index, grid in grids.items():
        series = _Series(plan, access_index)
        for load in grid:
            if dimension == WORKERS:
                workers = series.workers(series.first_targets(1 << 30, series.first_workers(load)), None)
            else:
                workers = series.workers(series.all_targets(), load)
            out[(access_index, load)] = Step(len(out), access_index, workers)
    return out


def load_words(dimension: str, load: int) -> str:
    """'QD 16', or '4 workers' (per manager) when the search is over workers."""
    return f"QD {load}" if dimension == QUEUE_DEPTH else f"{load} worker{'s' if load != 1 else ''}"


def probe_line(label: str, dimension: str, limit_ms: float, probe: Probe, next_load: int | None) -> str:
    """What one measured load gave against the limit, and what the search does next, in words:
    '4K read: QD 16, p99 3.21 ms ≤ 5 ms, within the limit (12,345 IOPS, 48.2 MB/s); next: QD 64'."""
    load = load_words(dimension, probe.load) + (" again, to confirm the answer" if probe.confirm else "")
    limit = f"{limit_ms:g} ms"
    if probe.p99_ms is None:
        verdict = f"no p99 (no I/O completed), over the limit of {limit}"
    elif probe.p99_ms <= limit_ms:
        verdict = f"p99 {probe.p99_ms:.3g} ms ≤ {limit}, within the limit"
    else:
        verdict = f"p99 {probe.p99_ms:.3g} ms > {limit}, over the limit"
    then = (
        f"next: {load_words(dimension, next_load)}"
        if next_load is not None
        else "the search of this specification is done"
    )
    return f"{label}: {load}, {verdict} ({probe.iops:,.0f} IOPS, {probe.mbps:,.1f} MB/s); {then}"


def _label(plan: Plan, access_index: int) -> str:
    names = [
        w.specs[access_index]
        for m in plan.managers
        for w in m.workers
        if access_index < len(w.specs)
        and w.kind in RUNNABLE_KINDS
        and w.targets
        and w.specs[access_index].casefold() != IDLE.casefold()
    ]
    return " + ".join(dict.fromkeys(names))


class CurveRunner(Runner):
    """Runs the searches. ``searches`` holds each spec's search and steps once the run has ended."""

    def __init__(
        self,
        plan: Plan,
        endpoints: dict[str, ManagerEndpoint],
        listener: RunListener | None = None,
        options: RunOptions | None = None,
        *,
        p99_max_ms: float,
        max_load: int | None = None,
        budget: int = SEARCH_BUDGET,
        exhaustive: bool = False,
        metric: str = "iops",
    ):
        """``exhaustive``: measure every load of the grid instead of searching (to check a search against);
        ``metric`` ("iops" | "mbps"): the figure the answer leads with."""
        self.metric = metric
        plan = copy.deepcopy(plan)
        self.dimension = curve_dimension(plan)
        plan.setup.test_type = "NORMAL"  # the search chooses the loads; preconditioning is not part of it
        plan.setup.precondition = Precondition()
        workers_most = max(
            (
                len(_Series(plan, a).by_manager().get(mi, []))
                for a in range(_positions(plan))
                for mi in range(len(plan.managers))
            ),
            default=1,
        )
        top = max_load or (workers_most if self.dimension == WORKERS else DEFAULT_MAX_QD)
        if self.dimension == WORKERS:
            top = min(top, workers_most)
        grids = {a: load_grid(top) for a in range(_positions(plan)) if _Series(plan, a).eligible}
        starts = {
            a: max((w.queue_depth for m in plan.managers for w in m.workers), default=1)
            if self.dimension == QUEUE_DEPTH
            else 1
            for a in grids
        }
        self.p99_max_ms = p99_max_ms
        self.exhaustive = exhaustive

        def search(a: int) -> KneeSearch:
            if exhaustive:
                return GridSweep(grids[a], p99_max_ms, start=starts[a])
            return KneeSearch(grids[a], p99_max_ms, start=starts[a], budget=budget)

        self.searches = [SpecCurve(a, _label(plan, a), search(a)) for a in sorted(grids)]
        self._candidates = candidate_steps(plan, grids, self.dimension)
        super().__init__(plan, endpoints, listener, options, steps=list(self._candidates.values()))
        self._candidate_files: dict[tuple[int, int], dict[str, JobFile]] = {}

    def prepare(self, options: RunOptions | None = None) -> PreparedRun:
        """The runner's checks over every candidate, and a run time each load is measured for."""
        prepared = super().prepare(options)
        if any(jf.step_seconds == 0 for files in prepared.jobfiles for jf in files.values()):
            raise RunRefused(
                "a load search measures each load for a set time, and this plan's steps run until "
                "stopped: set a run time (Test Setup: Run time, or --run-time S)"
            )
        self._candidate_files = dict(zip(self._candidates, prepared.jobfiles, strict=True))
        return prepared

    @property
    def planned_steps(self) -> int:
        """The most steps the searches may measure (each spec's budget and its confirmation; every grid load
        when exhaustive): what progress displays count to."""
        return sum(
            len(c.search.grid) if self.exhaustive else min(c.search.budget, len(c.search.grid)) + 1
            for c in self.searches
        )

    def record(self) -> dict[str, Any]:
        """What the searches looked for and found, as kept with the run (app.store.run_extras, key ``curve``)."""
        specs = []
        for c in self.searches:
            answer, confirm = c.search.answer, c.search.confirmation
            specs.append(
                {
                    "label": c.label,
                    "access_index": c.access_index,
                    "steps": c.steps,
                    "answer_load": answer.load if answer else None,
                    "confirm_step": c.steps[-1] if confirm is not None and c.steps else None,
                    "steps_measured": c.search.steps_measured,
                    "bracket": list(c.search.bracket),
                    "grid": c.search.grid,
                }
            )
        return {
            "p99_max_ms": self.p99_max_ms,
            "metric": self.metric,
            "dimension": self.dimension,
            "exhaustive": self.exhaustive,
            "budget": None
            if self.exhaustive
            else (self.searches[0].search.budget if self.searches else None),
            "specs": specs,
        }

    @property
    def summary(self) -> RunSummary:
        return summarize([o.status for o in self.outcomes], len(self.outcomes))

    def run(self) -> str:
        if self.prepared is None:
            self.prepare()
        self.steps, self.jobfiles = (
            [],
            [],
        )  # the run's steps are those the search measures, appended as it goes
        return super().run()

    def _run_steps(self) -> str:
        status = "complete"
        for curve in self.searches:
            while (load := curve.search.next_load()) is not None:
                if self._stop_all.is_set():
                    return "stopped"
                step = replace(self._candidates[(curve.access_index, load)], index=len(self.steps))
                files = _renumbered(self._candidate_files[(curve.access_index, load)], step.index)
                self.steps.append(step)
                self.jobfiles.append(files)
                outcome = self._step(step, files)
                self.outcomes.append(outcome)
                self.listener.step_finished(outcome)
                curve.steps.append(step.index)
                if self._stop_all.is_set() or outcome.status == "stopped":
                    return "stopped"
                if outcome.status in ("failed", "partial"):
                    return "failed"
                total = next(
                    (s.whole for s in outcome.results if s.level == "all" and s.key == ALL_KEY), None
                )
                if total is None:
                    return "failed"
                probe = curve.search.record(load, total.percentile_ms(99), total.iops, total.mbps)
                line = probe_line(
                    curve.label, self.dimension, self.p99_max_ms, probe, curve.search.next_load()
                )
                self.listener.message(step, Message("", line, "info", kind=LOAD_SEARCH))
        return status


def _renumbered(files: dict[str, JobFile], index: int) -> dict[str, JobFile]:
    """The candidate's job files with the step number their comment gives made the run's."""
    out = {}
    for name, jf in files.items():
        text = re.sub(
            r"^(; manager .*, step )\d+(:)",
            lambda m: f"{m.group(1)}{index + 1}{m.group(2)}",
            jf.text,
            count=1,
            flags=re.M,
        )
        out[name] = replace(jf, text=text)
    return out
