"""Comparison: matching, direction-aware verdicts, noise thresholds, and what differs between runs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.analysis.compare import METRIC_BY_KEY, build_side, compare, judge
from app.analysis.run_groups import load_side
from app.store.database import open_store
from app.store.queries import get_run
from tests.stored_runs import AFTER, BEFORE, RunSpec, StepSpec, record


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "h.db") as s:
        yield s


def side(store, *specs: RunSpec, repeats=True):
    ids = [record(store, s) for s in specs]
    return load_side(store, ids, repeats=repeats)


def test_eva_example_rows_changes_and_verdicts(store):
    c = compare(side(store, RunSpec(BEFORE, tags=["before"])), side(store, RunSpec(AFTER, tags=["after"])))
    assert [r.spec for r in c.rows] == [s.spec for s in BEFORE]
    assert c.only_baseline == [] and c.only_candidate == []
    first = c.rows[0].changes
    assert (first["iops"].baseline, first["iops"].candidate) == (10809, 11686)
    assert first["iops"].change == pytest.approx(877)
    assert first["iops"].change_pct == pytest.approx(877 / 10809 * 100)
    assert first["iops"].verdict == "better"
    assert first["lat_mean_ms"].change == pytest.approx(2.42) and first["lat_mean_ms"].verdict == "worse"
    assert first["lat_max_ms"].verdict == "same"  # 40 -> 41 ms is 2.5 %, within the default 5 %
    assert first["p99_ms"].baseline == pytest.approx(6.0) and first["p99_ms"].verdict == "worse"
    third = c.rows[2].changes  # Max Throughput-50%Read: everything better
    assert {k: ch.verdict for k, ch in third.items()} == dict.fromkeys(third, "better")
    assert all(ch.threshold_pct == 5.0 and not ch.from_repeats for r in c.rows for ch in r.changes.values())
    assert c.differences == []


def test_threshold_decides_what_is_marked(store):
    base = side(store, RunSpec([StepSpec("S", 1000, 10, 1.0, 5, 2)]))
    cand = side(store, RunSpec([StepSpec("S", 1030, 9.2, 1.0, 5, 2)]))
    default = compare(base, cand).rows[0].changes
    assert default["iops"].verdict == "same" and default["mbps"].verdict == "worse"
    tight = compare(base, cand, threshold_pct=2).rows[0].changes
    assert tight["iops"].verdict == "better"


def test_unmatched_steps_are_listed_and_spec_matching_pairs_them(store):
    base = side(store, RunSpec(BEFORE))
    cand_steps = [BEFORE[0], replace(BEFORE[1], qd=32), BEFORE[2], StepSpec("Extra-4k", 1, 1, 1, 1, 1)]
    cand = side(store, RunSpec(cand_steps))
    c = compare(base, cand)
    assert [r.spec for r in c.rows] == ["Max Throughput-100%Read", "Max Throughput-50%Read"]
    assert [(s.key.spec, s.key.queue_depth) for s in c.only_baseline] == [
        ("RealLife-60%Rand-65%Read", 64), ("Random-8k-70%Read", 64)]
    assert [(s.key.spec, s.key.queue_depth) for s in c.only_candidate] == [
        ("RealLife-60%Rand-65%Read", 32), ("Extra-4k", 64)]
    loose = compare(base, cand, match="spec")
    assert [r.spec for r in loose.rows] == [s.spec for s in BEFORE[:3]]
    assert loose.rows[1].differs == ["QD 64 -> 32"] and loose.rows[0].differs == []
    assert [s.key.spec for s in loose.only_baseline] == ["Random-8k-70%Read"]
    assert [s.key.spec for s in loose.only_candidate] == ["Extra-4k"]


def test_workers_and_targets_are_part_of_the_match(store):
    base = side(store, RunSpec([StepSpec("S", 1000, 10, 1, 5, 2, workers=1, targets=1)]))
    cand = side(store, RunSpec([StepSpec("S", 1000, 10, 1, 5, 2, workers=2, targets=2)]))
    c = compare(base, cand)
    assert c.rows == [] and len(c.only_baseline) == len(c.only_candidate) == 1


def test_a_group_is_compared_by_its_mean_with_its_spread_as_noise(store):
    runs = [RunSpec([StepSpec("S", iops, 10, 1.0, 5, 2)]) for iops in (900, 1000, 1100)]  # CV 10 %
    base = side(store, *runs)
    assert base.label == "Mean of runs 1, 2, 3" and len(base.repeats) == 3
    step = base.steps[0]
    assert step.values["iops"] == pytest.approx(1000) and step.cv["iops"] == pytest.approx(0.1)
    assert step.cv["mbps"] == pytest.approx(0.0)
    within = compare(base, side(store, RunSpec([StepSpec("S", 1150, 10, 1.0, 5, 2)]))).rows[0].changes["iops"]
    assert within.from_repeats and within.threshold_pct == pytest.approx(20) and within.verdict == "same"
    beyond = compare(base, side(store, RunSpec([StepSpec("S", 1250, 10, 1.0, 5, 2)]))).rows[0].changes["iops"]
    assert beyond.verdict == "better"
    # repeats that agree exactly (MB/s here) do not make a tiny change real: the noise floor applies
    tiny = compare(base, side(store, RunSpec([StepSpec("S", 1000, 10.08, 1.0, 5, 2)]))).rows[0].changes["mbps"]
    assert tiny.threshold_pct == pytest.approx(1.0) and tiny.verdict == "same"


def test_repeats_are_found_by_plan_hash_and_identical_tags(store):
    for iops in (980, 1020, 1000):
        record(store, RunSpec([StepSpec("S", iops, 10, 1, 5, 2)], tags=["before", "client"]))
    record(store, RunSpec([StepSpec("S", 500, 10, 1, 5, 2)], tags=["before"]))  # other tags
    record(store, RunSpec([StepSpec("S", 400, 10, 1, 5, 2)], tags=["before", "client"], plan_variant=8))  # other plan
    s = load_side(store, [3])
    assert [r.id for r in s.repeats] == [3, 2, 1]
    assert s.steps[0].values["iops"] == 1000  # the run's own value, not the mean
    assert s.steps[0].cv["iops"] == pytest.approx(0.02)
    assert load_side(store, [3], repeats=False).repeats == []
    assert load_side(store, [3], exclude={1, 2}).repeats == []
    untagged = [record(store, RunSpec([StepSpec("S", 1, 1, 1, 1, 1)])) for _ in range(2)]
    assert load_side(store, [untagged[1]]).repeats == []


def test_differences_in_fio_version_host_and_targets_are_flagged(store):
    base = side(store, RunSpec(BEFORE))
    cand = side(store, RunSpec(AFTER, fio_version="3.35", hostname="lab2", target_path="/mnt/new/iobw.tst"))
    diffs = compare(base, cand).differences
    assert diffs == ["Measured with: baseline fio 3.33; candidate fio 3.35",
                     "Hosts: baseline lab1; candidate lab2",
                     "Targets: baseline /mnt/data/iobw.tst; candidate /mnt/new/iobw.tst"]


def test_steps_without_results_are_reported_not_compared(store):
    run_id = record(store, RunSpec(BEFORE[:2]))
    with store.write("failing a step") as conn:
        conn.execute("DELETE FROM results WHERE series_id IN (SELECT series.id FROM series JOIN steps ON "
                     "steps.id = series.step_id WHERE steps.idx = 1 AND steps.run_id = ?)", (run_id,))
    s = build_side([get_run(store, run_id)])
    assert [x.key.spec for x in s.steps] == ["Max Throughput-100%Read"]
    assert s.missing == ["run 1 step 2 (RealLife-60%Rand-65%Read) has no results (complete)"]


@pytest.mark.parametrize(("metric", "base", "cand", "verdict"), [
    ("iops", 100, 106, "better"), ("iops", 100, 94, "worse"), ("iops", 100, 105, "same"),
    ("lat_mean_ms", 2.0, 1.8, "better"), ("lat_mean_ms", 2.0, 2.2, "worse"), ("lat_max_ms", 0.0, 0.0, "same"),
    ("iops", 0.0, 10.0, "better"), ("p99_ms", None, 1.0, "n/a"),
])
def test_judge_is_direction_aware(metric, base, cand, verdict):
    assert judge(METRIC_BY_KEY[metric], base, cand, 5.0).verdict == verdict


def test_iometer_runs_have_no_p99(store, tmp_path):
    from app.analysis.iometer_import import import_results_file
    from tests.helpers import shared_dir

    imported = import_results_file(store, shared_dir() / "iometer-results" / "bench_results-1.1.0.csv")
    c = compare(load_side(store, [imported[0].run_id]), load_side(store, [imported[1].run_id]))
    (row,) = c.rows
    assert row.changes["p99_ms"].verdict == "n/a" and row.changes["iops"].baseline == pytest.approx(50551.951992)
    # 4 series share the description "4K Random Read" (so the plan) and the automatic tag: not repeats
    assert not row.changes["iops"].from_repeats and c.baseline.repeats == []
    from app.store.queries import tag_run

    for r in imported[:3]:
        tag_run(store, r.run_id, add=["baseline-week"])
    assert [r.id for r in load_side(store, [imported[0].run_id]).repeats] == [1, 3, 2]
