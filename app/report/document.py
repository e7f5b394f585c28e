"""Everything a report shows, gathered from the store once (Qt-free); html, pdf, xlsx and csv render it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from app.analysis.compare import DEFAULT_THRESHOLD_PCT, Comparison, Side, compare
from app.analysis.iometer_import import is_iometer_run
from app.analysis.run_groups import load_side
from app.report.charts import BarChart, comparison_charts, run_charts, side_label
from app.report.facts import JobFile, facts_table, job_files
from app.report.tables import Table, at_a_glance_table, comparison_table, summary_table, unmatched_table
from app.store.database import Store
from app.store.records import Run

PAPERS = ("A4", "Letter")


@dataclass
class ReportMeta:
    title: str = "Storage performance report"
    client: str = ""
    author: str = ""
    date: str = field(default_factory=lambda: date.today().isoformat())
    paper: str = "A4"


@dataclass
class RunSection:
    run: Run
    summary: Table
    facts: Table
    job_files: list[JobFile]


@dataclass
class Report:
    meta: ReportMeta
    baseline: Side
    comparisons: list[Comparison]
    glance: Table | None
    comparison_tables: list[Table]
    unmatched_tables: list[Table]
    differences: list[list[str]]  # per comparison: facts that differ between baseline and candidate
    charts: list[BarChart]
    runs: list[RunSection]
    notes: list[str]  # steps without results and the like

    @property
    def tables(self) -> list[Table]:
        """Every table in reading order (what CSV and XLSX hold)."""
        out = [self.glance] if self.glance else []
        out += self.comparison_tables + self.unmatched_tables
        out += [t for r in self.runs for t in (r.summary, r.facts)]
        return out


def build_report(store: Store, baseline_ids: list[int], candidate_groups: list[list[int]],
                 meta: ReportMeta | None = None, *, threshold_pct: float = DEFAULT_THRESHOLD_PCT,
                 match: str = "exact", repeats: bool = True) -> Report:
    """Raises RunNotFound for an unknown run id."""
    meta = meta or ReportMeta()
    every = set(baseline_ids) | {i for g in candidate_groups for i in g}
    baseline = load_side(store, baseline_ids, exclude=every - set(baseline_ids), repeats=repeats)
    comparisons = []
    for group in candidate_groups:
        cand = load_side(store, group, exclude=every - set(group), repeats=repeats)
        comparisons.append(compare(baseline, cand, threshold_pct=threshold_pct, match=match))
    sides = [baseline] + [c.candidate for c in comparisons]
    seen: set[int] = set()
    runs = []
    for s in sides:
        for r in s.runs:
            if r.id not in seen:
                seen.add(r.id)
                runs.append(RunSection(r, summary_table(r, p99=not is_iometer_run(r)), facts_table(r), job_files(r)))
    unmatched = [t for i, c in enumerate(comparisons, 1) if (t := unmatched_table(c, i)) is not None]
    charts = comparison_charts(comparisons) if comparisons and any(c.rows for c in comparisons) else \
        run_charts(baseline.steps, side_label(baseline))
    notes = [m for s in sides for m in s.missing]
    return Report(meta, baseline, comparisons, at_a_glance_table(comparisons) if comparisons else None,
                  [comparison_table(c, i) for i, c in enumerate(comparisons, 1)], unmatched,
                  [c.differences for c in comparisons], charts, runs, list(dict.fromkeys(notes)))
