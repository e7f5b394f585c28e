"""Live results: points per update frequency, WHOLE_TEST vs LAST_UPDATE, step gaps."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from app.live.data import ALL_KEY, LAST, WHOLE, LiveResults, over_time
from app.model.metrics import Metrics
from app.ui.run.results_tab import format_value


@dataclass
class FakeSample:  # the fields of app.engine.sampling.telemetry.Sample the display reads
    manager: str | None
    level: str
    key: str
    t: float
    interval: Metrics
    whole: Metrics
    final: bool = False


def window(
    seconds: float, ios: int, lat_ms: float, max_ms: float, hist: dict[int, int] | None = None
) -> Metrics:
    return Metrics(
        seconds=seconds,
        read_ios=ios,
        read_bytes=ios * 4096,
        read_iops=ios / seconds if seconds else 0,
        read_bps=ios * 4096 / seconds if seconds else 0,
        read_lat_sum_ns=lat_ms * 1e6 * ios,
        read_lat_n=ios,
        read_lat_max_ns=max_ms * 1e6,
        read_hist=dict(hist or {}),
    )


def test_over_time_weights_rates_by_time_and_latency_by_ios() -> None:
    a = window(1.0, 100, 1.0, 5.0, {1_000_000: 100})
    b = window(3.0, 900, 2.0, 9.0, {2_000_000: 900})
    m = over_time([a, b])
    assert m.seconds == 4.0
    assert m.iops == pytest.approx(250.0)  # 1000 I/Os in 4 s
    assert m.lat_mean_ms == pytest.approx((100 * 1.0 + 900 * 2.0) / 1000)
    assert m.lat_max_ms == 9.0
    assert m.percentile_ms(50) == 2.0 and m.read_hist == {1_000_000: 100, 2_000_000: 900}


def test_points_follow_the_update_frequency_and_kind() -> None:
    live = LiveResults(update_seconds=2)
    whole = Metrics()
    for t in range(1, 7):
        iv = window(1.0, 100 * t, 1.0, float(t))
        whole = over_time([whole, iv]) if whole.seconds else iv
        live.add(0.0, [FakeSample(None, "all", "ALL", float(t), iv, whole)])
    s = live.series[ALL_KEY]
    assert list(s.xs()) == [2.0, 4.0, 6.0]
    # LAST_UPDATE: each point covers its 2 s window (100+200, 300+400, 500+600 I/Os)
    assert list(s.ys(LAST, "iops")) == [150.0, 350.0, 550.0]
    assert list(s.ys(LAST, "lat_max_ms")) == [2.0, 4.0, 6.0]
    # WHOLE_TEST: everything since the start
    assert s.ys(WHOLE, "iops")[-1] == pytest.approx(2100 / 6)


def test_infinite_frequency_makes_one_point_per_step_joined_from_step_to_step() -> None:
    live = LiveResults(update_seconds=0)
    for step in range(2):
        live.start_step(step * 10.0, f"{step + 1}: S")
        for t in (1.0, 2.0, 3.0):
            iv = window(1.0, 10, 1.0, 1.0)
            live.add(step * 10.0, [FakeSample("M1", "manager", "M1", t, iv, iv, final=t == 3.0)])
    s = live.series[("manager", "M1", "M1")]
    assert list(s.xs()) == [3.0, 13.0]  # one line through the steps' points (no break between steps)
    assert not np.isnan(s.ys(WHOLE, "iops")).any()
    assert [m.label for m in live.steps] == ["1: S", "2: S"]


def test_repeated_final_report_only_updates_whole_numbers() -> None:
    live = LiveResults(update_seconds=1)
    iv = window(1.0, 100, 1.0, 1.0)
    live.add(0.0, [FakeSample(None, "all", "ALL", 1.0, iv, iv)])
    final_whole = window(1.0, 120, 1.0, 1.0)
    live.add(0.0, [FakeSample(None, "all", "ALL", 1.0, window(0.0, 0, 0.0, 0.0), final_whole, final=True)])
    s = live.series[ALL_KEY]
    assert s.n == 1 and s.ys(WHOLE, "iops")[0] == 120.0 and s.ys(LAST, "iops")[0] == 100.0


def test_target_samples_are_skipped_by_default() -> None:
    live = LiveResults()
    iv = window(1.0, 1, 1.0, 1.0)
    live.add(0.0, [FakeSample("M1", "target", "w1.t1", 1.0, iv, iv)])
    assert live.series == {}


def test_p99_without_histogram_is_nan_not_zero() -> None:
    live = LiveResults()
    iv = window(1.0, 1, 1.0, 1.0)
    live.add(0.0, [FakeSample(None, "all", "ALL", 1.0, iv, iv)])
    assert np.isnan(live.series[ALL_KEY].ys(WHOLE, "p99_ms")[0])


def test_format_value() -> None:
    assert format_value(None) == "—"
    assert format_value(float("nan")) == "—"
    assert format_value(1234567.891) == "1,234,568"
    assert format_value(12.345) == "12.35"
    assert format_value(0.00042512) == "0.000425"
    assert [format_value(0.9007), format_value(1.0234)] == ["0.90", "1.02"]  # one precision side by side
    assert format_value(0.0) == "0.00"


def test_sizes_in_words() -> None:
    from app.model.units import format_bytes, parse_size

    assert format_bytes(4096) == "4 KiB" and format_bytes(2048) == "2 KiB" and format_bytes(1000) == "1000 B"
    assert format_bytes(8_000_000 * 512) == "3.8 GiB"
    assert format_bytes(100_000_000, exact=True) == "100000000 B"  # what an editor shows must parse back
    for n in (1, 512, 4096, 100_000_000, 1023 * 1024 * 1024):
        assert parse_size(format_bytes(n, exact=True)) == n
    assert parse_size("4k") == 4096 and parse_size("1.5M") == 1572864 and parse_size("4 KB?") is None


def test_reports_a_few_ms_early_still_make_one_point_each() -> None:
    """fio's reports come every 0.998-1.001 s: each must be a point of a 1 s update, not every other one."""
    live = LiveResults(update_seconds=1)
    for i, t in enumerate((0.981, 1.979, 2.977, 3.978)):
        live.add(
            0.0,
            [
                FakeSample(
                    "M1", "manager", "M1", t, window(0.998, 100, 1.0, 2.0), window(t, 100 * (i + 1), 1.0, 2.0)
                )
            ],
        )
    assert live.series[("manager", "M1", "M1")].n == 4


