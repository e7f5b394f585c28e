"""What the recorder writes comes back equal; edits, filters and deletion behave."""

from __future__ import annotations

import dataclasses
import random
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.metrics import Metrics
from app.store import (
    Recorder,
    ResultRow,
    RunNotFound,
    SampleRow,
    StoreError,
    annotate_run,
    delete_run,
    get_run,
    list_runs,
    open_store,
    plan_text_and_hash,
    rename_run,
    step_samples,
    step_series,
    tag_run,
)
from app.store.codec import METRIC_NAMES, decode_hist, encode_hist
from app.store.recorder import DEFAULT_SAMPLE_HIST_LEVELS
from tests.unit.store_support import (
    MANAGERS,
    PLAN,
    TARGETS,
    WORKERS,
    level_keys,
    metrics,
    without_hists,
    write_run,
)


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "fiometer.db") as s:
        yield s


def test_every_metrics_field_has_a_column():
    scalar = {f.name for f in dataclasses.fields(Metrics)} - {"read_hist", "write_hist"}
    assert set(METRIC_NAMES) == scalar


def test_run_with_two_managers_workers_targets_and_steps_reads_back_equal(store):
    written = write_run(Recorder(store), steps=2, intervals=3)
    run = get_run(store, written.run_id, raw_output=True)

    assert (run.name, run.description, run.status, run.plan_name, run.notes) == (
        "EVA 4400 Vraid5",
        "32 disks, Vraid5",
        "complete",
        "EVA before",
        "firmware XCS 0953",
    )
    assert sorted(run.tags) == ["before", "eva"]
    assert (run.plan_json, run.plan_sha256) == plan_text_and_hash(PLAN)
    assert run.ended is not None and run.started <= run.ended
    assert run.host["fiometer"] and run.host["hostname"] and run.owner is not None
    assert run.fio_versions == ["fio-3.33", "fio-3.38"]
    assert (run.managers, run.workers, run.targets) == (MANAGERS, WORKERS, TARGETS)
    assert [s.id for s in run.steps] == [s.step_id for s in written.steps]
    assert run.step_count == 2
    for step, wstep in zip(run.steps, written.steps, strict=True):
        assert step.status == "complete" and step.queue_depth == 8 and step.run_s == 30.5
        assert step.active_workers == [w.key for w in WORKERS]
        assert step.outputs["san-host"].job_text.startswith("[global]")
        assert step.outputs["san-host"].raw_output == '{"fio version": "fio-3.38"}'
        assert {(r.level, r.manager, r.key): r for r in step.results} == {
            (r.level, r.manager, r.key): r for r in wstep.results
        }
        assert step_series(store, step.id) == [(level, manager, key) for manager, level, key in level_keys()]
        for manager, level, key in level_keys():
            got_interval = step_samples(store, step.id, level, key, "interval", manager=manager)
            got_whole = step_samples(store, step.id, level, key, "whole", manager=manager)
            sent = [
                r
                for rows in wstep.samples
                for r in rows
                if (r.manager, r.level, r.key) == (manager, level, key)
            ]
            keep = level in DEFAULT_SAMPLE_HIST_LEVELS
            assert got_interval == [(r.t, r.interval if keep else without_hists(r.interval)) for r in sent]
            assert got_whole == [(r.t, without_hists(r.whole)) for r in sent]


def test_results_keep_histograms_so_percentiles_can_be_recomputed(store):
    written = write_run(Recorder(store), steps=1)
    all_row = next(r for r in get_run(store, written.run_id).steps[0].results if r.level == "all")
    sent = next(r for r in written.steps[0].results if r.level == "all")
    assert all_row.metrics.read_hist == sent.metrics.read_hist != {}
    assert all_row.metrics.percentile_ms(99) == sent.metrics.percentile_ms(99) is not None


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.integers(0, 2**40), st.integers(0, 2**40), max_size=60))
def test_histogram_codec_round_trips(hist):
    assert decode_hist(encode_hist(hist)) == hist


