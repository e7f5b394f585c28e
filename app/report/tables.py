"""The report's tables as plain rows of cells (Qt-free): every output format renders these same tables.

A cell keeps its raw value (for spreadsheets) and its display text (for HTML and PDF), and a comparison
cell carries its verdict mark ("better" / "worse"); changes within noise carry none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from app.analysis.compare import METRICS, Comparison, MetricDef, Side, StepValues, all_metrics
from app.analysis.preconditioning import phases
from app.store.records import Run

PHASE_WORDS = {"fill": "fill (preconditioning)", "steady": "steady-state step (preconditioning)"}

MINUS = "\u2212"  # a real minus sign lines up with "+" in proportional and tabular digits


@dataclass
class Cell:
    text: str
    value: float | str | None = None  # None: empty in a spreadsheet
    mark: str | None = None  # "better" | "worse"
    number_format: str = ""  # Excel format code for numeric values, e.g. "#,##0.00"


@dataclass
class Column:
    title: str
    numeric: bool = False


@dataclass
class Row:
    cells: list[Cell]
    group: str = ""  # e.g. the metric: HTML and PDF show a heading row where it changes
    group_value: str = ""  # the group as a spreadsheet column holds it (shorter); default: group


@dataclass
class Table:
    key: str
    title: str
    columns: list[Column]
    rows: list[Row]
    notes: list[str] = field(default_factory=list)
    group_title: str = "Metric"  # what Row.group is, as a column title where groups become a column

    def column(self, title: str) -> int:
        return [c.title for c in self.columns].index(title)


# --- number formatting ----------------------------------------------------------------------------
# One rule for every measured number in every table, chart and sentence: three significant digits, and values
# of 100 or more as whole numbers (12,345 IOPS; 337 MB/s; 8.64 ms; 0.212 ms). Percentages: one decimal.
SIGNIFICANT = 3
MAX_DECIMALS = 6


def sig_decimals(v: float | None) -> int:
    """Decimals that show ``v`` with three significant digits (none at 100 and above)."""
    if v is None or not v or (isinstance(v, float) and not math.isfinite(v)):
        return 0
    return max(0, min(MAX_DECIMALS, SIGNIFICANT - 1 - math.floor(math.log10(abs(v)))))


def fmt_sig(v: float | None, sign: bool = False) -> str:
    return fmt(v, sig_decimals(v), sign)


def fmt(v: float | None, digits: int, sign: bool = False) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "\u2013"  # en dash: no value
    text = f"{abs(v):,.{digits}f}"
    if float(text.replace(",", "")) == 0:
        return text
    if v < 0:
        return MINUS + text
    return ("+" if sign else "") + text


def excel_format(digits: int, sign: bool = False) -> str:
    base = "#,##0" + ("." + "0" * digits if digits else "")
    return f"+{base};-{base};0" if sign else base


def num(v: float | None, digits: int, sign: bool = False) -> Cell:
    return Cell(fmt(v, digits, sign), v, None, excel_format(digits, sign) if v is not None else "")


def pct_cell(v: float | None, mark: str | None = None) -> Cell:
    if v is None:
        return Cell("\u2013", None, mark)
    text = f"{abs(v):,.1f} %"
    if round(abs(v), 1):
        text = (MINUS if v < 0 else "+") + text
    return Cell(text, v / 100, mark, "+0.0%;-0.0%;0.0%")


def metric(v: float | None, sign: bool = False) -> Cell:
    """A measured number by the report's one rule (see ``sig_decimals``)."""
    return num(v, sig_decimals(v), sign)


def chart_label(d: MetricDef) -> str:
    return d.label if d.unit in (d.label, "IOPS") else f"{d.label} ({d.unit})"


def metric_heading(d: MetricDef) -> str:
    unit = f", {d.unit}" if d.unit not in ("IOPS", d.label) else ""
    return f"{d.label}{unit} ({'higher' if d.higher_is_better else 'lower'} is better)"


def run_label(run: Run) -> str:
    return f"Run {run.id}" + (f" \u201c{run.name}\u201d" if run.name else "")


def side_title(side: Side, label: str) -> str:
    """A side's label with the runs it stands for: "after (runs 4, 5, 6)", "Run 3" (already says it)."""
    if label == side.label:
        return label
    ids = side.ids
    return f"{label} (run {ids[0]})" if len(ids) == 1 else f"{label} (runs {', '.join(map(str, ids))})"


