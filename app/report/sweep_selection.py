"""Which steps of a sweep get per-step charts of their own (Qt-free). A sweep's steps are drawn together as its
curves (the run's own, or both sides overlaid in a comparison), so the Charts section's bars leave a long
sweep's steps out, and its response time distribution and per-second charts are drawn only where they add
something: at the sweep's lightest and heaviest load, its highest throughput and its knee, on either side. Every load keeps its
row in the tables (figures, percentiles), which the section's note says."""

from __future__ import annotations

from app.analysis.compare import Side, StepValues
from app.analysis.sweep import Sweep
from app.report.headlines import sweep_work

Rows = list[tuple[str, list[tuple[Side, StepValues]]]]  # latency.pairs: (title, each side's step)


SHORT = 4  # a sweep of this many loads or fewer keeps every step's charts (they are few already)


def key_steps(sweep: Sweep) -> set[int]:
    """The step indexes of a sweep worth a chart of their own: lightest, heaviest, maximum, knee (every step
    of a short sweep)."""
    if len(sweep.points) <= SHORT:
        return {p.step for p in sweep.points}
    work = sweep_work(sweep)
    pts = sorted(sweep.points, key=lambda p: p.load)
    top = max(pts, key=lambda p: getattr(p, work))
    out = {pts[0].step, pts[-1].step, top.step}
    if sweep.knee is not None:
        out.add(sweep.knee.step)
    return out


def _run_of(side: Side) -> int:
    return side.runs[0].id


def per_step_rows(rows: Rows, curves: dict[int, list[Sweep]]) -> Rows:
    """``rows`` without the sweep steps whose charts add nothing (``curves``: run id -> its sweeps drawn as
    curves); a row stays where any side's step is not such a sweep's, or is one of its key steps."""
    drawn = {run: {p.step for s in sweeps for p in s.points} for run, sweeps in curves.items()}
    keys = {run: set().union(*(key_steps(s) for s in sweeps)) for run, sweeps in curves.items()}

    def kept(side: Side, step: StepValues) -> bool:
        run = _run_of(side)
        return step.index not in drawn.get(run, set()) or step.index in keys[run]

    return [(title, sides) for title, sides in rows if any(kept(side, step) for side, step in sides)]


def curve_steps(side: Side, curves: dict[int, list[Sweep]]) -> set[int]:
    """The step indexes of ``side`` drawn as the curves of a sweep longer than SHORT: no bars of their own (a
    short sweep's few bars stay)."""
    return {p.step for s in curves.get(_run_of(side), []) if len(s.points) > SHORT for p in s.points}


def chart_note(rows: Rows, kept: Rows, curves: dict[int, list[Sweep]]) -> str:
    """What the per-step charts leave out, in words; '' when nothing."""
    if len(kept) == len(rows):
        return ""
    swept: dict[str, list[str]] = {}
    swept_steps = {run: {p.step for s in sweeps for p in s.points} for run, sweeps in curves.items()}
    for title, sides in kept:
        side, step = sides[0]
        if step.index in swept_steps.get(_run_of(side), set()):
            spec, _, load = title.partition(", ")  # (a specification's name has no comma: Iometer's rule)
            swept.setdefault(spec, []).append(load)
    shown = "; ".join(f"{spec}: {', '.join(loads)}" for spec, loads in swept.items())
    return (
        "A sweep's steps are drawn together as its curves; its per-step charts below are at its lightest and "
        f"heaviest load, its highest throughput and its knee on either side ({shown}): {len(kept)} of "
        f"{len(rows)} steps. Every step's figures and percentiles are in the tables."
    )
