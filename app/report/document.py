"""Everything a report shows, gathered from the store once (Qt-free); html, pdf, xlsx and csv render it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from app.analysis.compare import DEFAULT_MATCH, DEFAULT_THRESHOLD_PCT, Comparison, Side, compare
from app.analysis.compare_spread import attach_spreads
from app.analysis.iometer_import import IMPORT_TAG, is_iometer_run
from app.analysis.run_groups import load_side
from app.analysis.sweep import Sweep, find_sweeps
from app.analysis.validity import Note
from app.report.charts import (
    BarChart,
    LineChart,
    comparison_charts,
    run_charts,
    side_colors,
    small_multiples,
)
from app.report.disclosure import damaged_plan, disclosure
from app.report.facts import JobFileText, environment_table, facts_table, job_files, job_options_table
from app.report.headlines import Headlines, headlines
from app.report.latency import Distribution, distributions, pairs, percentile_table, shares, spread
from app.report.one_run import run_summary
from app.report.pts_report import PtsSection, pts_comparison, pts_sections
from app.report.summary import SummaryBlock, confidence_rule, summarize
from app.report.sweep_charts import sweep_charts
from app.report.sweep_selection import chart_note, curve_steps, per_step_rows
from app.report.tables import Table, at_a_glance_table, comparison_table, summary_table, unmatched_table
from app.report.timeline import distribution_charts, share_charts, timeline_charts
from app.report.validity_report import run_notes_of, validity_lines
from app.report.workloads import workload_tables
from app.store.database import Store
from app.store.queries import StepResults
from app.store.records import ResultRow, Run, StepInfo

PAPERS = ("A4", "Letter")


@dataclass
class ReportMeta:
    title: str = "Storage performance report"
    client: str = ""
    author: str = ""
    date: str = field(default_factory=lambda: date.today().isoformat())
    paper: str = "A4"
    labels: list[str] = field(default_factory=list)  # the baseline's, then each candidate's; "" = automatic
    company: str = ""  # the author's company (cover, header, PDF author)
    logo: str = ""  # an image file shown on the cover


@dataclass
class RunSection:
    run: Run
    label: str  # the side's label, e.g. "before"
    summary: Table
    facts: Table
    job_files: list[JobFileText]
    workloads: list[Table] = field(default_factory=list)  # sweeps, preconditioning, transfers, disks
    sweep_charts: list[LineChart] = field(default_factory=list)  # shown after the sweep table


@dataclass
class Report:
    meta: ReportMeta
    baseline: Side
    comparisons: list[Comparison]
    labels: list[str]  # the baseline's, then each candidate's
    summary: list[SummaryBlock]
    glance: Table | None
    environment: Table
    comparison_tables: list[Table]
    headline_tables: list[
        Table
    ]  # per comparison: sweep maxima, transfers, preconditioning; disks beside results
    unmatched_tables: list[Table]
    percentiles: Table
    differences: list[list[str]]  # per comparison: facts that differ between baseline and candidate
    charts: list[BarChart]
    distributions: list[Distribution]
    line_charts: list[LineChart]  # distribution, then per-second charts
    runs: list[RunSection]
    job_options: Table
    notes: list[str]  # steps without results and the like
    sweep_overlays: list[LineChart] = field(
        default_factory=list
    )  # sweeps and steady-state rounds, both sides
    disclosure: list[str] = field(default_factory=list)  # engine, sizes, fidelity, notes, what numbers mean
    validity: list[str] = field(default_factory=list)  # first in the report (report.validity_report)
    validity_notes: dict[int, list[Note]] = field(
        default_factory=dict
    )  # by run id: the CSV's validity column
    # every level's results of a step, read from the store as the data sheet and CSV are written (the runs
    # hold ALL's and the managers' only: a long run's workers and targets are most of its memory); the store
    # file stays where it is until the report's files are written. None: the steps' own results.
    step_results: Callable[[StepInfo], list[ResultRow]] | None = None
    pts: list[PtsSection] = field(default_factory=list)  # `fiometer pts` runs (report.pts_report)
    chart_note: str = ""  # which sweep steps have per-step charts (report.sweep_selection)
    pts_compare: Table | None = None  # two or more of them side by side

    @property
    def sides(self) -> list[Side]:
        return [self.baseline] + [c.candidate for c in self.comparisons]

    @property
    def subject(self) -> str:
        """What the report is about (document properties: PDF subject, workbook subject)."""
        if not self.comparisons:
            return f"Storage performance of {self.labels[0]}"
        return "Storage performance: " + ", ".join(self.labels[1:]) + f" compared with {self.labels[0]}"

    @property
    def every_chart(self) -> list[BarChart | LineChart]:
        """The charts of the Charts section, then each run's sweep curves."""
        return [
            *self.charts,
            *self.sweep_overlays,
            *self.line_charts,
            *(c for r in self.runs for c in r.sweep_charts),
            *(c for p in self.pts for c in p.charts),
        ]

    @property
    def small_charts(self) -> set[str]:
        """Keys of the charts drawn half-width, two a row (``charts.small_multiples``), wherever they stand."""
        out = small_multiples(self.line_charts) | small_multiples(self.sweep_overlays)
        for r in self.runs:
            out |= small_multiples(r.sweep_charts)
        return out

    @property
    def tables(self) -> list[Table]:
        """Every table in reading order (what the XLSX and the tables CSV hold)."""
        out = [self.glance] if self.glance else []
        out += (
            self.comparison_tables
            + self.headline_tables
            + self.unmatched_tables
            + [self.percentiles, self.environment]
        )
        out += [t for r in self.runs for t in (r.summary, *r.workloads)] + [self.job_options]
        out += [r.facts for r in self.runs]
        out += ([self.pts_compare] if self.pts_compare else []) + [
            t for p in self.pts for t in (*p.blocks, p.determination, *p.tables)
        ]
        return out


