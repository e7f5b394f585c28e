"""Response-time distributions from fio's histograms: bucket ranges, regrouping into equal logarithmic bins,
fio's percentiles, the heat map's columns, and reading them back from a real store file."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from app.analysis.latency_distribution import (
    EDGES_NS,
    bucket_index,
    dense_counts,
    heat_map,
    interval_heat_map,
    log_edges,
    rebin,
    result_counts,
    step_histogram,
)
from app.engine.common.fio_buckets import BIN_EDGE, BIN_VALUE, PLAT_NR, plat_val_to_idx
from app.model.metrics import Metrics
from app.model.units import format_latency
from app.store import ManagerInfo, Recorder, ResultRow, SampleRow, get_run, open_store
from app.store.codec import decode_hist, decode_hist_arrays, encode_hist


def sparse(hist: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    keys = sorted(hist)
    return np.array(keys, dtype=np.int64), np.array([hist[k] for k in keys], dtype=np.int64)


def fio_hist(latencies_ns: np.ndarray) -> dict[int, int]:
    """Latencies filed in fio's buckets as fio files them, keyed by bucket value (as json+ and the store)."""
    out: dict[int, int] = {}
    for v in latencies_ns:
        b = BIN_VALUE[plat_val_to_idx(int(v))]
        out[b] = out.get(b, 0) + 1
    return out


def test_bucket_ranges_are_fio_s_own() -> None:
    # every latency in a bucket's range is filed under that bucket by fio's rule, and its value lies inside
    for i in range(PLAT_NR - 1):
        assert BIN_EDGE[i] <= BIN_VALUE[i] < BIN_EDGE[i + 1]
        assert plat_val_to_idx(BIN_EDGE[i]) == i and plat_val_to_idx(BIN_EDGE[i + 1] - 1) == i
    # stored values map back to their bucket; a value that is not a bucket's is filed as fio would
    assert list(bucket_index(np.array([BIN_VALUE[5], BIN_VALUE[700], 1_000_000]))) == [
        5,
        700,
        plat_val_to_idx(1_000_000),
    ]


def test_step_histogram_shares_and_percentiles_match_the_results_table() -> None:
    hist = {
        BIN_VALUE[plat_val_to_idx(100_000)]: 900,
        BIN_VALUE[plat_val_to_idx(1_000_000)]: 90,
        BIN_VALUE[plat_val_to_idx(10_000_000)]: 10,
    }
    h = step_histogram(dense_counts([sparse(hist)]))
    assert h is not None and h.total == 1000
    assert h.share_pct.sum() == pytest.approx(100.0)
    # the bins holding 100 us, 1 ms and 10 ms hold 90 %, 9 % and 1 % (a bucket is ~1 % wide, a bin ~10 %+)
    for ns, share in ((100_000, 90.0), (1_000_000, 9.0), (10_000_000, 1.0)):
        i = np.searchsorted(h.edges_ns, ns, side="right") - 1
        assert h.share_pct[max(0, i - 1) : i + 2].sum() == pytest.approx(share)
    m = Metrics(read_hist=hist)
    for p in (50.0, 99.0, 99.9):
        assert h.percentile_ms(p) == m.percentile_ms(p)  # fio's rule, as the table's p99
    assert format_latency(h.percentiles_ns[50.0]) == "99.8 \u00b5s"  # the bucket's middle, as fio says it
    assert step_histogram(np.zeros(PLAT_NR, dtype=np.int64)) is None


def test_regrouping_splits_buckets_by_overlap_and_keeps_every_io() -> None:
    counts = np.zeros(PLAT_NR)
    i = plat_val_to_idx(300_000)
    counts[i] = 10
    lo, hi = EDGES_NS[i], EDGES_NS[i + 1]
    mid = (lo + hi) / 2
    out = rebin(counts[i : i + 1], i, np.array([lo - 1, mid, hi + 1]))
    assert list(out) == pytest.approx([5.0, 5.0])
    # many columns at once, totals kept
    grid = np.random.default_rng(1).integers(0, 50, size=(7, 300)).astype(float)
    edges = log_edges(EDGES_NS[400], EDGES_NS[700], 40)
    assert rebin(grid, 400, edges).sum(axis=1) == pytest.approx(grid.sum(axis=1))


