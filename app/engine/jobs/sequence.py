"""Expansion of Iometer's test types (cycling) into the ordered list of test steps.

Follows docs/reference/iometer.md, "The test series": one series per assigned-spec position (column-wise over
all workers' spec lists), and within it the steps the Test Type produces. Network workers are not
eligible (fio cannot run them; the plan notes this).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from app.engine.jobs.network_jobs import partner_index
from app.model.plan import IDLE, PRECONDITION_FILL, Cycling, Plan, QueueDepthCycling, TestSetup


@dataclass
class ActiveWorker:
    manager: int  # index into plan.managers
    worker: int  # index into manager.workers
    targets: list[int]  # indices into worker.targets, in order
    spec: str
    queue_depth: int
    partners: list[int] = field(default_factory=list)  # a network worker's client managers


MEASURE, FILL, STEADY = "measure", "fill", "steady"  # a step's phase: preconditioning comes first
RUNNABLE_KINDS = ("disk", "network_tcp")  # Iometer's VI network workers have no fio engine
FILL_QUEUE_DEPTH = 32  # fills write 128 KiB sequentially with 32 in flight, as the SNIA specification does


@dataclass
class Step:
    index: int  # 0-based position in the run
    access_index: int  # which assigned-spec position this step belongs to
    workers: list[ActiveWorker] = field(default_factory=list)
    phase: str = MEASURE

    @property
    def spec_label(self) -> str:
        names = list(dict.fromkeys(w.spec for w in self.workers))
        return names[0] if len(names) == 1 else " + ".join(names)

    @property
    def queue_depths(self) -> list[int]:
        return sorted({w.queue_depth for w in self.workers})

    @property
    def target_count(self) -> int:
        return sum(len(w.targets) for w in self.workers)

    def managers(self) -> list[int]:
        """Every manager taking part: the workers' own, and the partners of network workers."""
        return sorted({w.manager for w in self.workers} | {p for w in self.workers for p in w.partners})

    def for_manager(self, manager: int) -> list[ActiveWorker]:
        return [w for w in self.workers if w.manager == manager]


def cycle_values(start: int, step: int, step_type: str, end: int | None = None) -> Iterator[int]:
    """Iometer's step rule: start, start+step, ... (linear, or step 1) or start, start*step, start*step**2, ..."""
    value, exponent = start, 1
    while end is None or value <= end:
        yield value
        if step_type == "LINEAR" or step == 1:
            value += step
        else:
            value = start * step**exponent
            exponent += 1


def _values(c: Cycling) -> Iterator[int]:
    return cycle_values(c.start, c.step, c.step_type)


def _qd_values(q: QueueDepthCycling) -> Iterator[int]:
    return cycle_values(q.start, q.step, q.step_type, q.end)


# An "assignment" maps eligible worker (manager, worker) -> number of its first targets to activate.
Assignment = dict[tuple[int, int], int]


class _Series:
    """The eligible workers of one spec position, and helpers to express a cycling step."""

    def __init__(self, plan: Plan, access_index: int):
        self.plan = plan
        self.access_index = access_index
        self.eligible: list[tuple[int, int]] = []
        for mi, m in enumerate(plan.managers):
            for wi, w in enumerate(m.workers):
                if (
                    w.kind in RUNNABLE_KINDS
                    and access_index < len(w.specs)
                    and w.specs[access_index].casefold() != IDLE.casefold()
                    and w.targets
                ):
                    self.eligible.append((mi, wi))

    def n_targets(self, key: tuple[int, int]) -> int:
        mi, wi = key
        return len(self.plan.managers[mi].workers[wi].targets)

    def by_manager(self) -> dict[int, list[tuple[int, int]]]:
        out: dict[int, list[tuple[int, int]]] = {}
        for key in self.eligible:
            out.setdefault(key[0], []).append(key)
        return out

    def all_targets(self) -> Assignment:
        return {k: self.n_targets(k) for k in self.eligible}

    def first_targets(self, t: int, workers: list[tuple[int, int]] | None = None) -> Assignment:
        return {k: min(t, self.n_targets(k)) for k in (self.eligible if workers is None else workers)}

    def first_workers(self, w: int) -> list[tuple[int, int]]:
        return [k for keys in self.by_manager().values() for k in keys[:w]]

    def fill(self, t: int, keys: list[tuple[int, int]]) -> Assignment:
        """t targets filled worker by worker over keys."""
        out: Assignment = {}
        for k in keys:
            if t <= 0:
                break
            n = min(t, self.n_targets(k))
            out[k] = n
            t -= n
        return out

    def workers(self, a: Assignment, qd: int | None) -> list[ActiveWorker]:
        out = []
        for mi, wi in self.eligible:  # keep plan order
            n = a.get((mi, wi), 0)
            if n > 0:
                w = self.plan.managers[mi].workers[wi]
                partners = (
                    sorted({partner_index(self.plan, mi, w, t) for t in range(n)})
                    if w.kind == "network_tcp"
                    else []
                )
                depth = 1 if w.kind == "network_tcp" else qd if qd is not None else w.queue_depth
                out.append(ActiveWorker(mi, wi, list(range(n)), w.specs[self.access_index], depth, partners))
        return out


def _growing(assignments: Iterator[Assignment]) -> Iterator[Assignment]:
    """Yield assignments while the number of active targets keeps growing (Iometer's end rule)."""
    previous = 0
    for a in assignments:
        count = sum(a.values())
        if count <= previous:
            return
        previous = count
        yield a