# --- tables ---------------------------------------------------------------------------------------
def summary_table(run: Run, p99: bool = True) -> Table:
    """A run's headline numbers per measured step (ALL level): preconditioning steps (fill, steady state) are
    not results; they are listed in the run's preconditioning table and named there by their phase."""

    phase = phases(run)
    steps = [(s, all_metrics(s)) for s in run.steps if phase.get(s.index, "measure") == "measure"]
    apart = [s for s in run.steps if phase.get(s.index, "measure") != "measure"]
    cols = [
        Column("Step", True),
        Column("Access specification"),
        Column("QD", True),
        Column("Workers", True),
        Column("Targets", True),
    ]
    metric_defs = [d for d in METRICS if p99 or d.key != "p99_ms"]
    cols += [Column(d.short, True) for d in metric_defs]
    cols.append(Column("Errors", True))
    rows = []
    for s, m in steps:
        cells = [
            num(s.index + 1, 0),
            Cell(s.spec_name, s.spec_name),
            num(s.queue_depth, 0) if s.queue_depth is not None else Cell("\u2013"),
            num(len(s.active_workers), 0),
            num(len(s.active_targets), 0),
        ]
        if m is None:
            cells += [Cell("\u2013") for _ in metric_defs] + [Cell(s.status, s.status)]
        else:
            cells += [metric(d.value(m)) for d in metric_defs] + [num(m.errors, 0)]
        rows.append(Row(cells))
    notes = [
        "Avg, Max and p99: response time (submit to completion), average, maximum and 99th percentile, "
        "in milliseconds. MB/s is decimal (1 MB = 10\u2076 bytes)."
    ]
    if not p99:
        notes.append("p99 is not shown: Iometer records response times only in 21 coarse bins.")
    if apart:
        which = ", ".join(f"{s.index + 1} ({PHASE_WORDS.get(phase[s.index], phase[s.index])})" for s in apart)
        notes.append(
            f"Step{'s' if len(apart) > 1 else ''} {which} prepared the storage and "
            f"{'are' if len(apart) > 1 else 'is'} not a result: see \u201cRun {run.id} \u2014 preconditioning\u201d."
        )
    return Table(f"summary-{run.id}", f"{run_label(run)} \u2014 results per step", cols, rows, notes)


def _ids(runs: list[Run]) -> str:
    ids = [str(r.id) for r in runs]
    return f"{len(ids)} runs (" + (", ".join(ids) if len(ids) <= 6 else ", ".join(ids[:5]) + ", \u2026") + ")"


def comparison_table(c: Comparison, number: int, base_label: str = "", cand_label: str = "") -> Table:
    """Shaped like the hand-made before/after table: per metric, a row per access specification with
    baseline | candidate | change | change %, better/worse marked outside the noise threshold."""
    show_noise = c.noise_from_repeats
    base_label, cand_label = base_label or c.baseline.label, cand_label or c.candidate.label
    cols = [Column("Access specification"), Column("Load")]
    cols += [
        Column(base_label, True),
        Column(cand_label, True),
        Column("Change", True),
        Column("Change %", True),
    ]
    if show_noise:
        cols.append(Column("Noise \u00b1", True))
    cols.append(Column("Verdict"))
    rows = []
    for d in METRICS:
        values = [v for r in c.rows for v in (r.changes[d.key].baseline, r.changes[d.key].candidate)]
        if c.rows and all(v is None for v in values):
            continue
        for r in c.rows:
            ch = r.changes[d.key]
            mark = ch.verdict if ch.verdict in ("better", "worse") else None
            other = [x for x in r.differs if x.startswith("named ")]
            spec = r.spec + (f" ({'; '.join(other)})" if other else "")
            cells = [Cell(spec, spec), Cell(r.load, r.load)]
            cells += [
                metric(ch.baseline),
                metric(ch.candidate),
                metric(ch.change, sign=True),
                pct_cell(ch.change_pct, mark),
            ]
            if show_noise:
                cells.append(Cell(f"{ch.threshold_pct:.1f} %", ch.threshold_pct / 100, None, "0.0%"))
            verdict = {"better": "better", "worse": "worse", "n/a": "n/a"}.get(ch.verdict, "")
            if r.incomplete:
                verdict = "; ".join(
                    x.replace("the baseline", base_label).replace("the candidate", cand_label)
                    for x in r.incomplete
                ) + (" (judged on request)" if verdict else ", not judged")
            cells.append(Cell(verdict, verdict, mark))
            rows.append(Row(cells, metric_heading(d), chart_label(d)))
    notes = []
    if not c.rows:
        notes.append(
            "No steps in common: nothing to compare (see \u201cNot compared\u201d). Steps are matched by "
            "access specification definition"
            + ("." if c.match == "spec" else ", queue depth and target set.")
        )
    elif not show_noise:
        notes.append(
            f"Changes within \u00b1{c.threshold_pct:g} % are treated as run-to-run noise and not marked."
        )
    else:
        reps = ", ".join(
            f"{label}: {_ids(s.repeats)}"
            for s, label in ((c.baseline, base_label), (c.candidate, cand_label))
            if s.repeats
        )
        notes.append(
            f"Noise threshold per row: twice the larger coefficient of variation of repeated runs "
            f"({reps}); where a side has no repeats, \u00b1{c.threshold_pct:g} %."
        )
    if any(r.incomplete for r in c.rows):
        notes.append(
            "A step that did not run to its end (stopped, failed) is shown but not judged"
            + (" (judged here on request)." if c.include_incomplete else ".")
        )
    if c.match != "exact" and any("\u2192" in r.load for r in c.rows):
        notes.append(
            "Steps are paired by access specification definition and place in the sequence; Load shows "
            "where queue depth, workers or targets differ."
        )
    title = f"{side_title(c.candidate, cand_label)} compared with {side_title(c.baseline, base_label)}"
    return Table(f"compare-{number}", title, cols, rows, notes)


