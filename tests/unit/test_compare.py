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
    assert c.differences == ["Tags: baseline before; candidate after"]
    assert c.what_changed == ["tags before \u2192 after"]


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
    c = compare(base, cand, match="exact")
    assert [r.spec for r in c.rows] == ["Max Throughput-100%Read", "Max Throughput-50%Read"]
    assert [(s.key.spec, s.key.queue_depth) for s in c.only_baseline] == [
        ("RealLife-60%Rand-65%Read", 64),
        ("Random-8k-70%Read", 64),
    ]
    assert [(s.key.spec, s.key.queue_depth) for s in c.only_candidate] == [
        ("RealLife-60%Rand-65%Read", 32),
        ("Extra-4k", 64),
    ]
    loose = compare(base, cand, match="spec")
    assert [r.spec for r in loose.rows] == [s.spec for s in BEFORE[:3]]
    assert loose.rows[1].differs == ["QD 64 -> 32"] and loose.rows[0].differs == []
    assert [s.key.spec for s in loose.only_baseline] == ["Random-8k-70%Read"]
    assert [s.key.spec for s in loose.only_candidate] == ["Extra-4k"]


def test_workers_and_targets_are_part_of_the_match(store):
    base = side(store, RunSpec([StepSpec("S", 1000, 10, 1, 5, 2, workers=1, targets=1)]))
    cand = side(store, RunSpec([StepSpec("S", 1000, 10, 1, 5, 2, workers=2, targets=2)]))
    c = compare(base, cand, match="exact")
    assert c.rows == [] and len(c.only_baseline) == len(c.only_candidate) == 1
    auto = compare(base, cand)  # the default pairs them, and says what changed
    assert len(auto.rows) == 1 and auto.what_changed == ["workers 1 \u2192 2", "targets 1 \u2192 2"]
    assert auto.rows[0].load == "QD 64, workers 1 \u2192 2, targets 1 \u2192 2"


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
    tiny = (
        compare(base, side(store, RunSpec([StepSpec("S", 1000, 10.08, 1.0, 5, 2)]))).rows[0].changes["mbps"]
    )
    assert tiny.threshold_pct == pytest.approx(1.0) and tiny.verdict == "same"


def test_repeats_are_found_by_plan_hash_and_identical_tags(store):
    for iops in (980, 1020, 1000):
        record(store, RunSpec([StepSpec("S", iops, 10, 1, 5, 2)], tags=["before", "client"]))
    record(store, RunSpec([StepSpec("S", 500, 10, 1, 5, 2)], tags=["before"]))  # other tags
    record(
        store, RunSpec([StepSpec("S", 400, 10, 1, 5, 2)], tags=["before", "client"], plan_variant=8)
    )  # other plan
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
    assert diffs == [
        "Measured with: baseline fio 3.33; candidate fio 3.35",
        "Hosts: baseline lab1; candidate lab2",
        "Targets: baseline /mnt/data/iobw.tst; candidate /mnt/new/iobw.tst",
    ]


def test_steps_without_results_are_reported_not_compared(store):
    run_id = record(store, RunSpec(BEFORE[:2]))
    with store.write("failing a step") as conn:
        conn.execute(
            "DELETE FROM results WHERE series_id IN (SELECT series.id FROM series JOIN steps ON "
            "steps.id = series.step_id WHERE steps.idx = 1 AND steps.run_id = ?)",
            (run_id,),
        )
    s = build_side([get_run(store, run_id)])
    assert [x.key.spec for x in s.steps] == ["Max Throughput-100%Read"]
    assert s.missing == ["run 1 step 2 (RealLife-60%Rand-65%Read) has no results (complete)"]


@pytest.mark.parametrize(
    ("metric", "base", "cand", "verdict"),
    [
        ("iops", 100, 106, "better"),
        ("iops", 100, 94, "worse"),
        ("iops", 100, 105, "same"),
        ("lat_mean_ms", 2.0, 1.8, "better"),
        ("lat_mean_ms", 2.0, 2.2, "worse"),
        ("lat_max_ms", 0.0, 0.0, "same"),
        ("iops", 0.0, 10.0, "better"),
        ("p99_ms", None, 1.0, "n/a"),
    ],
)
def test_judge_is_direction_aware(metric, base, cand, verdict):
    assert judge(METRIC_BY_KEY[metric], base, cand, 5.0).verdict == verdict


