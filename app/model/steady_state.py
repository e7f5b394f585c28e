"""The steady-state rule (the SNIA Performance Test Specification's idea), used live by the runner to end a
precondition step and afterwards by the analysis to say when steady state came.

Per-interval IOPS samples are cut into rounds of ``round_s`` seconds. Steady state is the first window of
``window_rounds`` consecutive complete rounds in which the range of the rounds' IOPS (highest less lowest)
is no more than ``tolerance_pct`` of the window's mean, and the least-squares line through the rounds moves
by no more than ``slope_pct`` of that mean from the window's first round to its last (SNIA PTS: "data
excursion" and "slope excursion").

An interval is shared between the rounds it spans in proportion to its time: fio's intervals are about a
second but not exactly (0.999 s, 1.007 s), so cutting on whole intervals left a round of one interval's
length empty now and then ("…, 0"), and one round with two intervals.
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
    excursion_pct: float  # the rounds' range (highest less lowest), % of the mean
    slope_pct: float  # the fitted line's excursion across the window


def rounds_of(samples: Iterable[tuple[float, int, float]], round_s: float) -> list[float]:
    """Mean IOPS per complete round from (step time, I/Os, seconds) of each interval, in order.

    Rounds are cut on the intervals' accumulated length (the measured time), so it does not matter whether a
    sample's time marks its start or its end; an interval spanning two rounds gives each its share of its I/Os
    by time. An interval sent again a moment later (ALL's last second, when fio's final report arrives)
    replaces the first copy."""
    kept: list[tuple[float, int, float]] = []
    for t, n, seconds in samples:
        if kept and 0 <= t - kept[-1][0] < 0.05:
            kept[-1] = (t, n, seconds)
        else:
            kept.append((t, n, seconds))
    if round_s <= 0:
        return []
    ios: dict[int, float] = {}
    elapsed = 0.0
    for _, n, seconds in kept:
        if seconds <= 0:
            continue
        begin, end = elapsed, elapsed + seconds
        k = int(begin // round_s)
        while k * round_s < end - 1e-9:
            share = (min(end, (k + 1) * round_s) - max(begin, k * round_s)) / seconds
            ios[k] = ios.get(k, 0.0) + n * share
            k += 1
        elapsed = end
    complete = int((elapsed + 1e-6) // round_s)
    return [ios.get(k, 0.0) / round_s for k in range(complete)]


def judge(window: Sequence[float]) -> tuple[float, float, float]:
    """(mean, range % of the mean, slope excursion % of the mean: signed) of consecutive rounds."""
    w = len(window)
    mean = sum(window) / w
    if mean <= 0 or w < 2:
        return mean, 0.0, 0.0
    x_mean = (w - 1) / 2.0
    sxx = sum((x - x_mean) ** 2 for x in range(w))
    slope = sum((x - x_mean) * (r - mean) for x, r in enumerate(window)) / sxx
    return mean, (max(window) - min(window)) / mean * 100.0, slope * (w - 1) / mean * 100.0


def first_steady_window(rounds: Sequence[float], pc: Precondition) -> Window | None:
    w = pc.window_rounds
    for start in range(0, len(rounds) - w + 1):
        mean, spread, slope = judge(rounds[start : start + w])
        if mean <= 0:
            continue
        if spread <= pc.tolerance_pct and abs(slope) <= pc.slope_pct:
            return Window(start, start + w - 1, mean, spread, abs(slope))
    return None


class SteadyWatch:
    """Fed the ALL samples of a precondition step as they arrive; says when the rule is met."""

    def __init__(self, pc: Precondition):
        self.pc = pc
        self._samples: list[tuple[float, int, float]] = []

    def add(self, t: float, ios: int, seconds: float) -> bool:
        self._samples.append((t, ios, seconds))
        return first_steady_window(rounds_of(self._samples, self.pc.round_s), self.pc) is not None
