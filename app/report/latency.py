"""Response-time detail per access specification and side (Qt-free): the percentile table (p50 ... p99.99 and
the maximum, from the stored latency histograms by fio's own rule), the distribution of response times
(cumulative, and the share of I/Os per latency bin; sides overlaid) and the spread of a side's repeated runs
(for error bars).

A side that is a group of runs shows the mean of its runs' percentiles, as the comparison does for p99.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from app.analysis.compare import (
    Comparison,
    Side,
    StepKey,
    StepValues,
    all_metrics,
    build_side,
    load_text,
    percentile_within_max,
    step_key,
)
from app.analysis.latency_distribution import common_edges, counts_of, step_histogram
from app.model.metrics import Metrics, merge_hist
from app.report.tables import Cell, Column, Row, Table, metric, num
from app.store.records import Run, StepInfo

PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)


def pct_name(p: float) -> str:
    return f"p{p:g}"


Occurrence = tuple[StepKey, int]


def run_steps(run: Run) -> dict[Occurrence, StepInfo]:
    """A run's steps with results by (step key, n-th step with that key): how compare identifies a side's
    steps, so a compared step can be found in each run of a group."""
    out: dict[Occurrence, StepInfo] = {}
    seen: dict[StepKey, int] = {}
    for step in run.steps:
        if all_metrics(step) is None:
            continue
        key = step_key(step)
        out[(key, seen.get(key, 0))] = step
        seen[key] = seen.get(key, 0) + 1
    return out


def side_steps(side: Side, step: StepValues) -> list[StepInfo]:
    """The step in each of the side's runs that ``step`` (the side's mean) is made of."""
    return [s for r in side.runs if (s := run_steps(r).get((step.key, step.occurrence))) is not None]


def side_metrics(side: Side, step: StepValues) -> list[Metrics]:
    """The ALL metrics of each of the side's runs for one of its steps."""
    return [m for s in side_steps(side, step) if (m := all_metrics(s)) is not None]


def percentiles(parts: list[Metrics]) -> dict[str, float | None]:
    """p50 ... p99.99 and max in ms, each the mean over the runs given."""
    out: dict[str, float | None] = {}
    for p in PERCENTILES:
        vals = [v for m in parts if (v := percentile_within_max(m, m.percentile_ms(p))) is not None]
        out[pct_name(p)] = statistics.fmean(vals) if vals and len(vals) == len(parts) else None
    out["max"] = statistics.fmean(m.lat_max_ms for m in parts) if parts else None
    return out


def spread(side: Side) -> dict[Occurrence, dict[str, tuple[float, float]]]:
    """Per step and metric: the lowest and highest value among the side's runs (only for a group)."""
    if len(side.runs) < 2:
        return {}
    per_run = [{(s.key, s.occurrence): s.values for s in build_side([r]).steps} for r in side.runs]
    out: dict[Occurrence, dict[str, tuple[float, float]]] = {}
    for s in side.steps:
        k = (s.key, s.occurrence)
        for metric_key in s.values:
            vals = [v for run in per_run if (v := run.get(k, {}).get(metric_key)) is not None]
            if len(vals) > 1:
                out.setdefault(k, {})[metric_key] = (min(vals), max(vals))
    return out


@dataclass
class Distribution:
    """Per side, one spec: the cumulative share of I/Os (0..100 %) completed within each latency bucket (ms),
    or the share of I/Os in each latency bin (``shares``)."""

    key: str
    title: str
    series: list[tuple[str, list[tuple[float, float]]]]  # (side label, [(ms, %)])


def cumulative(parts: list[Metrics]) -> list[tuple[float, float]]:
    hist: dict[int, int] = {}
    for m in parts:
        merge_hist(hist, m.read_hist)
        merge_hist(hist, m.write_hist)
    total = sum(hist.values())
    if not total:
        return []
    acc, out = 0, []
    keys = sorted(hist)
    for i, ns in enumerate(keys):
        acc += hist[ns]
        share = acc * 100.0 / total
        # fio has up to ~1,800 buckets: keep a point per 0.2 % step of the curve, every point of the tail
        # (above 99 %) and the last, so a chart stays small and its shape exact where it matters
        if not out or share - out[-1][1] >= 0.2 or share >= 99.0 or i == len(keys) - 1:
            out.append((ns / 1e6, share))
    return out