# One function per Iometer test type: the (assignment, queue depth or None for the worker's own) of its steps.
_SeriesSteps = Iterator[tuple[Assignment, int | None]]


def _normal(s: _Series, setup: TestSetup) -> _SeriesSteps:
    yield s.all_targets(), None


def _cycle_targets(s: _Series, setup: TestSetup) -> _SeriesSteps:
    for a in _growing(s.first_targets(t) for t in _values(setup.target_cycling)):
        yield a, None


def _cycle_workers(s: _Series, setup: TestSetup) -> _SeriesSteps:
    for a in _growing(s.first_targets(1 << 30, s.first_workers(w)) for w in _values(setup.worker_cycling)):
        yield a, None


def _increment_targets_parallel(s: _Series, setup: TestSetup) -> _SeriesSteps:
    def parallel(t: int) -> Assignment:
        out: Assignment = {}
        for keys in s.by_manager().values():
            out.update(s.fill(t, keys))
        return out

    for a in _growing(parallel(t) for t in _values(setup.target_cycling)):
        yield a, None


def _increment_targets_serial(s: _Series, setup: TestSetup) -> _SeriesSteps:
    for a in _growing(s.fill(t, s.eligible) for t in _values(setup.target_cycling)):
        yield a, None


def _cycle_workers_and_targets(s: _Series, setup: TestSetup) -> _SeriesSteps:
    # Iometer tests the target step with the *worker* step (a bug); we use the target's own rule.
    previous_workers = 0
    for w in _values(setup.worker_cycling):
        keys = s.first_workers(w)
        if len(keys) <= previous_workers:
            return
        previous_workers = len(keys)
        for a in _growing(s.first_targets(t, keys) for t in _values(setup.target_cycling)):
            yield a, None


def _cycle_outstanding_ios(s: _Series, setup: TestSetup) -> _SeriesSteps:
    for q in _qd_values(setup.queue_depth_cycling):
        yield s.all_targets(), q


def _cycle_outstanding_ios_and_targets(s: _Series, setup: TestSetup) -> _SeriesSteps:
    for a in _growing(s.first_targets(t) for t in _values(setup.target_cycling)):
        for q in _qd_values(setup.queue_depth_cycling):
            yield a, q


_STEPS_OF_TEST_TYPE: dict[str, Callable[[_Series, TestSetup], _SeriesSteps]] = {
    "NORMAL": _normal,
    "CYCLE_TARGETS": _cycle_targets,
    "CYCLE_WORKERS": _cycle_workers,
    "INCREMENT_TARGETS_PARALLEL": _increment_targets_parallel,
    "INCREMENT_TARGETS_SERIAL": _increment_targets_serial,
    "CYCLE_WORKERS_AND_TARGETS": _cycle_workers_and_targets,
    "CYCLE_OUTSTANDING_IOS": _cycle_outstanding_ios,
    "CYCLE_OUTSTANDING_IOS_AND_TARGETS": _cycle_outstanding_ios_and_targets,
}


def _series_steps(s: _Series, test_type: str, plan: Plan) -> _SeriesSteps:
    if not s.eligible:
        return
    steps = _STEPS_OF_TEST_TYPE.get(test_type)
    if steps is None:
        raise ValueError(f"unknown test type {test_type!r}")
    yield from steps(s, plan.setup)


MAX_STEPS = 10_000  # far beyond any real plan (the largest corpus file has 128); bounds a hostile file


class SequenceTooLong(ValueError):
    """The plan expands to more steps than Fiometer runs; str() says so and what to change."""


def _fill_step(plan: Plan) -> Step | None:
    """Every distinct target of every disk worker once (workers sharing a test file fill it once)."""
    active: list[ActiveWorker] = []
    seen: set[tuple[int, str, str | None]] = set()
    for mi, m in enumerate(plan.managers):
        for wi, w in enumerate(m.workers):
            if w.kind != "disk":
                continue
            mine = []
            for ti, target in enumerate(w.targets):
                if (mi, target.name, target.path) not in seen:
                    seen.add((mi, target.name, target.path))
                    mine.append(ti)
            if mine:
                active.append(ActiveWorker(mi, wi, mine, PRECONDITION_FILL, FILL_QUEUE_DEPTH))
    return Step(0, 0, active, FILL) if active else None


def expand(plan: Plan, limit: int = MAX_STEPS) -> list[Step]:
    """The ordered test steps of the plan, preconditioning first: a fill over every target, then the first
    measured step's workload until steady. Raises SequenceTooLong past ``limit``."""
    pc = plan.setup.precondition
    steps: list[Step] = [s for s in [_fill_step(plan)] if s is not None] if pc.fill_passes > 0 else []
    steady = pc.steady_state
    positions = max((len(w.specs) for m in plan.managers for w in m.workers), default=0)
    for access_index in range(positions):
        series = _Series(plan, access_index)
        for assignment, qd in _series_steps(series, plan.setup.test_type, plan):
            if len(steps) >= limit:
                raise SequenceTooLong(
                    f"the plan expands to more than {limit} test steps ({plan.setup.test_type} over "
                    f"{positions} access-spec positions); use fewer specs or a larger cycling step"
                )
            if steady:  # the workload under test runs until steady before it is measured
                steps.append(Step(len(steps), access_index, series.workers(assignment, qd), STEADY))
                steady = False
            steps.append(Step(len(steps), access_index, series.workers(assignment, qd)))
    return steps
