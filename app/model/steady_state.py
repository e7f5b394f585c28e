"""The steady-state rule of the SNIA Solid State Storage Performance Test Specification (PTS v2.0.2), used by
`fiometer pts` on its rounds (``pts_steady_state``), live by the runner to end a precondition step and
afterwards by the analysis to say when steady state came (``first_steady_window``: the same rule).

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
from dataclasses import dataclass, replace

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
    fit = fit_window(window)
    if fit.average <= 0 or len(window) < 2:
        return fit.average, 0.0, 0.0
    return fit.average, fit.range_pct, fit.slope * (len(window) - 1) / fit.average * 100.0


# --- the SNIA PTS rule (v2.0.2): one pure function, used by `fiometer pts` and by every rule above ------
PTS_WINDOW = 5  # rounds in the measurement window
PTS_RANGE_PCT = (
    20.0  # the tracking variable's range (highest less lowest) within the window, % of its average
)
PTS_SLOPE_PCT = 10.0  # the least-squares line's range across the window (its "slope excursion"), % of average
PTS_MAX_ROUNDS = 25  # rounds run at most before the test says "not reached"
_AT_BOUND = 1e-9  # relative slack: a figure exactly at a bound (20.000000000000004 %) meets it


@dataclass(frozen=True)
class WindowFit:
    """The figures of one measurement window: its average, range, and least-squares line y = a + b*x
    (x: 0-based round within the window)."""

    average: float
    range_value: float  # highest less lowest
    slope: float  # b, per round
    intercept: float  # a, at the window's first round

    @property
    def range_pct(self) -> float:
        return self.range_value / self.average * 100.0 if self.average > 0 else 0.0

    def fit_at(self, x: float) -> float:
        return self.intercept + self.slope * x

    def fit_excursion(self, rounds: int) -> float:
        """The least-squares line's range across ``rounds`` rounds: |slope| x (rounds - 1)."""
        return abs(self.slope) * max(rounds - 1, 0)


def fit_window(window: Sequence[float]) -> WindowFit:
    """Average, range and least-squares line of consecutive rounds (no judgement)."""
    w = len(window)
    if w == 0:
        return WindowFit(0.0, 0.0, 0.0, 0.0)
    mean = sum(window) / w
    if w < 2:
        return WindowFit(mean, 0.0, 0.0, mean)
    x_mean = (w - 1) / 2.0
    sxx = sum((x - x_mean) ** 2 for x in range(w))
    slope = sum((x - x_mean) * (r - mean) for x, r in enumerate(window)) / sxx
    return WindowFit(mean, max(window) - min(window), slope, mean - slope * x_mean)


def _within(value: float, pct: float, average: float) -> bool:
    return value <= pct / 100.0 * average * (1 + _AT_BOUND)


def window_meets(window: Sequence[float], range_pct: float, slope_pct: float) -> bool:
    """The PTS test of one full window: a positive average, the range within ``range_pct`` % of it, the
    least-squares line's range across the window within ``slope_pct`` % of it (both bounds inclusive)."""
    fit = fit_window(window)
    if fit.average <= 0:
        return False  # nothing moved (or a negative figure): there is nothing to call steady
    return _within(fit.range_value, range_pct, fit.average) and _within(
        fit.fit_excursion(len(window)), slope_pct, fit.average
    )


@dataclass(frozen=True)
class PtsDecision:
    """Steady state by the PTS rule over rounds 1..N of a tracking variable.

    ``reached``: the window of ``window`` rounds ending at round ``at_round`` (1-based) met both bounds;
    else the figures are those of the last window judged (the last rounds run, at most ``max_rounds``).
    ``why`` says in words why not, when not."""

    reached: bool
    at_round: int | None  # 1-based round closing the steady window (None: not reached)
    first_round: int  # 1-based first round of the window the figures describe (0: no rounds)
    rounds: tuple[float, ...]  # the window's values
    rounds_run: int  # rounds judged (at most max_rounds)
    fit: WindowFit
    window: int = PTS_WINDOW
    range_limit_pct: float = PTS_RANGE_PCT
    slope_limit_pct: float = PTS_SLOPE_PCT
    max_rounds: int | None = PTS_MAX_ROUNDS
    why: str = ""

    @property
    def range_pct(self) -> float:
        return self.fit.range_pct

    @property
    def fit_excursion(self) -> float:
        return self.fit.fit_excursion(len(self.rounds))

    @property
    def fit_excursion_pct(self) -> float:
        return self.fit_excursion / self.fit.average * 100.0 if self.fit.average > 0 else 0.0

    @property
    def range_ok(self) -> bool:
        return self.fit.average > 0 and _within(self.fit.range_value, self.range_limit_pct, self.fit.average)

    @property
    def slope_ok(self) -> bool:
        return self.fit.average > 0 and _within(self.fit_excursion, self.slope_limit_pct, self.fit.average)

    def sentence(self) -> str:
        if self.reached:
            return (
                f"Steady state reached at round {self.at_round} (window rounds {self.first_round}-{self.at_round}): "
                f"average {figure(self.fit.average)}, range {self.range_pct:.1f} % (<= {self.range_limit_pct:g} %), "
                f"fit excursion {self.fit_excursion_pct:.1f} % (<= {self.slope_limit_pct:g} %)"
            )
        return f"Steady state not reached: {self.why}"