def test_a_level_s_series_share_one_block_that_grows_with_them() -> None:
    live = LiveResults(update_seconds=1)
    keys = [f"w{i}" for i in range(7)]
    for t in range(1, 151):  # beyond the block's first 64 columns and 4 rows
        batch = [
            FakeSample(
                "M1", "worker", k, float(t), window(1.0, 10 * t + i, 1.0, 2.0), window(1.0, 5, 1.0, 2.0)
            )
            for i, k in enumerate(keys)
        ]
        batch.append(
            FakeSample(None, "all", "ALL", float(t), window(1.0, t, 1.0, 2.0), window(1.0, t, 1.0, 2.0))
        )
        assert live.add(0.0, batch) == len(keys) + 1
    block = live.blocks["worker"]
    assert [s for s in block.series] == [live.series[("worker", "M1", k)] for k in keys]
    for i, k in enumerate(keys):
        s = live.series[("worker", "M1", k)]
        assert s.n == 150 and list(s.xs()) == [float(t) for t in range(1, 151)]
        assert list(s.ys(LAST, "iops")) == [10.0 * t + i for t in range(1, 151)]
        assert np.shares_memory(s.x, block.x) and np.array_equal(block.x[s.row, :150], s.xs())
        assert np.array_equal(block.values[LAST][s.row, 0, :150], s.ys(LAST, "iops"))
    assert live.blocks["all"].series == [live.series[ALL_KEY]]


