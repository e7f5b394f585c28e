"""The PTS steady-state rule (app.model.steady_state.pts_steady_state) against hand computations.

Each expected figure below was worked out by hand: average, range (highest less lowest), and the
least-squares slope b = sum((x - 2) * (y - avg)) / 10 over x = 0..4, whose line moves |b| * 4 across a
window of 5 rounds."""

from __future__ import annotations

import pytest

from app.model.plan import Precondition
from app.model.steady_state import first_steady_window, fit_window, pts_steady_state


def test_a_settled_window_is_steady_at_round_5_with_its_figures():
    # avg 100; range 105 - 95 = 10 -> 10 %; b = (-2*0 - 1*5 + 0 + 1*4 + 2*-4) / 10 = -0.9 -> 3.6 -> 3.6 %
    d = pts_steady_state([100, 105, 95, 104, 96])
    assert d.reached and d.at_round == 5 and d.first_round == 1 and d.rounds_run == 5
    assert d.fit.average == pytest.approx(100)
    assert d.range_pct == pytest.approx(10)
    assert d.fit.slope == pytest.approx(-0.9)
    assert d.fit_excursion == pytest.approx(3.6) and d.fit_excursion_pct == pytest.approx(3.6)
    assert d.fit.fit_at(0) == pytest.approx(101.8) and d.fit.fit_at(4) == pytest.approx(98.2)
    assert "reached at round 5" in d.sentence()


def test_a_climbing_variable_settles_at_round_9():
    # windows ending at 5..8 range 50 %, 50 %, 34.1 %, 21.3 %; rounds 5-9 = 90,100,100,100,100: avg 98,
    # range 10 -> 10.2 %; b = (-2*-8 - 1*2 + 0 + 1*2 + 2*2) / 10 = 2 -> 8 -> 8.16 %
    d = pts_steady_state([50, 60, 70, 80, 90, 100, 100, 100, 100, 100])
    assert d.reached and d.at_round == 9 and d.first_round == 5
    assert d.rounds == (90, 100, 100, 100, 100)
    assert d.range_pct == pytest.approx(10 / 98 * 100)
    assert d.fit_excursion_pct == pytest.approx(8 / 98 * 100)


def test_not_reached_in_25_rounds_reports_the_last_window():
    # 26 rounds swinging 100/130: only 25 are judged; the last window (21-25) 100,130,100,130,100:
    # avg 112, range 30 -> 26.8 %
    d = pts_steady_state([100, 130] * 13)
    assert not d.reached and d.at_round is None and d.rounds_run == 25
    assert d.first_round == 21 and d.rounds == (100, 130, 100, 130, 100)
    assert d.range_pct == pytest.approx(30 / 112 * 100) and not d.range_ok
    assert "no window met the rule in 25 rounds (at most 25)" in d.why and "range 26.8 % > 20 %" in d.why


def test_a_window_closing_after_round_25_does_not_count():
    rounds = [50, 150] * 10 + [50] + [100] * 5  # rounds 22-26 are steady, round 21 is not
    assert not pts_steady_state(rounds).reached
    late = pts_steady_state(rounds, max_rounds=None)
    assert late.reached and late.at_round == 26 and late.first_round == 22
    assert pts_steady_state(rounds, max_rounds=26).at_round == 26


def test_the_range_bound_is_inclusive():
    # avg 100, range 20 -> exactly 20 %; b = (-2*-10 - 1*10) / 10 = 1 -> 4 %
    at = pts_steady_state([90, 110, 100, 100, 100])
    assert at.reached and at.range_pct == pytest.approx(20) and at.fit_excursion_pct == pytest.approx(4)
    # range 20.1 over avg 99.98 -> 20.1 %: out
    over = pts_steady_state([89.9, 110, 100, 100, 100])
    assert not over.reached and not over.range_ok and over.slope_ok
    assert over.range_pct == pytest.approx(20.1 / 99.98 * 100)


def test_the_slope_bound_is_inclusive():
    # a straight line 95..105: avg 100, range 10 %, b = 2.5 -> the line moves 10 -> exactly 10 %
    at = pts_steady_state([95, 97.5, 100, 102.5, 105])
    assert at.reached and at.fit.slope == pytest.approx(2.5) and at.fit_excursion_pct == pytest.approx(10)
    # b = 2.55 -> 10.2 %: out on the slope alone (range 10.2 % is within 20 %)
    over = pts_steady_state([94.9, 97.45, 100, 102.55, 105.1])
    assert not over.reached and over.range_ok and not over.slope_ok
    assert over.fit_excursion_pct == pytest.approx(10.2)
    assert "fit excursion 10.2 % > 10 %" in over.why and "range" not in over.why.split(":")[-1]


def test_a_zero_average_is_never_steady():
    d = pts_steady_state([0, 0, 0, 0, 0, 0])
    assert not d.reached and d.fit.average == 0 and d.range_pct == 0 and d.fit_excursion_pct == 0
    assert "average over rounds 2-6 is 0: nothing to judge" in d.why
    assert pts_steady_state([0, 0, 0, 0, 0, 100, 100, 100, 100, 100]).at_round == 10  # rounds 6-10


def test_fewer_than_5_rounds_is_not_reached_and_says_so():
    d = pts_steady_state([100, 100, 100, 100])
    assert not d.reached and d.rounds_run == 4 and d.first_round == 1 and len(d.rounds) == 4
    assert d.why == "4 round(s) run; the measurement window needs 5"
    empty = pts_steady_state([])
    assert not empty.reached and empty.first_round == 0 and empty.rounds == () and empty.fit.average == 0
    assert fit_window([7]).average == 7 and fit_window([7]).slope == 0


def test_the_precondition_rule_is_the_same_rule():
    pc = Precondition(round_s=1, window_rounds=5, tolerance_pct=20, slope_pct=10)
    for rounds in (
        [90, 110, 100, 100, 100],
        [95, 97.5, 100, 102.5, 105],
        [50, 60, 70, 80, 90, 100, 100, 100, 100, 100],
    ):
        w = first_steady_window(rounds, pc)
        d = pts_steady_state(rounds, max_rounds=None)
        assert w is not None and (w.first + 1, w.last + 1) == (d.first_round, d.at_round)
    for rounds in ([89.9, 110, 100, 100, 100], [94.9, 97.45, 100, 102.55, 105.1], [0] * 5):
        assert first_steady_window(rounds, pc) is None and not pts_steady_state(rounds).reached
