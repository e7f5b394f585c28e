"""Preconditioning: the steps it adds, their job text, and the steady-state rule."""

import pytest

from app.engine.jobs.jobfile import step_jobfile
from app.engine.jobs.sequence import FILL, MEASURE, STEADY, expand
from app.model.examples import example
from app.model.plan import Precondition, Target
from app.model.steady_state import SteadyWatch, first_steady_window, rounds_of
from tests.helpers import grid

RULE = Precondition(steady_state=True, round_s=10, window_rounds=5, tolerance_pct=20, slope_pct=10)


def test_rounds_are_mean_iops_of_complete_rounds():
    samples = [(t, 100 * t, 1.0) for t in range(1, 26)]  # 100 t I/Os in the second ending at t
    assert rounds_of(samples, 10) == [550.0, 1550.0]  # 5..25 s: the third round is not complete
    assert rounds_of(samples + [(25.5, 0, 0.0)], 10) == [550.0, 1550.0]  # fio's repeated final report


def test_steady_window_needs_both_flat_rounds_and_a_flat_slope():
    climbing = [100, 104, 108, 112, 116]  # every round within 8 % of the mean, but the line rises 15 %
    assert first_steady_window(climbing, RULE) is None
    noisy = [100, 130, 80, 125, 90]  # flat line, a round 30 % off the mean
    assert first_steady_window(noisy, RULE) is None
    settling = [50, 300, 100, 104, 99, 101, 103, 98]
    w = first_steady_window(settling, RULE)
    assert (w.first, w.last) == (2, 6) and w.mean_iops == pytest.approx(101.4)
    assert w.excursion_pct <= 20 and w.slope_pct <= 10


def test_the_watch_says_steady_once_the_window_is_complete():
    watch = SteadyWatch(Precondition(steady_state=True, round_s=1, window_rounds=3))
    assert [watch.add(t, n, 1.0) for t, n in ((1, 10), (2, 1000), (3, 1010), (4, 990))] == [False] * 3 + [
        True
    ]


def test_fill_then_steady_then_the_measured_steps():
    plan = grid(1, 2, 2)
    for w in plan.managers[0].workers:  # both workers share their targets: each is filled once
        w.targets = [Target("/t/a"), Target("/t/b")]
    plan.setup.precondition = Precondition(fill_passes=2, steady_state=True)
    steps = expand(plan)
    assert [s.phase for s in steps] == [FILL, STEADY, MEASURE]
    assert [(a.worker, a.targets) for a in steps[0].workers] == [(0, [0, 1])]
    assert steps[1].workers == steps[2].workers and [s.index for s in steps] == [0, 1, 2]
    fill = step_jobfile(plan, steps[0], 0, "Linux").text
    assert "loops=2" in fill and "rw=write" in fill and "bs=128k" in fill and "time_based" not in fill
    steady = step_jobfile(plan, steps[1], 0, "Linux").text
    assert f"runtime={plan.setup.precondition.max_s}" in steady and "time_based=1" in steady


def test_flash_example_is_preconditioned():
    steps = expand(example("flash"))
    assert [s.phase for s in steps[:3]] == [FILL, STEADY, MEASURE]
    assert steps[1].spec_label == "1M random write"