def test_iometer_runs_have_no_p99(store, tmp_path):
    from app.analysis.iometer_import import import_results_file
    from tests.helpers import shared_dir

    imported = import_results_file(store, shared_dir() / "iometer-results" / "bench_results-1.1.0.csv")
    c = compare(load_side(store, [imported[0].run_id]), load_side(store, [imported[1].run_id]))
    (row,) = c.rows
    assert row.changes["p99_ms"].verdict == "n/a" and row.changes["iops"].baseline == pytest.approx(
        50551.951992
    )
    # 4 series share the description "4K Random Read" (so the plan) and the automatic tag: not repeats
    assert not row.changes["iops"].from_repeats and c.baseline.repeats == []
    from app.store.queries import tag_run

    for r in imported[:3]:
        tag_run(store, r.run_id, add=["baseline-week"])
    # series of one results file are separate runs, never repeats of each other, whatever their tags
    assert load_side(store, [imported[0].run_id]).repeats == []
    # the same file imported again is the same file
    again = import_results_file(
        store, shared_dir() / "iometer-results" / "bench_results-1.1.0.csv", tags=["iometer", "baseline-week"]
    )
    assert load_side(store, [again[0].run_id]).repeats == []
    # what the user groups is a group
    grouped = load_side(store, [r.run_id for r in imported[:3]])
    assert [r.id for r in grouped.repeats] == [1, 2, 3] and grouped.steps[0].cv["iops"] is not None


def test_repeats_of_an_imported_run_come_from_another_file(store, tmp_path):
    from app.analysis.iometer_import import import_results_file
    from tests.helpers import shared_dir

    source = shared_dir() / "iometer-results" / "bench_results-1.1.0.csv"
    first = import_results_file(store, source, tags=["iometer", "lab"])
    copy = tmp_path / "next-week.csv"
    copy.write_bytes(source.read_bytes().replace(b"2026-03-14", b"2026-03-21"))  # another file, same tests
    second = import_results_file(store, copy, tags=["iometer", "lab"])
    found = load_side(store, [first[0].run_id]).repeats
    assert [r.id for r in found][0] == first[0].run_id
    assert {r.host["imported_from"] for r in found[1:]} == {"next-week.csv"}
    assert second[0].run_id in [r.id for r in found]


def test_same_name_different_definition_never_pairs(store):
    base = side(store, RunSpec([StepSpec("S", 1000, 10, 1, 5, 2, lines="4096,100,100,100,0,1,0,0")]))
    cand = side(store, RunSpec([StepSpec("S", 400, 25, 1, 5, 2, lines="65536,100,100,0,0,1,0,0")]))
    for match in ("exact", "spec"):
        c = compare(base, cand, match=match)
        assert c.rows == [] and len(c.only_baseline) == len(c.only_candidate) == 1
        assert c.why_not_compared(c.only_baseline[0]) == (
            "same name, different definition: 4 KiB, 100% read, 100% random here, "
            "64 KiB, 100% read, 0% random in the candidate"
        )
        assert c.why_not_compared(c.only_candidate[0]).startswith("same name, different definition: 64 KiB")


def test_same_definition_under_another_name_pairs_with_a_note(store):
    lines = "4096,100,100,100,0,1,0,0"
    base = side(store, RunSpec([StepSpec("4k read", 1000, 10, 1, 5, 2, lines=lines)]))
    cand = side(store, RunSpec([StepSpec("Random 4 KiB", 1100, 11, 1, 5, 2, lines=lines)]))
    (row,) = compare(base, cand).rows
    assert row.spec == "4k read" and row.differs == ["named 'Random 4 KiB' in the candidate"]
    assert row.changes["iops"].verdict == "better"


