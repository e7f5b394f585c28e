"""Preconditioning results: the fill before the measured steps, and whether and when steady state came.

A plan with ``setup.precondition`` runs a fill step and/or a steady-state step before its measured steps
(app.engine.jobs.sequence). Which stored steps those were follows from the plan stored with the run. Steady
state is judged on the steady-state step's per-second ALL samples, cut into rounds of ``round_s``
seconds, by the rule in app.model.steady_state — the same rule that ended the step while it ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.engine.jobs.sequence import FILL, MEASURE, STEADY
from app.engine.sampling.telemetry import ALL_KEY
from app.model.metrics import Metrics
from app.model.plan import Precondition
from app.model.steady_state import Window, first_steady_window, rounds_of
from app.model.units import format_bytes, format_elapsed
from app.store.database import Store
from app.store.queries import step_samples
from app.store.records import Run, StepInfo


def precondition_of(run: Run) -> Precondition:
    """The run's preconditioning settings, from the plan stored with it (none for older runs)."""
    data = run.plan_setup().get("precondition")
    if not isinstance(data, dict):
        return Precondition()
    try:
        return Precondition(**{k: v for k, v in data.items() if k in Precondition.__dataclass_fields__})
    except TypeError:
        return Precondition()


def phases(run: Run) -> dict[int, str]:
    """Step index -> phase; the preconditioning steps come first, in the order the sequence builds them."""
    pc = precondition_of(run)
    leading = ([FILL] if pc.fill_passes > 0 else []) + ([STEADY] if pc.steady_state else [])
    order = sorted(s.index for s in run.steps)
    return {idx: (leading[i] if i < len(leading) else MEASURE) for i, idx in enumerate(order)}


def _phase_step(run: Run, phase: str) -> StepInfo | None:
    ph = phases(run)
    return next((s for s in run.steps if ph.get(s.index) == phase), None)


def measured_steps(run: Run) -> list[StepInfo]:
    """The steps a comparison or report measures: preconditioning left out."""
    ph = phases(run)
    return [s for s in run.steps if ph.get(s.index, MEASURE) == MEASURE]


@dataclass(frozen=True)
class SteadyState:
    rounds: list[float]  # mean IOPS of each complete round
    round_s: int
    window: Window | None  # the first steady window, None when not reached

    @property
    def at_s(self) -> float | None:
        """Seconds into the step when the steady window closed."""
        return None if self.window is None else (self.window.last + 1) * self.round_s

    def sentence(self, pc: Precondition) -> str:
        rule = (
            f"IOPS over {pc.window_rounds} rounds of {pc.round_s} s ranging within {pc.tolerance_pct} % of "
            f"their mean, slope within ±{pc.slope_pct} %"
        )
        w = self.window
        if w is not None:
            return (
                f"Steady state reached after round {w.last + 1} ({self.at_s:g} s): {w.mean_iops:,.0f} IOPS, "
                f"range {w.excursion_pct:.1f} % of the mean, slope {w.slope_pct:.1f} % ({rule})"
            )
        return (
            f"Steady state not reached in {len(self.rounds)} rounds ({len(self.rounds) * self.round_s} s, "
            f"at most {pc.max_s} s) ({rule})"
        )


def steady_state(samples: Sequence[tuple[float, Metrics]], pc: Precondition) -> SteadyState:
    rounds = rounds_of(((t, m.ios, m.seconds) for t, m in samples), pc.round_s)
    return SteadyState(rounds, pc.round_s, first_steady_window(rounds, pc))


def fill_summary(run: Run) -> str | None:
    """'2 passes over 3 targets: 6 GiB written in 1 min 03 s' for the run's fill step, if it had one."""
    pc = precondition_of(run)
    step = _phase_step(run, FILL)
    if step is None:
        return None
    total = next((r.metrics for r in step.results if r.level == "all"), None)
    moved = f": {format_bytes(total.bytes)} written in {format_elapsed(total.seconds)}" if total else ""
    return (
        f"Fill: {pc.fill_passes} pass(es) of 128 KiB sequential writes over {len(step.active_targets)} target(s)"
        f"{moved} [{step.status}]"
    )


def steady_state_of(store: Store, run: Run) -> SteadyState | None:
    """The verdict for the run's steady-state step, from its stored per-second ALL samples."""
    step = _phase_step(run, STEADY)
    if step is None:
        return None
    return steady_state(step_samples(store, step.id, "all", ALL_KEY), precondition_of(run))