def side_tags(side: Side) -> list[str]:
    """Tags every run of the side carries (the automatic import tag aside), in the first run's order."""
    common = set.intersection(*({t.casefold() for t in r.tags} for r in side.runs)) - {IMPORT_TAG}
    return [t for t in side.runs[0].tags if t.casefold() in common]


def default_labels(sides: list[Side]) -> list[str]:
    """What the user called each side: its tags where they tell the sides apart, else a single run's name,
    else "Run 3" / "Mean of runs 4, 5, 6"."""
    tags = [", ".join(side_tags(s)) for s in sides]
    if all(tags) and len(set(t.casefold() for t in tags)) == len(tags):
        return tags
    names = [s.runs[0].name if len(s.runs) == 1 else "" for s in sides]
    return [n if n and names.count(n) == 1 else s.label for n, s in zip(names, sides, strict=True)]


def _curves(heads: list[Headlines], baseline: Side, runs: list[RunSection]) -> dict[int, list[Sweep]]:
    """Run id -> its sweeps drawn as curves: in a comparison both sides' paired sweeps, overlaid (a run whose
    every sweep is so drawn shows no curves of its own); else the run's own curves, in its section."""
    if not heads:
        first = baseline.runs[0]
        return {first.id: find_sweeps(first)} if any(r.run is first and r.sweep_charts for r in runs) else {}
    out: dict[int, list[Sweep]] = {}
    for h in heads:
        for run, sweeps in h.swept.items():
            out.setdefault(run, []).extend(sweeps)
    for r in runs:
        if r.sweep_charts and len(out.get(r.run.id, [])) >= len(find_sweeps(r.run)):
            r.sweep_charts = []
    return out


def _not_built() -> Table:
    """A table a terminal comparison does not print (``build_report(terminal=True)``)."""
    return Table("", "", [], [])


def done_reading(report: Report) -> None:
    """The writers of the long form call it when done: the connection the per-step reader opened on their
    thread is closed there."""
    if isinstance(report.step_results, StepResults):
        report.step_results.close_here()


