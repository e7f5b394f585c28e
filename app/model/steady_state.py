"""The steady-state rule (the SNIA Performance Test Specification's idea), used live by the runner to end a
precondition step and afterwards by the analysis to say when steady state came.

Per-interval IOPS samples are cut into rounds of ``round_s`` seconds. Steady state is the first window of
``window_rounds`` consecutive complete rounds in which every round's IOPS lie within ``tolerance_pct`` of
the window's mean, and the least-squares line through the rounds moves by no more than ``slope_pct`` of
that mean from the window's first round to its last.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.model.plan import Precondition


@dataclass(frozen=True)
class Window:
    first: int  # 0-based rounds
    last: int
    mean_iops: float
    excursion_pct: float  # the largest round's distance from the mean
    slope_pct: float  # the fitted line's excursion across the window


def rounds_of(samples: Iterable[tuple[float, int, float]], round_s: int) -> list[float]:
    """Mean IOPS per complete round from (step time, I/Os, seconds) of each interval, in order.

    Rounds are cut on the intervals' accumulated length (the measured time), so it does not matter whether a
    sample's time marks its start or its end. An interval sent again a moment later (ALL's last second, when
    fio's final report arrives) replaces the first copy."""
    kept: list[tuple[float, int, float]] = []
    for t, n, seconds in samples:
        if kept and 0 <= t - kept[-1][0] < 0.05:
            kept[-1] = (t, n, seconds)
        else:
            kept.append((t, n, seconds))
    ios: dict[int, int] = {}
    secs: dict[int, float] = {}
    elapsed = 0.0
    for _, n, seconds in kept:
        if seconds <= 0:
            continue
        elapsed += seconds
        k = int((elapsed - 1e-6) // round_s)
        ios[k] = ios.get(k, 0) + n
        secs[k] = secs.get(k, 0.0) + seconds
    complete = int((elapsed + 1e-6) // round_s)
    return [ios.get(k, 0) / secs[k] if secs.get(k) else 0.0 for k in range(complete)]


def first_steady_window(rounds: Sequence[float], pc: Precondition) -> Window | None:
    w = pc.window_rounds
    xs = range(w)
    x_mean = (w - 1) / 2.0
    sxx = sum((x - x_mean) ** 2 for x in xs)
    for start in range(0, len(rounds) - w + 1):
        window = rounds[start : start + w]
        mean = sum(window) / w
        if mean <= 0:
            continue
        excursion = max(abs(r - mean) for r in window) / mean * 100.0
        slope = sum((x - x_mean) * (r - mean) for x, r in zip(xs, window, strict=True)) / sxx
        slope_pct = abs(slope * (w - 1)) / mean * 100.0
        if excursion <= pc.tolerance_pct and slope_pct <= pc.slope_pct:
            return Window(start, start + w - 1, mean, excursion, slope_pct)
    return None


class SteadyWatch:
    """Fed the ALL samples of a precondition step as they arrive; says when the rule is met."""

    def __init__(self, pc: Precondition):
        self.pc = pc
        self._samples: list[tuple[float, int, float]] = []

    def add(self, t: float, ios: int, seconds: float) -> bool:
        self._samples.append((t, ios, seconds))
        return first_steady_window(rounds_of(self._samples, self.pc.round_s), self.pc) is not None
