"""Test-type expansion against Iometer's own worked examples (docs/reference/iometer.md, "The test series")."""

import pytest

from app.engine.jobs.sequence import cycle_values, expand
from app.model.plan import TEST_TYPES, Cycling, QueueDepthCycling
from tests.helpers import grid


def shape(steps):
    return [[(a.manager, a.worker, len(a.targets)) for a in s.workers] for s in steps]


def take(it, n):
    return [v for _, v in zip(range(n), it, strict=False)]


def test_step_rule_linear_and_exponential():
    assert list(cycle_values(1, 2, "EXPONENTIAL", 32)) == [1, 2, 4, 8, 16, 32]
    assert list(cycle_values(1, 2, "LINEAR", 32)) == list(range(1, 32, 2))
    assert list(cycle_values(8, 2, "EXPONENTIAL", 128)) == [8, 16, 32, 64, 128]
    assert take(cycle_values(3, 1, "EXPONENTIAL"), 3) == [3, 4, 5]  # step 1 counts as linear


def test_normal_runs_every_target_once_per_spec_position():
    plan = grid(2, 2, 2, specs=("A", "B"), qd=8)
    steps = expand(plan)
    assert [s.spec_label for s in steps] == ["A", "B"]
    assert all(s.target_count == 8 and s.queue_depths == [8] for s in steps)


def test_increment_targets_parallel_user_guide_example():
    plan = grid(2, 2, 2)
    plan.setup.test_type = "INCREMENT_TARGETS_PARALLEL"
    steps = expand(plan)
    assert len(steps) == 4
    # per manager 1, 2, 3, 4 targets, worker 1 filling first
    assert shape(steps)[0] == [(0, 0, 1), (1, 0, 1)]
    assert shape(steps)[2] == [(0, 0, 2), (0, 1, 1), (1, 0, 2), (1, 1, 1)]
    assert [s.target_count for s in steps] == [2, 4, 6, 8]


def test_increment_targets_serial_user_guide_example():
    plan = grid(2, 2, 2)
    plan.setup.test_type = "INCREMENT_TARGETS_SERIAL"
    steps = expand(plan)
    assert [s.target_count for s in steps] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert shape(steps)[4] == [(0, 0, 2), (0, 1, 2), (1, 0, 1)]  # manager 1 fills first


def test_cycle_workers_and_targets_user_guide_example():
    plan = grid(1, 3, 2)
    plan.setup.test_type = "CYCLE_WORKERS_AND_TARGETS"
    assert shape(expand(plan)) == [
        [(0, 0, 1)],
        [(0, 0, 2)],
        [(0, 0, 1), (0, 1, 1)],
        [(0, 0, 2), (0, 1, 2)],
        [(0, 0, 1), (0, 1, 1), (0, 2, 1)],
        [(0, 0, 2), (0, 1, 2), (0, 2, 2)],
    ]


def test_cycle_targets_stops_when_every_worker_is_saturated():
    plan = grid(1, 2, 3)
    plan.managers[0].workers[1].targets.pop()  # worker 2 has 2 targets
    plan.setup.test_type = "CYCLE_TARGETS"
    plan.setup.target_cycling = Cycling(1, 2, "EXPONENTIAL")
    assert [s.target_count for s in expand(plan)] == [2, 4, 5]  # T = 1, 2, 4 (saturated at 3+2)


def test_cycle_workers_per_manager():
    plan = grid(2, 3, 1)
    plan.setup.test_type = "CYCLE_WORKERS"
    plan.setup.worker_cycling = Cycling(1, 2, "LINEAR")
    assert [len(s.workers) for s in expand(plan)] == [2, 6]  # W = 1, 3 in each manager


def test_cycle_outstanding_ios():
    plan = grid(1, 1, 2, qd=5)
    plan.setup.test_type = "CYCLE_OUTSTANDING_IOS"
    plan.setup.queue_depth_cycling = QueueDepthCycling(1, 32, 2, "EXPONENTIAL")
    steps = expand(plan)
    assert [s.queue_depths for s in steps] == [[1], [2], [4], [8], [16], [32]]
    assert all(s.target_count == 2 for s in steps)


def test_cycle_outstanding_ios_and_targets_user_guide_example():
    plan = grid(1, 1, 2)
    plan.setup.test_type = "CYCLE_OUTSTANDING_IOS_AND_TARGETS"
    plan.setup.queue_depth_cycling = QueueDepthCycling(1, 3, 1, "LINEAR")
    steps = expand(plan)
    assert [(s.target_count, s.queue_depths[0]) for s in steps] == [
        (1, 1),
        (1, 2),
        (1, 3),
        (2, 1),
        (2, 2),
        (2, 3),
    ]


def test_shorter_spec_lists_and_idle_sit_out():
    plan = grid(1, 2, 1, specs=("A",))
    plan.specs.append(plan.specs[0].__class__("B"))
    plan.managers[0].workers[0].specs = ["A", "B"]
    plan.managers[0].workers[1].specs = ["Idle"]
    steps = expand(plan)
    assert shape(steps) == [[(0, 0, 1)], [(0, 0, 1)]]
    assert [s.spec_label for s in steps] == ["A", "B"]


def test_workers_without_targets_or_vi_network_workers_are_not_eligible():
    plan = grid(1, 4, 1)
    plan.managers[0].workers[1].targets = []
    plan.managers[0].workers[2].kind = "network_vi"
    plan.managers[0].workers[3].kind = "network_tcp"  # runs on fio's TCP engine, at depth 1
    assert shape(expand(plan)) == [[(0, 0, 1), (0, 3, 1)]]


def test_a_hostile_plan_cannot_expand_without_bound():
    import pytest

    from app.engine.jobs.sequence import SequenceTooLong

    plan = grid(1, 1, 1, specs=tuple(f"S{i}" for i in range(20)))
    plan.setup.test_type = "CYCLE_OUTSTANDING_IOS"
    plan.setup.queue_depth_cycling = QueueDepthCycling(1, 65535, 1, "LINEAR")  # 20 x 65535 steps
    with pytest.raises(SequenceTooLong, match="more than 10000 test steps"):
        expand(plan)


def test_every_test_type_the_model_accepts_expands_and_an_unknown_one_is_refused():
    for test_type in TEST_TYPES:
        plan = grid(2, 2, 2, qd=4)
        plan.setup.test_type = test_type
        assert expand(plan), test_type  # each type has its steps (none falls through to "unknown")
    plan = grid(1, 1, 1)
    plan.setup.test_type = "CYCLE_EVERYTHING"
    with pytest.raises(ValueError, match="unknown test type 'CYCLE_EVERYTHING'"):
        expand(plan)