def test_a_smooth_distribution_stays_smooth() -> None:
    """fio's buckets halve in relative width across each power of two: latencies spread evenly over the
    logarithm fill them unevenly, and grouping whole buckets would draw a saw-tooth; equal logarithmic bins
    do not."""
    lat = np.exp(np.random.default_rng(3).uniform(math.log(10_000), math.log(10_000_000), 200_000))
    h = step_histogram(dense_counts([sparse(fio_hist(lat))]), max_bins=40)
    assert (
        h is not None and 30 <= len(h.share_pct) <= 32
    )  # 10 bins per decade over a little more than 3 decades
    assert np.log10(h.edges_ns[1:] / h.edges_ns[:-1]) == pytest.approx(np.full(len(h.share_pct), 0.1))
    inner = h.share_pct[1:-1]
    assert inner.max() / inner.min() < 1.1
    # grouping fio's own buckets eight at a time is uneven by ~2x across each power of two
    d = dense_counts([sparse(fio_hist(lat))])
    groups = d[plat_val_to_idx(20_000) : plat_val_to_idx(5_000_000)]
    groups = groups[: len(groups) // 8 * 8].reshape(-1, 8).sum(axis=1)
    assert groups.max() / groups.min() > 1.6


def test_bins_get_coarser_when_the_span_is_wide() -> None:
    assert len(log_edges(1e5, 1e6, 100)) - 1 == 40
    assert len(log_edges(1e3, 1e9, 100)) - 1 == 60  # 6 decades: 10 per decade
    assert log_edges(1e3, 1e9, 100)[0] == pytest.approx(1e3)  # decades fall on edges


def test_heat_map_columns_shares_p99_and_gaps() -> None:
    fast = sparse({BIN_VALUE[plat_val_to_idx(50_000)]: 1000})
    slow = sparse({BIN_VALUE[plat_val_to_idx(50_000)]: 500, BIN_VALUE[plat_val_to_idx(5_000_000)]: 500})
    m = heat_map([(1.0, fast), (2.0, fast), (3.0, slow), (6.0, fast)])
    assert m is not None and m.samples == 4
    assert m.t_edges[0] == pytest.approx(0.5) and m.t_edges[1] - m.t_edges[0] == pytest.approx(1.0)
    assert m.share_pct.shape == (6, len(m.edges_ns) - 1)
    assert np.nansum(m.share_pct, axis=1) == pytest.approx([100, 100, 100, 0, 0, 100], abs=1e-3)
    assert np.isnan(m.share_pct[3]).all() and np.isnan(m.p99_ns[4])  # no interval ended there
    assert (
        m.p99_ns[0] == BIN_VALUE[plat_val_to_idx(50_000)]
        and m.p99_ns[2] == BIN_VALUE[plat_val_to_idx(5_000_000)]
    )
    slow_row = np.searchsorted(m.edges_ns, 5_000_000) - 1
    assert m.share_pct[2, slow_row - 1 : slow_row + 2].sum() == pytest.approx(50.0)
    # reads and writes of one interval add up
    both = heat_map([(1.0, fast), (1.0, slow)])
    assert both is not None and both.share_pct.shape[0] == 1
    assert heat_map([(1.0, sparse({}))]) is None


def test_an_hour_of_intervals_fits_the_columns() -> None:
    h = sparse({BIN_VALUE[plat_val_to_idx(80_000)]: 100, BIN_VALUE[plat_val_to_idx(2_000_000)]: 1})
    m = heat_map([(float(t), h) for t in range(1, 3601)], max_columns=600)
    assert m is not None and len(m.t_edges) - 1 <= 600
    assert m.t_edges[0] <= 1.0 and m.t_edges[-1] >= 3600.0
    assert np.nansum(m.share_pct, axis=1) == pytest.approx(np.full(len(m.share_pct), 100.0), abs=1e-3)


def test_reads_the_histograms_a_store_keeps(tmp_path) -> None:
    """Through the real recorder: the steps' final histograms per level, and the intervals' where kept
    (managers and ALL by default, not workers)."""
    h1 = {BIN_VALUE[plat_val_to_idx(60_000)]: 40}
    h2 = {BIN_VALUE[plat_val_to_idx(900_000)]: 10}
    with open_store(tmp_path / "r.db") as store:
        rec = Recorder(store)
        run_id = rec.begin_run({"p": 1}, plan_name="p")
        rec.add_managers(run_id, [ManagerInfo("M1")])
        step = rec.begin_step(run_id, 0, spec_name="s", run_s=2)
        for t, hist in ((1.0, h1), (2.0, h2)):
            m = Metrics(seconds=1.0, read_ios=sum(hist.values()), read_hist=hist, write_hist=h2)
            rec.add_samples(
                step,
                [
                    SampleRow("M1", "worker", "w1", t, m, m),
                    SampleRow("M1", "manager", "M1", t, m, m),
                    SampleRow(None, "all", "ALL", t, m, m),
                ],
            )
        final = Metrics(read_hist={**h1, **h2}, write_hist=h2)
        rec.add_step_results(
            step, [ResultRow("M1", "worker", "w1", final), ResultRow(None, "all", "ALL", final)]
        )
        rec.end_step(step)
        run = get_run(store, run_id)
        counts = result_counts(store, [step], [("worker", "M1", "w1")])
        assert counts.sum() == 40 + 10 + 10
        assert counts[plat_val_to_idx(900_000)] == 20
        assert result_counts(store, [step], [("manager", "M1", "M1")]).sum() == 0  # no result row kept
        ids = {
            (lv, k): i
            for i, lv, k in store.conn.execute("SELECT coalesce(same_as, id), level, key FROM series")
        }
        heat, kept = interval_heat_map(store, [(ids[("manager", "M1")], 100.0)])
        assert kept == 2 and heat is not None and heat.t_edges[0] == pytest.approx(100.5)
        # per interval, reads and writes together: 40 + 10 I/Os, then 10 + 10
        fast = np.searchsorted(heat.edges_ns, 60_000) - 1
        assert heat.share_pct[0, max(0, fast - 1) : fast + 2].sum() == pytest.approx(80.0)
        assert heat.share_pct[1, max(0, fast - 1) : fast + 2].sum() == pytest.approx(0.0)
        assert interval_heat_map(store, [(ids[("worker", "w1")], 0.0)]) == (None, 0)
        assert run.steps[0].id == step


def test_stored_histograms_decode_to_the_same_arrays_in_every_format() -> None:
    hist = {BIN_VALUE[i]: i * 3 + 1 for i in range(100, 1800, 7)}
    big = {10: 2**40, 2**35: 1}  # beyond 32 bits: the 64-bit format
    as_json = json.dumps(
        [v for b, c in zip([0, *sorted(hist)], sorted(hist), strict=False) for v in (c - b, hist[c])]
    )  # version 2's text
    for value, expected in ((encode_hist(hist), hist), (encode_hist(big), big), (as_json, hist)):
        b, c = decode_hist_arrays(value)
        assert dict(zip(b.tolist(), c.tolist(), strict=True)) == expected == decode_hist(value)
        assert b.dtype == c.dtype == np.int64


def test_the_report_draws_each_spec_s_shares_on_common_bins(tmp_path) -> None:
    """Per access specification, a histogram outline per side: from 0 up to each bin's share and back to 0,
    the shares adding up to 100 %, both sides on the same bins."""
    from app.report.document import build_report
    from tests.stored_runs import AFTER, BEFORE, RunSpec, record

    with open_store(tmp_path / "r.db") as store:
        before = record(store, RunSpec(BEFORE, name="before"))
        after = record(store, RunSpec(AFTER, name="after"))
        report = build_report(store, [before], [[after]])
    charts = [c for c in report.line_charts if c.key.startswith("share-")]
    assert len(charts) == len({s.spec for s in BEFORE}) and charts[0].title.startswith(
        "Share of I/Os by response"
    )
    for chart in charts:
        assert len(chart.series) == 2
        xs = [[x for x, _v in s.points] for s in chart.series]
        assert xs[0] == xs[1]  # the same bins
        for s in chart.series:
            assert s.points[0][1] == s.points[-1][1] == 0.0
            assert sum(v for _x, v in s.points) == pytest.approx(100.0)
    # the first step's baseline: its two latencies (tests.stored_runs: the bulk at half the p99, 2 % at the p99)
    spec = BEFORE[0]
    (base, _cand) = charts[0].series
    share_at = {x: v for x, v in base.points}
    p99_bin = max(x for x in share_at if x <= spec.p99_ms)
    assert share_at[p99_bin] == pytest.approx(2.0, abs=0.05)


def test_intervals_running_long_leave_no_empty_column() -> None:
    """fio's intervals drift (1.0 to 1.1 s on a busy machine): a column per typical interval would leave
    one empty now and then, drawn as "no I/O" in the middle of a step."""
    h = sparse({BIN_VALUE[plat_val_to_idx(80_000)]: 100})
    gaps = np.tile([1.0, 1.0, 1.1], 20)  # a typical interval of 1 s, every third 0.1 s longer
    times = np.cumsum(gaps)
    m = heat_map([(float(t), h) for t in times] + [(float(t) + 100.0, h) for t in times])  # two steps
    inside = [
        (m.t_edges[:-1] >= lo) & (m.t_edges[1:] <= hi)
        for lo, hi in ((times[0], times[-1]), (times[0] + 100, times[-1] + 100))
    ]
    for cols in inside:
        assert not np.isnan(m.share_pct[cols]).any()
    between = (m.t_edges[:-1] > times[-1] + 1.2) & (m.t_edges[1:] < times[0] + 99)
    assert between.any() and np.isnan(m.share_pct[between]).all()  # between the steps: nothing
