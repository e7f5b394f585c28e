"""The summary of a one-run report (Qt-free): the run's headline figures per workload, then its answers - a
`fiometer curve` run's highest load within its p99 limit, a sweep's maxima - so the first page answers the
question the run asked. Only complete measured steps feed it: preconditioning is not a result, and a stopped
or partial step is named as not judged, never taken as a figure.

"Random-4K-100%Read: 12,345 IOPS at QD 4 (48.2 MB/s; average 0.32 ms, p99 1.20 ms)."
"""

from __future__ import annotations

from app.analysis.compare import Side, all_metrics, load_text, step_key
from app.analysis.curve import curve_lines
from app.analysis.preconditioning import measured_steps
from app.analysis.sweep import find_sweeps
from app.model.metrics import Metrics
from app.model.spec_words import parse_spec_text
from app.report.summary import LARGE_TRANSFER, SummaryBlock
from app.report.tables import fmt_sig, side_title
from app.store.records import Run, StepInfo

INCOMPLETE = ("stopped", "failed", "partial", "interrupted")


def _load(step: StepInfo, run: Run | None = None) -> str:
    """ "QD 4", "QD 1, 4 workers on one device" (``run``: whose targets tell whether they are one)."""
    k = step_key(step, run)
    return load_text(k.queue_depth, k.queue_depth, k.workers, k.workers, k.targets, k.targets, k.shared)


def _large(step: StepInfo) -> bool:
    lines = [ln for lines in parse_spec_text(step_key(step).definition) or [] for ln in lines]
    return bool(lines) and max(lines, key=lambda ln: ln.of_size).size >= LARGE_TRANSFER


def _figure(step: StepInfo, m: Metrics, run: Run | None = None) -> str:
    """ "12,345 IOPS at QD 4 (48.2 MB/s; average 0.32 ms, p99 1.20 ms)" - MB/s first from 64 KiB."""
    iops, mbps = f"{fmt_sig(m.iops)} IOPS", f"{fmt_sig(m.mbps)} MB/s"
    lead, other = (mbps, iops) if _large(step) else (iops, mbps)
    lat = f"average {fmt_sig(m.lat_mean_ms)} ms"
    p99 = m.percentile_ms(99)
    if p99 is not None:
        lat += f", p99 {fmt_sig(min(p99, m.lat_max_ms) if m.lat_max_ms else p99)} ms"
    return f"{lead} at {_load(step, run)} ({other}; {lat})"


def headline_figures(run: Run) -> tuple[list[str], list[str]]:
    """(a line per workload, the steps not judged): a workload measured at several loads gives its highest
    headline figure and the loads it was measured at."""
    groups: dict[str, list[tuple[StepInfo, Metrics]]] = {}
    not_judged: list[str] = []
    for step in measured_steps(run):
        m = all_metrics(step)
        if m is None or step.status in INCOMPLETE or step.status == "skipped":
            not_judged.append(
                f"step {step.index + 1} ({step.spec_name} at {_load(step, run)}): {step.status}, "
                + ("no results" if m is None else "did not run to its end")
                + " - shown in the tables, not a headline figure"
            )
            continue
        groups.setdefault(step_key(step).what, []).append((step, m))
    lines = []
    for rows in groups.values():
        step, m = max(rows, key=lambda sm: sm[1].mbps if _large(sm[0]) else sm[1].iops)
        line = f"{step.spec_name}: {_figure(step, m, run)}"
        if len(rows) > 1:
            line += f"; the highest of {len(rows)} loads measured"
        lines.append(line + ".")
    return lines, not_judged


def run_summary(side: Side, label: str) -> SummaryBlock:
    """The summary block of a report on one run (or one group of runs: the first run's figures)."""
    run = side.runs[0]
    block = SummaryBlock(side_title(side, label))
    block.sentences, block.left_out = headline_figures(run)
    if not block.sentences:
        block.sentences = ["No measured step ran to its end: no headline figure is given (see the tables)."]
    block.headlines = [f"Curve: {s}." for s in curve_lines(run)]
    if not block.headlines:  # a curve's steps are a sweep too: its answer says it
        block.headlines = [s + "." for sw in find_sweeps(run) for s in sw.summary()[:2]]
    block.noise = "Figures as measured in this run; a comparison with another run judges change and noise."
    return block