def test_any_finite_metrics_round_trip_through_results(tmp_path):
    ints, floats = st.integers(0, 2**62), st.floats(allow_nan=False)
    hists = st.dictionaries(st.integers(0, 2**40), st.integers(0, 2**40), max_size=20)
    any_metrics = st.builds(
        Metrics,
        **{
            f.name: (
                hists
                if f.name.endswith("hist")
                else st.none() | floats
                if f.name == "disk_util"
                else ints
                if f.type == "int"
                else floats
            )
            for f in dataclasses.fields(Metrics)
        },
    )
    with open_store(tmp_path / "h.db") as store:
        rec = Recorder(store)
        run_id = rec.begin_run("{}")
        step_id = rec.begin_step(run_id, 0)

        @settings(max_examples=150, deadline=None)
        @given(any_metrics)
        def check(m):
            rec.add_step_results(step_id, [ResultRow(None, "all", "ALL", m)])
            assert get_run(store, run_id).steps[0].results == [ResultRow(None, "all", "ALL", m)]

        check()


def test_nan_is_refused_and_nothing_of_the_interval_is_stored(store):
    rec = Recorder(store)
    step_id = rec.begin_step(rec.begin_run("{}"), 0)
    good = metrics(random.Random(1))
    bad = dataclasses.replace(good, read_iops=float("nan"))
    with pytest.raises(ValueError, match="read_iops"):
        rec.add_samples(
            step_id,
            [SampleRow(None, "all", "ALL", 1.0, good, good), SampleRow("m", "manager", "m", 1.0, bad, good)],
        )
    assert step_samples(store, step_id, "all", "ALL") == []


def test_samples_committed_per_interval_are_visible_to_a_second_connection_while_running(tmp_path):
    path = tmp_path / "fiometer.db"
    rng = random.Random(3)
    with open_store(path) as writer, open_store(path) as reader:
        rec = Recorder(writer)
        run_id = rec.begin_run(PLAN)
        step_id = rec.begin_step(run_id, 0)
        for t in (1.0, 2.0, 3.0):
            m = metrics(rng)
            rec.add_samples(step_id, [(None, "all", "ALL", t, m, m)])
            seen = step_samples(reader, step_id, "all", "ALL")
            assert [p[0] for p in seen] == [1.0, 2.0, 3.0][: int(t)]
            assert seen[-1][1] == m
        assert [(r.id, r.status) for r in list_runs(reader)] == [(run_id, "running")]


def test_end_run_closes_steps_still_running_and_keeps_the_error(store):
    rec = Recorder(store)
    run_id = rec.begin_run(PLAN)
    first = rec.begin_step(run_id, 0)
    rec.end_step(first, "failed", error="fio on san-host went silent for 10 s")
    second = rec.begin_step(run_id, 1)
    rec.add_message(run_id, "Stop pressed", level="warning", step_id=second)
    rec.end_run(run_id, "stopped")
    run = get_run(store, run_id)
    assert [(s.id, s.status) for s in run.steps] == [(first, "failed"), (second, "stopped")]
    assert [(m.level, m.text) for m in run.steps[0].messages] == [
        ("error", "fio on san-host went silent for 10 s")
    ]
    assert [m.text for m in run.steps[1].messages] == ["Stop pressed"]
    with pytest.raises(ValueError):
        rec.end_run(run_id, "running")
    with pytest.raises(RunNotFound):
        rec.end_run(run_id + 1, "complete")
    with pytest.raises(RunNotFound):
        rec.end_step(second + 1, "complete", error="gone")


def test_list_filters_and_edits(store):
    rec = Recorder(store)
    a = write_run(rec, seed=1, steps=1, intervals=1).run_id
    b = rec.begin_run(PLAN, name="After: 36 disks Vraid1", tags=["after"], notes="100% done")
    rec.end_run(b, "failed")

    assert [r.id for r in list_runs(store)] == [b, a]
    assert [r.id for r in list_runs(store, text="vraid1")] == [b]
    assert [r.id for r in list_runs(store, text="%")] == [b]  # a literal percent sign, not a wildcard
    assert [r.id for r in list_runs(store, tag="EVA")] == [a]
    assert [r.id for r in list_runs(store, status=["complete", "stopped"])] == [a]
    with pytest.raises(ValueError):
        list_runs(store, status="done")

    rename_run(store, a, "Before")
    annotate_run(store, a, notes="cache mirroring on")
    tag_run(store, a, add=["client-x"], remove=["eva"])
    run = get_run(store, a)
    assert (run.name, run.notes, run.description, run.tags) == (
        "Before",
        "cache mirroring on",
        "32 disks, Vraid5",
        ["before", "client-x"],
    )
    with pytest.raises(RunNotFound):
        rename_run(store, 999, "x")