def at_a_glance_table(comparisons: list[Comparison], labels: list[str] | None = None) -> Table:
    """Per comparison and metric: how many access specifications got better, worse, or stayed within noise."""
    cols = [
        Column("Metric"),
        Column("Better", True),
        Column("Worse", True),
        Column("Within noise", True),
        Column("Largest change", True),
    ]
    rows = []
    labels = labels or [comparisons[0].baseline.label] + [c.candidate.label for c in comparisons]
    for i, c in enumerate(comparisons, 1):
        label = f"{labels[i]} compared with {labels[0]}"
        for d in METRICS:
            # a stopped or partial step is not judged (verdict "incomplete"): it neither counts nor is the
            # largest change
            changes = [
                r.changes[d.key] for r in c.rows if r.changes[d.key].verdict in ("better", "worse", "same")
            ]
            if not changes:
                continue
            count = {v: sum(ch.verdict == v for ch in changes) for v in ("better", "worse", "same")}
            big = max(changes, key=lambda ch: abs(ch.change_pct or 0))
            mark = big.verdict if big.verdict in ("better", "worse") else None
            rows.append(
                Row(
                    [
                        Cell(d.label, d.label),
                        num(count["better"], 0),
                        num(count["worse"], 0),
                        num(count["same"], 0),
                        pct_cell(big.change_pct, mark),
                    ],
                    label,
                )
            )
    return Table(
        "at-a-glance",
        "At a glance",
        cols,
        rows,
        ["Counts of access specifications; \u201cwithin noise\u201d changes are not marked anywhere."],
        group_title="Comparison",
    )


def _step_row(side: str, s: StepValues, why: str) -> Row:
    v = s.values
    return Row(
        [
            Cell(side, side),
            num(s.index + 1, 0),
            Cell(s.key.spec, s.key.spec),
            Cell(s.key.describe(), s.key.describe()),
            metric(v["iops"]),
            metric(v["mbps"]),
            metric(v["lat_mean_ms"]),
            Cell(why, why),
        ]
    )


def unmatched_table(c: Comparison, number: int, base_label: str = "", cand_label: str = "") -> Table | None:
    if not c.only_baseline and not c.only_candidate:
        return None
    cols = [
        Column("Only in"),
        Column("Step", True),
        Column("Access specification"),
        Column("Load"),
        Column("IOPS", True),
        Column("MB/s", True),
        Column("Avg ms", True),
        Column("Why"),
    ]
    base_label, cand_label = base_label or c.baseline.label, cand_label or c.candidate.label
    rows = [_step_row(base_label, s, c.why_not_compared(s)) for s in c.only_baseline]
    rows += [_step_row(cand_label, s, c.why_not_compared(s)) for s in c.only_candidate]
    notes = [
        "Steps are matched by what they do: the access specification's lines (not its name), the queue "
        "depth and the numbers of workers and targets; these have no counterpart and are not compared."
    ]
    if c.load_differs:
        notes.append(
            "Some differ only in queue depth or target set: --match auto (fiometer report or compare; "
            "the default) pairs steps by access specification and place in the sequence."
        )
    return Table(
        f"unmatched-{number}",
        f"Not compared: {side_title(c.candidate, cand_label)} and {side_title(c.baseline, base_label)}",
        cols,
        rows,
        notes,
    )
