"""Confidence of a finding is honest: with one run each side it rests on the steps' per-second spread
(the per-second samples stored with each step), says so, and the disclosure appendix says how it is decided.
Runs are stored with real SQLite and the recorder; the spread is worked out here from the samples written."""

from __future__ import annotations

import statistics

import pytest

from app.model.metrics import Metrics
from app.report.document import build_report
from app.report.summary import SPREAD_HIGH
from app.store.database import open_store
from app.store.queries import get_run
from app.store.recorder import Recorder
from app.store.records import SampleRow
from tests.stored_runs import RunSpec, StepSpec, record


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "s.db") as s:
        yield s


def add_per_second(store, run_id: int, iops: list[float], bs: int = 8192) -> None:
    """Per-second ALL samples of the run's first step at these IOPS (one second each)."""
    step = get_run(store, run_id).steps[0]
    rec = Recorder(store)
    whole_ios = 0
    for t, rate in enumerate(iops, 1):
        ios = round(rate)
        whole_ios += ios
        iv = Metrics(seconds=1.0, read_ios=ios, read_bytes=ios * bs, read_iops=rate, read_bps=rate * bs)
        wh = Metrics(seconds=float(t), read_ios=whole_ios, read_bytes=whole_ios * bs)
        rec.add_samples(step.id, [SampleRow(None, "all", "ALL", float(t), iv, wh)])


def spread(rates: list[float]) -> float:
    return statistics.stdev(rates) / statistics.fmean(rates) * 100


def two_runs(store, before: float, after: float, rates_b: list[float], rates_a: list[float]):
    lines = "8192,100,100,100,0,1,0,0"  # random 8 KiB read: judged by IOPS
    record(
        store,
        RunSpec(
            [StepSpec("Random 8k read", before, before * 0.008192, 1, 5, 2, lines=lines)], tags=["before"]
        ),
    )
    record(
        store,
        RunSpec([StepSpec("Random 8k read", after, after * 0.008192, 1, 5, 2, lines=lines)], tags=["after"]),
    )
    add_per_second(store, 1, rates_b)
    add_per_second(store, 2, rates_a)
    return build_report(store, [1], [[2]])


def test_a_large_change_against_a_steady_rate_is_high_and_says_the_spread(store):
    rates_b = [1000, 1010, 990, 1005, 995]
    rates_a = [1500, 1490, 1510, 1500, 1520]
    report = two_runs(store, 1000, 1504, rates_b, rates_a)
    (block,) = report.summary
    s = max(spread(rates_b), spread(rates_a))
    assert SPREAD_HIGH * s <= 50.4  # the change is many times the spread
    assert block.sentences[0].endswith(
        f"confidence high (one run each side; per-second spread \u00b1{s:.1f} %)."
    )


def test_the_same_change_against_a_wandering_rate_is_not_high(store):
    rates_b = [600, 1400, 700, 1300, 1000]  # per-second spread about 34 %
    rates_a = [1500, 1500, 1500, 1500, 1520]
    report = two_runs(store, 1000, 1504, rates_b, rates_a)
    (block,) = report.summary
    s = spread(rates_b)
    assert block.sentences[0].endswith(
        f"confidence medium (one run each side; per-second spread \u00b1{s:.1f} %)."
    )
    assert "high" not in block.sentences[0]


def test_a_change_inside_the_spread_is_low(store):
    rates = [500, 1500, 600, 1400, 1000]  # spread about 45 %
    report = two_runs(store, 1000, 1300, rates, rates)  # +30 %: beyond 2 x 5 % but within the spread
    (block,) = report.summary
    assert "confidence low (one run each side; per-second spread" in block.sentences[0]


def test_how_confidence_is_decided_is_in_the_noise_line_and_the_disclosure(store):
    report = two_runs(store, 1000, 1504, [1000] * 5, [1500] * 5)
    (block,) = report.summary
    assert "per-second spread" in block.noise and f"{SPREAD_HIGH:g} times" in block.noise
    rule = [x for x in report.disclosure if x.startswith("Confidence with one run each side")]
    assert rule and "per-second" in rule[0] and "Repeated runs" in rule[0]


def test_a_change_six_times_the_spread_is_not_low_and_the_rule_says_why(store):
    """The issue's "+8.6 % ... confidence low": six times a steady rate's spread is beyond noise by the very
    rule the report states (medium: beyond the spread; high needs twice the 5 % threshold as well)."""
    rates_b = [1000, 1020, 985, 1010, 990, 1000]
    rates_a = [1086, 1100, 1075, 1090, 1080, 1085]
    report = two_runs(store, 1000, 1086, rates_b, rates_a)
    (block,) = report.summary
    s = max(spread(rates_b), spread(rates_a))
    assert 5 * s <= 8.6  # the case: the change is several times the spread
    assert block.sentences[0].endswith(
        f"confidence medium (one run each side; per-second spread \u00b1{s:.1f} %)."
    ), block.sentences[0]
    assert "medium when it exceeds the spread, low within it" in block.noise