def pairs(comparisons: list[Comparison], baseline: Side) -> list[tuple[str, list[tuple[Side, StepValues]]]]:
    """Per access specification and load (baseline order), labelled "spec, QD 4" (every table group and
    chart title made from them carries its load): the step of each side, matched as the comparison matched;
    then the steps only a candidate has, on their own."""
    out = []
    for b in baseline.steps:
        sides: list[tuple[Side, StepValues]] = [(baseline, b)]
        load = _own_load(b)
        for c in comparisons:
            row = next((r for r in c.rows if r.baseline is b), None)
            if row is not None:
                sides.append((c.candidate, row.candidate))
                load = row.load if load == _own_load(b) else load  # "QD 64 -> 8" where the first pair differs
        out.append((f"{b.key.spec}, {load}", sides))
    for c in comparisons:
        out += [(f"{s.key.spec}, {_own_load(s)}", [(c.candidate, s)]) for s in c.only_candidate]
    return out


def _own_load(s: StepValues) -> str:
    """One step's load as the tables name it: "QD 4", "QD 4, 6 workers"."""
    k = s.key
    return load_text(k.queue_depth, k.queue_depth, k.workers, k.workers, k.targets, k.targets, k.shared)


def percentile_table(rows: list[tuple[str, list[tuple[Side, StepValues]]]], labels: dict[int, str]) -> Table:
    """``labels``: id(side) -> its label."""
    cols = (
        [Column("Side")]
        + [Column(f"{pct_name(p)} ms", True) for p in PERCENTILES]
        + [Column("Max ms", True), Column("Runs", True)]
    )
    out = []
    for spec, sides in rows:
        for side, step in sides:
            parts = side_metrics(side, step)
            v = percentiles(parts)
            cells = [Cell(labels[id(side)], labels[id(side)])]
            cells += [metric(v[pct_name(p)]) for p in PERCENTILES] + [metric(v["max"]), num(len(parts), 0)]
            out.append(Row(cells, spec))
    notes = [
        "Response time (submit to completion) percentiles from fio's latency histograms, by fio's rule (the "
        "first bucket holding the given share of I/Os, reads and writes together); where a side is several "
        "runs, the mean of their values."
    ]
    return Table(
        "percentiles", "Response time percentiles", cols, out, notes, group_title="Access specification"
    )


def distributions(
    rows: list[tuple[str, list[tuple[Side, StepValues]]]], labels: dict[int, str]
) -> list[Distribution]:
    out = []
    for i, (spec, sides) in enumerate(rows, 1):
        series = [
            (labels[id(side)], pts) for side, step in sides if (pts := cumulative(side_metrics(side, step)))
        ]
        if series:
            out.append(Distribution(f"dist-{i}", f"Response time distribution: {spec}", series))
    return out


SHARE_BINS = 60  # latency bins of a report's histogram (equal logarithmic width)


def shares(
    rows: list[tuple[str, list[tuple[Side, StepValues]]]], labels: dict[int, str]
) -> list[Distribution]:
    """Per access specification: the share of each side's I/Os per latency bin, the same bins for every side
    (``analysis.latency_distribution``), as a step outline: [(bin's lower edge ms, %)], from 0 and back to 0 at
    the last bin's upper edge."""
    out = []
    for i, (spec, sides) in enumerate(rows, 1):
        counts = [
            (
                labels[id(side)],
                counts_of(h for m in side_metrics(side, step) for h in (m.read_hist, m.write_hist)),
            )
            for side, step in sides
        ]
        edges = common_edges([c for _label, c in counts], SHARE_BINS)
        if edges is None:
            continue
        ms = (edges / 1e6).tolist()
        series = [
            (label, [(ms[0], 0.0), *zip(ms[:-1], h.share_pct.tolist(), strict=True), (ms[-1], 0.0)])
            for label, c in counts
            if (h := step_histogram(c, edges=edges)) is not None
        ]
        out.append(Distribution(f"share-{i}", f"Share of I/Os by response time: {spec}", series))
    return out