def test_line_order_is_not_part_of_the_definition(store):
    a, b = "4096,60,100,100,0,1,0,0", "65536,40,0,0,0,1,0,0"
    base = side(store, RunSpec([StepSpec("Mix", 1000, 10, 1, 5, 2, lines=f"{a}; {b}")]))
    cand = side(store, RunSpec([StepSpec("Mix", 1000, 10, 1, 5, 2, lines=f"{b}; {a}")]))
    assert len(compare(base, cand).rows) == 1


def test_match_spec_pairs_the_definition_across_loads_not_the_name(store):
    lines = "8192,100,70,100,0,1,0,0"
    base = side(
        store,
        RunSpec(
            [
                StepSpec("S", 1000, 10, 1, 5, 2, qd=64, lines=lines),
                StepSpec("T", 1000, 10, 1, 5, 2, qd=64, lines="512,100,0,0,0,1,0,0"),
            ]
        ),
    )
    cand = side(
        store,
        RunSpec(
            [
                StepSpec("S", 900, 9, 1, 5, 2, qd=16, lines="512,100,0,0,0,1,0,0"),
                StepSpec("T", 900, 9, 1, 5, 2, qd=16, lines=lines),
            ]
        ),
    )
    exact = compare(base, cand, match="exact")
    assert exact.rows == [] and exact.load_differs  # each definition is on both sides, at another QD
    assert exact.why_not_compared(exact.only_baseline[0]) == (
        "same name, different definition: 8 KiB, 70% read, 100% random here, "
        "512 B, 0% read, 0% random in the candidate"
    )
    loose = compare(base, cand, match="spec")
    assert [(r.baseline.key.spec, r.candidate.key.spec) for r in loose.rows] == [("S", "T"), ("T", "S")]
    assert loose.rows[0].differs == ["named 'T' in the candidate", "QD 64 -> 16"]


def test_only_the_load_differs_says_so(store):
    lines = "8192,100,70,100,0,1,0,0"
    base = side(store, RunSpec([StepSpec("S", 1000, 10, 1, 5, 2, qd=64, lines=lines)]))
    cand = side(store, RunSpec([StepSpec("S", 900, 9, 1, 5, 2, qd=16, lines=lines)]))
    c = compare(base, cand, match="exact")
    assert (
        c.why_not_compared(c.only_baseline[0])
        == "the candidate runs this definition only at QD 16, 1 worker, 1 target"
    )
    assert c.load_differs


def test_a_step_stored_without_its_definition_pairs_by_name(store):
    old = side(
        store, RunSpec([StepSpec("S", 1000, 10, 1, 5, 2, lines=" "), StepSpec("T", 1, 1, 1, 1, 1, lines=" ")])
    )
    assert [s.key.definition for s in old.steps] == ["", ""]
    new = side(
        store,
        RunSpec(
            [
                StepSpec("T", 2, 2, 1, 1, 1, lines="512,100,0,0,0,1,0,0"),
                StepSpec("S", 1100, 11, 1, 5, 2, lines="4096,100,100,100,0,1,0,0"),
            ]
        ),
    )
    c = compare(old, new)
    assert [(r.baseline.key.spec, r.candidate.key.spec) for r in c.rows] == [("S", "S"), ("T", "T")]


def test_a_step_run_more_often_on_one_side_says_so(store):
    twice = [StepSpec("S", 1000, 10, 1, 5, 2, lines="4096,100,100,100,0,1,0,0")] * 2
    c = compare(side(store, RunSpec(twice)), side(store, RunSpec(twice[:1])))
    assert (
        len(c.rows) == 1
        and c.why_not_compared(c.only_baseline[0]) == "the candidate runs this step fewer times"
    )


