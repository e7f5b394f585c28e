"""The load search of `fiometer curve` against every knee of model curves: at most 8 measured steps, the answer
one grid position from (here: equal to) the exhaustive sweep's, and exactly one confirming step."""

from __future__ import annotations

import pytest

from app.engine.run.curve_search import SEARCH_BUDGET, GridSweep, KneeSearch, exhaustive_knee, load_grid


def test_grid_is_every_load_to_8_then_four_per_doubling():
    assert load_grid(64) == [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64]
    assert load_grid(12) == [1, 2, 3, 4, 5, 6, 7, 8, 10, 12]
    assert load_grid(13)[-1] == 13  # the highest allowed load is always tried
    assert load_grid(1) == [1]


def search(grid, p99, limit, start) -> KneeSearch:
    s = KneeSearch(grid, limit, start=start)
    while (load := s.next_load()) is not None:
        s.record(load, p99(load), 1000.0 * load, 4.0 * load)
    return s


@pytest.mark.parametrize("top", [12, 64, 256])
@pytest.mark.parametrize("start", [1, 4, 8, 32])
def test_every_knee_of_a_rising_curve_is_found_in_at_most_8_steps(top, start):
    grid = load_grid(top)
    for knee in range(0, top + 2):

        def p99(load, knee=knee):  # rises with the load; the limit is crossed just past ``knee``
            return 5.0 * load / (knee + 0.5) if knee else 50.0

        s = search(grid, p99, 5.0, start)
        exact = exhaustive_knee([(g, p99(g)) for g in grid], 5.0)
        assert s.steps_measured <= SEARCH_BUDGET
        got = s.answer.load if s.answer else None
        assert got == exact, (knee, start, got, exact)
        assert (s.confirmation is not None) == (got is not None)  # confirmed once when there is an answer
        if got is not None:
            assert s.confirmation.load == got


def test_a_noisy_point_past_a_failure_does_not_reverse_the_bracket():
    grid = load_grid(64)
    # fails at 16 but (noise) passes at 20; the search must still end with a consistent bracket
    values = {g: (1.0 if g < 16 or g == 20 else 9.0) for g in grid}
    s = search(grid, values.get, 5.0, 8)
    lo, hi = s.bracket
    assert s.steps_measured <= SEARCH_BUDGET and lo is not None and (hi is None or lo < hi)


def test_no_load_keeps_the_limit():
    s = search(load_grid(32), lambda _load: 99.0, 5.0, 4)
    assert s.answer is None and s.confirmation is None and s.bracket == (None, 1)
    assert s.steps_measured <= 3  # 4, then 1: nothing lower


def test_grid_sweep_measures_every_load_and_reports_the_first_crossing():
    grid = load_grid(16)
    s = GridSweep(grid, 5.0)
    while (load := s.next_load()) is not None:
        s.record(load, {12: 9.0, 14: 4.0}.get(load, 1.0 if load < 12 else 8.0), 0, 0)
    assert [p.load for p in s.probes] == grid
    assert s.answer.load == 10 and s.bracket == (10, 12) and s.confirmation is None
