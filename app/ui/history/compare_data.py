"""What the comparison view shows, read on a store task thread (Qt-free): the report the CLI would build
(``fiometer compare`` / ``report``) and each run's samples per matched step, for the over-time overlay."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.analysis.compare import DEFAULT_THRESHOLD_PCT
from app.analysis.run_groups import repeat_tags
from app.report.charts import run_color
from app.report.document import Report, ReportMeta, build_report
from app.store import Run, RunListing, Store, step_samples
from app.ui.history.stored_series import OverlayPart, ReplaySample


@dataclass(frozen=True)
class CompareRequest:
    baseline: list[int]
    candidates: list[list[int]]
    threshold_pct: float = DEFAULT_THRESHOLD_PCT
    match: str = "auto"  # auto | exact | spec
    repeats: bool = True  # look for repeats (same plan and tags) to measure noise

    @property
    def run_ids(self) -> list[int]:
        return [*self.baseline, *(i for g in self.candidates for i in g)]


def repeat_key(run: RunListing) -> tuple:
    """What makes runs repeats of one measurement: the same plan and the same tags; () for an untagged run."""
    tags = repeat_tags(run)
    return (run.plan_sha256, tuple(sorted(tags))) if tags else ()


def repeat_groups(ids: list[int], keys: dict[int, tuple]) -> list[list[int]]:
    """The runs as sides: runs sharing a key (plan and tags, ``run_groups.repeat_tags``) are one group of
    repeats, in the order of their first run; runs without a key (untagged) stand alone."""
    groups: dict[object, list[int]] = {}
    for i in ids:
        key = keys.get(i)
        groups.setdefault(key if key else ("run", i), []).append(i)
    return list(groups.values())


@dataclass
class ComparisonData:
    request: CompareRequest
    report: Report
    segments: list[tuple[str, list[OverlayPart]]] = field(default_factory=list)


def _samples(store: Store, run: Run, index: int) -> list[ReplaySample]:
    step = next((s for s in run.steps if s.index == index), None)
    if step is None:
        return []
    inter = step_samples(store, step.id, "all", "ALL", "interval")
    whole = dict(step_samples(store, step.id, "all", "ALL", "whole"))
    return [
        ReplaySample("all", None, "ALL", t, m, whole.get(t, m), final=i == len(inter) - 1)
        for i, (t, m) in enumerate(inter)
    ]


def load_comparison(store: Store, req: CompareRequest, meta: ReportMeta | None = None) -> ComparisonData:
    """RunNotFound (a StoreError) when a run was deleted meanwhile."""
    report = build_report(
        store,
        req.baseline,
        req.candidates,
        meta or ReportMeta(),
        threshold_pct=req.threshold_pct,
        match=req.match,
        repeats=req.repeats,
    )
    data = ComparisonData(req, report)
    base = report.baseline
    matched = [s for s in base.steps if any(r.baseline is s for c in report.comparisons for r in c.rows)]
    for n, s in enumerate(matched, 1):
        # a group is drawn by its first run: the overlay shows how the numbers behaved, the table the means
        parts = [
            OverlayPart(
                f"Run {base.runs[0].id} (baseline)", _samples(store, base.runs[0], s.index), run_color(0)
            )
        ]
        for side, c in enumerate(report.comparisons, 1):
            row = next((r for r in c.rows if r.baseline is s), None)
            if row is not None:
                cand = c.candidate.runs[0]
                parts.append(
                    OverlayPart(f"Run {cand.id}", _samples(store, cand, row.candidate.index), run_color(side))
                )
        if any(p.samples for p in parts):
            data.segments.append((f"{n}: {s.key.spec}", parts))
    return data