def figure(v: float) -> str:
    """A tracking figure in words: whole numbers from 100 (12,345), else three significant digits (0.283)."""
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def pts_steady_state(
    rounds: Sequence[float],
    *,
    window: int = PTS_WINDOW,
    range_pct: float = PTS_RANGE_PCT,
    slope_pct: float = PTS_SLOPE_PCT,
    max_rounds: int | None = PTS_MAX_ROUNDS,
) -> PtsDecision:
    """The PTS steady-state rule over a tracking variable's rounds, in order (round 1 first): the first
    window of ``window`` consecutive rounds, among the first ``max_rounds`` (None: all), whose range is
    within ``range_pct`` % of its average and whose least-squares line moves within ``slope_pct`` % of the
    average across it. Not reached: the figures of the last window (the last ``window`` rounds judged)."""
    judged = list(rounds if max_rounds is None else rounds[:max_rounds])
    for end in range(window, len(judged) + 1):
        part = judged[end - window : end]
        if window_meets(part, range_pct, slope_pct):
            return PtsDecision(
                True,
                end,
                end - window + 1,
                tuple(part),
                len(judged),
                fit_window(part),
                window,
                range_pct,
                slope_pct,
                max_rounds,
            )
    last = judged[-window:] if judged else []
    first = len(judged) - len(last) + 1 if last else 0
    decision = PtsDecision(
        False,
        None,
        first,
        tuple(last),
        len(judged),
        fit_window(last),
        window,
        range_pct,
        slope_pct,
        max_rounds,
    )
    return replace(decision, why=_why_not(decision))


def _why_not(d: PtsDecision) -> str:
    if d.rounds_run < d.window:
        return f"{d.rounds_run} round(s) run; the measurement window needs {d.window}"
    where = f"rounds {d.first_round}-{d.first_round + len(d.rounds) - 1}"
    if d.fit.average <= 0:
        return f"the average over {where} is {d.fit.average:g}: nothing to judge"
    out_of = []
    if not d.range_ok:
        out_of.append(f"range {d.range_pct:.1f} % > {d.range_limit_pct:g} %")
    if not d.slope_ok:
        out_of.append(f"fit excursion {d.fit_excursion_pct:.1f} % > {d.slope_limit_pct:g} %")
    most = f" (at most {d.max_rounds})" if d.max_rounds is not None else ""
    return f"no window met the rule in {d.rounds_run} rounds{most}; last window {where}: " + ", ".join(
        out_of or ["within the bounds only after the last round judged"]
    )


def first_steady_window(rounds: Sequence[float], pc: Precondition) -> Window | None:
    """The first steady window by the PTS rule (``pts_steady_state``) with the precondition's window and
    bounds, and no limit on rounds (the step's time limits them)."""
    d = pts_steady_state(
        rounds, window=pc.window_rounds, range_pct=pc.tolerance_pct, slope_pct=pc.slope_pct, max_rounds=None
    )
    if not d.reached or d.at_round is None:
        return None
    return Window(d.first_round - 1, d.at_round - 1, d.fit.average, d.range_pct, d.fit_excursion_pct)


class SteadyWatch:
    """Fed the ALL samples of a precondition step as they arrive; says when the rule is met."""

    def __init__(self, pc: Precondition):
        self.pc = pc
        self._samples: list[tuple[float, int, float]] = []

    def add(self, t: float, ios: int, seconds: float) -> bool:
        self._samples.append((t, ios, seconds))
        return first_steady_window(rounds_of(self._samples, self.pc.round_s), self.pc) is not None