def build_report(
    store: Store,
    baseline_ids: list[int],
    candidate_groups: list[list[int]],
    meta: ReportMeta | None = None,
    *,
    threshold_pct: float = DEFAULT_THRESHOLD_PCT,
    match: str = DEFAULT_MATCH,
    repeats: bool = True,
    include_incomplete: bool = False,
    terminal: bool = False,
) -> Report:
    """Raises RunNotFound for an unknown run id; ValueError when more labels are given than sides.
    ``terminal``: only what ``fiometer compare`` prints (the summary, validity, the comparison, headline and
    unmatched tables, the notes); the charts, the runs' own tables and the appendices are left empty, as
    their reading (every second of a long run) is most of a report's time."""
    meta = meta or ReportMeta()
    every = set(baseline_ids) | {i for g in candidate_groups for i in g}
    # the sides hold ALL's and the managers' results only: the workers' and targets' (with their
    # histograms, most of a long run's memory) are read a step at a time for the data sheet and CSV
    levels = ("all", "manager")
    baseline = load_side(
        store, baseline_ids, exclude=every - set(baseline_ids), repeats=repeats, result_levels=levels
    )
    comparisons = []
    for group in candidate_groups:
        cand = load_side(store, group, exclude=every - set(group), repeats=repeats, result_levels=levels)
        comparisons.append(
            compare(
                baseline,
                cand,
                threshold_pct=threshold_pct,
                match=match,
                include_incomplete=include_incomplete,
            )
        )
        attach_spreads(store, comparisons[-1])
    sides = [baseline] + [c.candidate for c in comparisons]
    if len(meta.labels) > len(sides):
        raise ValueError(
            f"{len(meta.labels)} labels for {len(sides)} sides (the baseline and "
            f"{len(comparisons)} compared); give one label per side"
        )
    auto = default_labels(sides)
    labels = [
        (meta.labels[i].strip() if i < len(meta.labels) and meta.labels[i].strip() else auto[i])
        for i in range(len(sides))
    ]
    by_side = {id(s): label for s, label in zip(sides, labels, strict=True)}
    seen: set[int] = set()
    runs = []
    for s in sides:
        for r in s.runs:
            if r.id not in seen:
                seen.add(r.id)
                runs.append(
                    RunSection(r, by_side[id(s)], _not_built(), _not_built(), [])
                    if terminal
                    else RunSection(
                        r,
                        by_side[id(s)],
                        summary_table(r, p99=not is_iometer_run(r)),
                        facts_table(r),
                        job_files(r),
                        workload_tables(store, r),
                        sweep_charts(r),
                    )
                )
    heads = [headlines(store, c, i, labels[0], labels[i]) for i, c in enumerate(comparisons, 1)]
    curves = _curves(heads, baseline, runs)
    unmatched = [
        t
        for i, c in enumerate(comparisons, 1)
        if (t := unmatched_table(c, i, labels[0], labels[i])) is not None
    ]
    spreads = [spread(s) for s in sides]
    matched = pairs(comparisons, baseline)
    per_step = per_step_rows(matched, curves)  # a sweep's steps: at its key loads (its curves show them all)
    drawn = curve_steps(baseline, curves)
    if terminal:
        charts, dists, line_charts = [], [], []
    else:
        if comparisons and any(c.rows for c in comparisons):
            charts = comparison_charts(comparisons, labels, spreads, drawn)
        else:
            charts = run_charts([s for s in baseline.steps if s.index not in drawn], labels[0], spreads[0])
        dists = distributions(per_step, by_side)
        colors = dict(zip(labels, side_colors(len(sides)), strict=True))
        line_charts = (
            distribution_charts(dists, colors)
            + share_charts(shares(per_step, by_side), colors)
            + timeline_charts(store, per_step, by_side, colors)
        )
    notes = [m for s in sides for m in s.missing]
    if terminal:  # (a report says it in its disclosure)
        notes += [x for r in runs for x in damaged_plan(r.run, f"Run {r.run.id} ({r.label})")]
    summary = [summarize(c, labels[0], labels[i]) for i, c in enumerate(comparisons, 1)]
    for block, head in zip(summary, heads, strict=True):
        block.headlines = head.sentences
    if not comparisons:  # a one-run report answers first too: its headline figures, its curve or sweep
        summary = [run_summary(baseline, labels[0])]
    headline_tables = [t for h in heads for t in (h.table, h.transfers, h.disks) if t is not None]
    sweep_overlays = [c for h in heads for c in h.charts]
    report = Report(
        meta,
        baseline,
        comparisons,
        labels,
        summary,
        at_a_glance_table(comparisons, labels) if comparisons else None,
        environment_table(sides, labels),
        [comparison_table(c, i, labels[0], labels[i]) for i, c in enumerate(comparisons, 1)],
        headline_tables,
        unmatched,
        _not_built() if terminal else percentile_table(matched, by_side),
        [c.differences for c in comparisons],
        charts,
        dists,
        line_charts,
        runs,
        _not_built() if terminal else job_options_table([r.run for r in runs]),
        list(dict.fromkeys(notes)),
        sweep_overlays,
        list(
            dict.fromkeys(
                [x for h in heads for x in h.layout]
                + disclosure([(r.run, r.label) for r in runs])
                + [confidence_rule(c) for c in comparisons]
            )
        ),
    )
    report.chart_note = "" if terminal else chart_note(matched, per_step, curves)
    report.step_results = StepResults(store)
    if not terminal:
        report.pts = pts_sections([(r, by_side[id(s)], i) for i, s in enumerate(sides) for r in s.runs])
        report.pts_compare = pts_comparison(report.pts)
    report.validity_notes = run_notes_of(store, report)
    report.validity = validity_lines(store, report, report.validity_notes)
    return report