TABLES = [
    "runs",
    "run_tags",
    "managers",
    "workers",
    "targets",
    "steps",
    "step_outputs",
    "messages",
    "series",
    "sample_blocks",  # a finished step keeps its samples as blocks
    "results",
]


def _counts(store) -> dict[str, int]:
    return {t: store.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def test_delete_cascades_to_everything_of_the_run_and_only_that_run(store):
    rec = Recorder(store)
    first = write_run(rec, seed=1)
    rec.add_message(first.run_id, "a run message")
    rec.add_message(first.run_id, "a step message", step_id=first.steps[0].step_id)
    one_run = _counts(store)
    second = write_run(rec, seed=2)
    both = _counts(store)
    assert all(v > 0 for v in one_run.values())

    delete_run(store, first.run_id)

    after = _counts(store)
    assert after == {t: both[t] - one_run[t] for t in TABLES}
    assert after["messages"] == one_run["messages"] - 2 and after["series"] == one_run["series"]
    with pytest.raises(RunNotFound):
        get_run(store, first.run_id)
    assert get_run(store, second.run_id).steps[1].results
    assert store.conn.execute("PRAGMA freelist_count").fetchone()[0] == 0  # pages given back to the disk


def test_a_run_being_recorded_by_a_live_process_cannot_be_deleted(store):
    rec = Recorder(store)
    run_id = rec.begin_run(PLAN)
    with pytest.raises(StoreError, match="still being recorded"):
        delete_run(store, run_id)
    rec.end_run(run_id, "stopped")
    delete_run(store, run_id)
    assert list_runs(store) == []


def test_foreign_keys_hold_workers_to_known_managers(store):
    rec = Recorder(store)
    run_id = rec.begin_run(PLAN)
    with pytest.raises(StoreError, match="FOREIGN KEY"):
        rec.add_workers(run_id, WORKERS)
    assert store.conn.execute("SELECT count(*) FROM workers").fetchone()[0] == 0


def test_keys_shared_by_managers_need_the_manager(store):
    rec = Recorder(store)
    step_id = rec.begin_step(rec.begin_run("{}"), 0)
    m = metrics(random.Random(5))
    rec.add_samples(step_id, [("a", "worker", "1", 1.0, m, m), ("b", "worker", "1", 1.0, m, m)])
    with pytest.raises(ValueError, match="manager="):
        step_samples(store, step_id, "worker", "1")
    assert len(step_samples(store, step_id, "worker", "1", manager="b")) == 1


def test_unknown_level_is_refused(store):
    rec = Recorder(store)
    step_id = rec.begin_step(rec.begin_run("{}"), 0)
    with pytest.raises(ValueError, match="level"):
        rec.add_samples(step_id, [(None, "job", "x", 1.0, Metrics(), Metrics())])


def test_integer_metrics_come_back_as_their_types(store):
    rec = Recorder(store)
    step_id = rec.begin_step(rec.begin_run("{}"), 0)
    m = Metrics(read_ios=7, read_iops=7.0, read_lat_max_ns=5e5)
    rec.add_samples(step_id, [(None, "all", "ALL", 1.0, m, m)])
    ((_, got),) = step_samples(store, step_id, "all", "ALL")
    assert type(got.read_ios) is int and type(got.read_iops) is float and type(got.read_lat_max_ns) is float


def test_store_is_a_wal_database_with_foreign_keys(store):
    conn = sqlite3.connect(store.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL


def test_array_histograms_are_stored_as_their_dicts_would_be():
    """Telemetry's count arrays are encoded without a dict; the bytes are the same."""
    import numpy as np

    from app.engine.sampling.telemetry import BUCKET_NS
    from app.model.bucket_hist import BucketHist

    rng = np.random.default_rng(11)
    for lo, hi in ((0, 1), (300, 420), (0, len(BUCKET_NS)), (5, 5)):
        counts = np.zeros(len(BUCKET_NS), dtype=np.int64)
        counts[lo:hi] = rng.integers(0, 3, hi - lo) * rng.integers(1, 1 << 40, hi - lo)
        arrays = BucketHist(BUCKET_NS, counts)
        assert encode_hist(arrays) == encode_hist(dict(arrays))
        m = Metrics(read_hist=arrays, write_hist=BucketHist(BUCKET_NS, counts[::-1].copy()))
        plain = Metrics(read_hist=dict(m.read_hist), write_hist=dict(m.write_hist))
        assert m.percentile_ns(99) == plain.percentile_ns(99)
