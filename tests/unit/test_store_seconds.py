"""Every stored second is its own: a batch holding several seconds of a level (ALL slots emitted together
after an overdue tick, a late report or a final one) stores each second with its own numbers."""

from __future__ import annotations

import pytest

from app.model.metrics import Metrics
from app.store import ManagerInfo, Recorder, SampleRow, WorkerInfo, open_store, step_samples


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "seconds.db") as s:
        yield s


def m(ios: int, seconds: float = 1.0) -> Metrics:
    return Metrics(
        seconds=seconds,
        read_ios=ios,
        read_iops=ios / seconds,
        read_bytes=ios * 4096,
        read_bps=ios * 4096 / seconds,
        read_lat_n=ios,
        read_lat_sum_ns=ios * 1e5,
    )


def begin(rec: Recorder, managers: list[str]) -> int:
    run = rec.begin_run({"name": "seconds"})
    rec.add_managers(run, [ManagerInfo(n) for n in managers])
    rec.add_workers(run, [WorkerInfo(n, f"{n}/w1") for n in managers])
    return rec.begin_step(run, 0, run_s=20)


def ios_by_t(store, step: int, level: str, key: str, manager=None) -> dict[float, int]:
    kw = {} if manager is None else {"manager": manager}
    return {t: x.ios for t, x in step_samples(store, step, level, key, **kw)}


def test_several_all_seconds_in_one_batch_keep_their_own_numbers(store):
    rec = Recorder(store)
    step = begin(rec, ["M1", "M2"])
    rec.add_samples(step, [SampleRow("M1", "manager", "M1", 1.0, m(100), m(100))])
    # M2 was silent: ALL for seconds 1..3 comes out together once it is given up / its late reports land
    rec.add_samples(
        step,
        [
            SampleRow(None, "all", "ALL", 1.0, m(30_438), m(30_438)),
            SampleRow(None, "all", "ALL", 2.0, m(39_194), m(69_632)),
            SampleRow(None, "all", "ALL", 3.0, m(41_000), m(110_632)),
        ],
    )
    assert ios_by_t(store, step, "all", "ALL") == {1.0: 30_438, 2.0: 39_194, 3.0: 41_000}
    whole = {t: x.ios for t, x in step_samples(store, step, "all", "ALL", "whole")}
    assert whole == {1.0: 30_438, 2.0: 69_632, 3.0: 110_632}


def test_one_manager_all_shared_with_its_manager_stays_right_for_each_second_of_a_batch(store):
    """With one manager ALL shares the manager's series while equal: a batch of two seconds where only one
    second equals must not let the other second's numbers through."""
    rec = Recorder(store)
    step = begin(rec, ["M1"])
    rec.add_samples(
        step,
        [
            SampleRow("M1", "manager", "M1", 1.0, m(10), m(10)),
            SampleRow(None, "all", "ALL", 1.0, m(10), m(10)),
        ],
    )
    rec.add_samples(
        step,
        [
            SampleRow("M1", "manager", "M1", 2.0, m(20), m(30)),
            SampleRow("M1", "manager", "M1", 3.0, m(25), m(55)),
            SampleRow(None, "all", "ALL", 2.0, m(20), m(30)),
            SampleRow(None, "all", "ALL", 3.0, m(99), m(129)),
        ],
    )
    assert ios_by_t(store, step, "manager", "M1", "M1") == {1.0: 10, 2.0: 20, 3.0: 25}
    assert ios_by_t(store, step, "all", "ALL") == {1.0: 10, 2.0: 20, 3.0: 99}


def test_a_second_sent_again_replaces_only_that_second(store):
    """fio's final report lands in a second already stored: that second is replaced, no other."""
    rec = Recorder(store)
    step = begin(rec, ["M1", "M2"])
    rec.add_samples(step, [SampleRow(None, "all", "ALL", t, m(int(t) * 100), m(0)) for t in (1.0, 2.0, 3.0)])
    rec.add_samples(
        step,
        [SampleRow(None, "all", "ALL", 2.0, m(777), m(0)), SampleRow(None, "all", "ALL", 4.0, m(400), m(0))],
    )
    assert ios_by_t(store, step, "all", "ALL") == {1.0: 100, 2.0: 777, 3.0: 300, 4.0: 400}