def test_deferred_batches_are_fed_together_as_if_one_by_one() -> None:
    def batches():
        for t in range(1, 6):
            yield [
                FakeSample(
                    "M1",
                    "worker",
                    k,
                    float(t),
                    window(1.0, 10 * t + i, 1.0 + i, 2.0),
                    window(1.0, 5 * t, 1.0, 3.0, {1_000_000 * (i + 1): 10}),
                )
                for i, k in enumerate(("w1", "w2"))
            ]

    one, later = LiveResults(), LiveResults()
    for b in batches():
        one.add(0.0, b)
        later.defer(0.0, b)
    assert not later.series  # nothing until flushed
    assert later.flush() == 10 and later.flush() == 0
    later.start_step(10.0, "2: S")  # flushes first
    for key, s in one.series.items():
        assert np.array_equal(s.xs(), later.series[key].xs())
        for kind in (WHOLE, LAST):
            assert np.array_equal(
                s.values[kind][:, : s.n], later.series[key].values[kind][:, : s.n], equal_nan=True
            )


def test_chart_rows_give_every_chart_field_of_each_window() -> None:
    from app.live.data import CHART_FIELDS, chart_rows

    m = window(2.0, 400, 1.5, 4.0, {1_000_000: 90, 3_000_000: 10})
    m.usr_cpu, m.sys_cpu, m.errors = 3.0, 1.5, 2
    row = dict(zip(CHART_FIELDS, chart_rows([m, Metrics()])[0].tolist(), strict=True))
    assert row == {
        "iops": 200.0,
        "mbps": pytest.approx(200 * 4096 / 1e6),
        "lat_mean_ms": pytest.approx(1.5),
        "lat_max_ms": 4.0,
        "p99_ms": 3.0,
        "cpu_pct": 4.5,
        "errors": 2.0,
    }


def all_sample(t: float, ios: int, final: bool = False) -> FakeSample:
    return FakeSample(None, "all", "ALL", t, window(1.0, ios, 1.0, 2.0), window(t, ios, 1.0, 2.0), final)


def test_several_all_seconds_in_one_batch_make_a_point_each() -> None:
    live = LiveResults(update_seconds=1)
    live.start_step(0.0, "1")
    live.add(0.0, [all_sample(1.0, 100)])
    live.add(0.0, [all_sample(2.0, 200), all_sample(3.0, 300), all_sample(4.0, 400)])  # emitted together
    s = live.series[ALL_KEY]
    assert list(s.xs()) == [1.0, 2.0, 3.0, 4.0]
    assert list(s.ys(LAST, "iops")) == [100, 200, 300, 400]


def test_a_second_sent_again_redraws_its_own_point_not_the_next_one() -> None:
    """ALL for second 3 came first without a late manager; once its report lands, second 3 is sent again
    (after second 4 was drawn): point 3 takes the new numbers and second 5 keeps only its own."""
    live = LiveResults(update_seconds=1)
    live.start_step(0.0, "1")
    for t in (1.0, 2.0, 3.0, 4.0):
        live.add(0.0, [all_sample(t, int(t) * 100)])
    live.add(0.0, [all_sample(3.0, 333)])
    live.add(0.0, [all_sample(5.0, 500)])
    s = live.series[ALL_KEY]
    assert list(s.xs()) == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert list(s.ys(LAST, "iops")) == [100, 200, 333, 400, 500]


def test_a_second_sent_again_inside_a_longer_window_replaces_its_own_part() -> None:
    live = LiveResults(update_seconds=2)
    live.start_step(0.0, "1")
    live.add(0.0, [all_sample(1.0, 100)])  # window (0, 1]: first point once 2 s have passed
    live.add(0.0, [all_sample(2.0, 200)])
    live.add(0.0, [all_sample(3.0, 300)])
    live.add(0.0, [all_sample(3.0, 500)])  # second 3 again, before its window is drawn
    live.add(0.0, [all_sample(4.0, 700)])
    s = live.series[ALL_KEY]
    assert list(s.ys(LAST, "iops")) == [150, 600]  # (100+200)/2, (500+700)/2