def test_imported_results_pair_4_kib_with_4_kib_only(store):
    from app.analysis.iometer_import import import_results_file
    from app.report.tables import unmatched_table
    from tests.helpers import shared_dir

    runs = import_results_file(store, shared_dir() / "iometer-results" / "bench_results-1.1.0.csv")
    stored = [get_run(store, r.run_id) for r in runs]
    texts = [r.steps[0].spec_text for r in stored]
    assert texts[0] == "4096,100,100,100,0,1,0,0" and texts[4] == "8192,100,70,100,0,1,0,0"
    assert {r.steps[0].spec_name for r in stored} == {"bench-spec"}
    c = compare(load_side(store, [runs[0].run_id]), load_side(store, [runs[4].run_id]))  # 4 KiB vs 8 KiB
    assert c.rows == []
    why = c.why_not_compared(c.only_baseline[0])
    assert why.startswith("same name, different definition: 4 KiB, 100% read, 100% random")
    assert "8 KiB, 70% read, 100% random in the candidate" in why
    table = unmatched_table(c, 1)
    assert table is not None and table.rows[0].cells[-1].text == why
    same = compare(
        load_side(store, [runs[0].run_id]), load_side(store, [runs[2].run_id])
    )  # both 4 KiB random
    assert len(same.rows) == 1


def test_a_queue_depth_change_pairs_by_default_and_leads_what_changed(store):
    base = side(store, RunSpec(BEFORE, tags=["qd64"]))
    cand = side(store, RunSpec([replace(s, qd=8) for s in AFTER], tags=["qd8"]))
    c = compare(base, cand)
    assert (
        [r.spec for r in c.rows] == [s.spec for s in BEFORE] and not c.only_baseline and not c.only_candidate
    )
    assert c.what_changed[0] == "queue depth 64 \u2192 8"
    assert [r.load for r in c.rows] == ["QD 64 \u2192 8"] * 4


def test_auto_pairs_equal_loads_first_then_by_place_in_the_sequence(store):
    lines = "8192,100,0,100,0,1,0,0"
    sweep = [StepSpec("W", 1000 * q, 8 * q, 1, 5, 2, qd=q, lines=lines) for q in (1, 4, 32)]
    base = side(store, RunSpec(sweep))
    cand = side(store, RunSpec([replace(s, qd=q) for s, q in zip(sweep, (1, 8, 32), strict=True)]))
    c = compare(base, cand)
    assert [r.load for r in c.rows] == ["QD 1", "QD 4 \u2192 8", "QD 32"]
    assert c.what_changed == ["queue depth 4 \u2192 8 (1 of 3 steps)"]


def test_nothing_in_common_only_when_no_definition_is_shared(store):
    base = side(store, RunSpec([StepSpec("S", 1000, 10, 1, 5, 2, lines="8192,100,0,100,0,1,0,0")]))
    cand = side(store, RunSpec([StepSpec("S", 1000, 10, 1, 5, 2, lines="4096,100,0,100,0,1,0,0")]))
    assert compare(base, cand).nothing_in_common


def test_a_stopped_step_is_paired_marked_and_out_of_the_verdicts(store):
    base = side(store, RunSpec(BEFORE))
    cand = side(store, RunSpec([AFTER[0], replace(AFTER[1], status="stopped"), *AFTER[2:]]))
    c = compare(base, cand)
    row = c.rows[1]
    assert row.incomplete == ["stopped in the candidate"]
    assert {ch.verdict for ch in row.changes.values()} == {"incomplete"}
    assert c.rows[0].changes["iops"].verdict == "better"
    included = compare(base, cand, include_incomplete=True)
    assert included.rows[1].changes["iops"].verdict == "better"


def test_what_changed_names_os_engine_size_run_time_and_notes(store):
    base = side(store, RunSpec(BEFORE[:1]))
    cand = side(
        store, RunSpec(AFTER[:1], kernel="6.8", engine="io_uring", size=1 << 30, run_s=20, notes="new HBA")
    )
    assert compare(base, cand).what_changed == [
        "OS Linux 6.1 \u2192 Linux 6.8",
        "test-file size - \u2192 1 GiB",
        "I/O engine libaio \u2192 io_uring",
        "run time per step 10 s \u2192 20 s",
        "notes - \u2192 new HBA",
    ]


def test_a_step_without_a_time_limit_says_so():
    from app.analysis.compare import run_time_text

    assert (
        run_time_text(3.1536e7) == "until done (no time limit)"
        and run_time_text(10, 2) == "10 s + 2 s ramp-up"
    )
