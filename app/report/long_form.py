"""Every stored result of the report's runs as one tidy table (Qt-free): a row per run, step, level, name and
metric, so a spreadsheet or a data frame loads it in one step (the CSV and the workbook's ``data`` sheet).

Each row carries its load (queue depth, workers, targets), what the step was (``phase``: measured, or the
preconditioning fill or steady-state step, which are not results) and how it ended (``step_status``: a
stopped or failed step's numbers are partial). A metric that does not apply (read response time of a
write-only step) has an empty value, never 0. ``validity`` names the run's validity notes (app.analysis.validity)
that concern the row's step and manager ("Cache; Not steady"), empty when none."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from app.analysis.compare import percentile_within_max
from app.analysis.preconditioning import phases
from app.analysis.samples_export import LEVEL_ORDER, display_names
from app.analysis.validity import Note
from app.model.metrics import Metrics
from app.report.latency import PERCENTILES, pct_name
from app.store.records import ResultRow, Run, StepInfo

COLUMNS = (
    "run",
    "label",
    "step",
    "spec",
    "queue_depth",
    "level",
    "manager",
    "name",
    "metric",
    "value",
    "unit",
    "workers",
    "targets",
    "phase",
    "step_status",
    "validity",
)
# metric name prefix -> the direction it needs I/O of to apply
APPLIES = {"read_": "read_ios", "write_": "write_ios"}

METRICS: tuple[tuple[str, str, Callable[[Metrics], float | None]], ...] = (
    ("iops", "IOPS", lambda m: m.iops),
    ("read_iops", "IOPS", lambda m: m.read_iops),
    ("write_iops", "IOPS", lambda m: m.write_iops),
    ("mbps", "MB/s", lambda m: m.mbps),
    ("read_mbps", "MB/s", lambda m: m.read_mbps),
    ("write_mbps", "MB/s", lambda m: m.write_mbps),
    ("lat_mean", "ms", lambda m: m.lat_mean_ms),
    ("read_lat_mean", "ms", lambda m: m.read_lat_mean_ms),
    ("write_lat_mean", "ms", lambda m: m.write_lat_mean_ms),
    ("lat_max", "ms", lambda m: m.lat_max_ms),
    *((f"lat_{pct_name(p)}", "ms", lambda m, p=p: m.percentile_ms(p)) for p in PERCENTILES),
    ("errors", "count", lambda m: m.errors),
)
PERCENTILE_METRICS = tuple(f"lat_{pct_name(p)}" for p in PERCENTILES)  # long_rows takes them at once


def validity_of(notes: Sequence[Note], step: int, manager: str | None) -> str:
    """The titles of the notes about this step (or the whole run) and manager, once each: "Cache; Not steady"."""
    return "; ".join(
        dict.fromkeys(
            n.title
            for n in notes
            if n.step in (None, step) and (n.manager is None or manager in (None, n.manager))
        )
    )


def long_rows(
    runs: list[tuple[Run, str]],
    notes: Mapping[int, Sequence[Note]] | None = None,
    results_of: Callable[[StepInfo], list[ResultRow]] | None = None,
) -> Iterator[tuple]:
    """Rows of ``COLUMNS``: run id, label, step number, spec, queue depth, level, manager, name, metric, value
    (None where the metric does not apply), unit, workers, targets, phase, step status, validity notes.
    ``results_of`` reads a step's results of every level (a report's runs hold ALL's and the managers');
    without it, each step's own are used."""
    for run, label in runs:
        run_notes = (notes or {}).get(run.id, ())
        names = display_names(run)
        phase = phases(run)
        for s in run.steps:
            results = sorted(
                s.results if results_of is None else results_of(s),
                key=lambda r: (LEVEL_ORDER.get(r.level, 9), r.manager or "", r.key),
            )
            load = (len(s.active_workers), len(s.active_targets), phase.get(s.index, "measure"), s.status)
            for r in results:
                name = names.get((r.level, r.manager, r.key), r.key)
                pcts = dict(zip(PERCENTILE_METRICS, r.metrics.percentiles_ms(PERCENTILES), strict=True))
                for metric, unit, get in METRICS:
                    applies = next(
                        (getattr(r.metrics, n) for p, n in APPLIES.items() if metric.startswith(p)), 1
                    )
                    v = (pcts[metric] if metric in pcts else get(r.metrics)) if applies else None
                    if metric.startswith("lat_p"):
                        v = percentile_within_max(r.metrics, v)
                    if v is None and applies:
                        continue
                    yield (
                        run.id,
                        label,
                        s.index + 1,
                        s.spec_name,
                        s.queue_depth,
                        r.level,
                        r.manager or "",
                        name,
                        metric,
                        v,
                        unit,
                        *load,
                        validity_of(run_notes, s.index, r.manager),
                    )
