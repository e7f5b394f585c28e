"""A stored run's samples fed back through the live charts' data (LiveResults), so a past run is drawn by
the same code, with the same update-frequency rules, as it was drawn while it ran (Qt-free).

``load_run`` reads on a store task thread; ``replay`` and ``overlay`` build LiveResults on the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from app.model.metrics import Metrics
from app.store import Run, Store, get_run, step_samples, step_series
from app.ui.run.live_data import LiveResults, Series, SeriesKey, StepMark

LEVELS = ("all", "manager", "worker")  # targets are not charted (as live, unless asked)
OVERLAY_GAP_S = 2.0  # between steps laid one after another in an overlay


@dataclass(frozen=True)
class ReplaySample:
    """What LiveResults reads from a telemetry sample."""

    level: str
    manager: str | None
    key: str
    t: float  # seconds since the step started
    interval: Metrics
    whole: Metrics
    final: bool = False


@dataclass
class StoredRun:
    run: Run
    samples: dict[int, list[ReplaySample]] = field(default_factory=dict)  # step id -> samples by series, t
    offsets: dict[int, float] = field(default_factory=dict)  # step id -> seconds since the run started

    @property
    def has_samples(self) -> bool:
        return any(self.samples.values())

    def keys(self) -> list[SeriesKey]:
        """Every charted level, in the order telemetry first reported them."""
        out: dict[SeriesKey, None] = {}
        for samples in self.samples.values():
            for s in samples:
                out[("all", None, "ALL") if s.level == "all" else (s.level, s.manager, s.key)] = None
        return list(out)


def _seconds_between(a: str | None, b: str | None) -> float | None:
    try:
        return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def load_run(store: Store, run_id: int, levels: tuple[str, ...] = LEVELS) -> StoredRun:
    """The run and its samples (RunNotFound if it was deleted)."""
    run = get_run(store, run_id)
    data = StoredRun(run)
    elapsed = 0.0
    for step in run.steps:
        start = _seconds_between(run.started, step.started)
        # where the clock says the step started, but never inside the previous step's samples
        data.offsets[step.id] = max(start, elapsed) if start is not None else elapsed
        out: list[ReplaySample] = []
        for level, manager, key in step_series(store, step.id):
            if level not in levels:
                continue
            inter = step_samples(store, step.id, level, key, "interval", manager=manager)
            whole = dict(step_samples(store, step.id, level, key, "whole", manager=manager))
            for i, (t, m) in enumerate(inter):
                out.append(ReplaySample(level, manager, key, t, m, whole.get(t, m), final=i == len(inter) - 1))
        data.samples[step.id] = out
        last = max((s.t for s in out), default=step.run_s)
        elapsed = data.offsets[step.id] + last + (1.0 if out else 0.0)
    return data


def replay(live: LiveResults, data: StoredRun, step_id: int | None = None) -> None:
    """Feed a stored run into ``live`` as if it were arriving: every step at its offset into the run, or
    only ``step_id`` from 0 s."""
    live.clear()
    for step in data.run.steps:
        if step_id is not None and step.id != step_id:
            continue
        offset = 0.0 if step_id is not None else data.offsets.get(step.id, 0.0)
        live.start_step(offset, f"{step.index + 1}: {step.spec_name}")
        live.add(offset, data.samples.get(step.id, []))


@dataclass
class OverlayPart:
    """One side's step in an overlay segment."""

    label: str  # the series (a run)
    samples: list[ReplaySample]  # the step's ALL-level samples


def overlay(live: LiveResults, segments: list[tuple[str, list[OverlayPart]]]) -> list[SeriesKey]:
    """Runs on one time axis, step by step: each segment (a matched access specification) starts where
    the longest run's previous step ended, every run's step from the segment's start. One series per run
    label; returns their keys in first-seen order."""
    live.clear()
    keys: dict[str, SeriesKey] = {}
    x0 = 0.0
    for label, parts in segments:
        live.steps.append(StepMark(x0, label))
        longest = 0.0
        for part in parts:
            key = keys.setdefault(part.label, ("run", None, part.label))
            s = live.series.get(key)
            if s is None:
                s = live.series[key] = Series()
            if s.n:
                s.gap(x0)
            for smp in part.samples:
                s.append(x0 + smp.t, smp.whole, smp.interval)
                longest = max(longest, smp.t)
        x0 += longest + OVERLAY_GAP_S
    live.revision += 1
    return list(keys.values())

