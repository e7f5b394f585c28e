"""A stored `fiometer curve` run read back: per access spec, the highest load whose p99 kept the limit, the steps
the search measured and the confirming one — as a sentence ("8k random 70 % read: 38,400 IOPS at QD 12 with
p99 4.8 ms ≤ 5 ms") and a table (load, IOPS, MB/s, p99, step)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.engine.sampling.telemetry import ALL_KEY
from app.store.records import Run, StepInfo
from app.store.run_extras import CURVE, extra


@dataclass(frozen=True)
class CurvePoint:
    step: int  # 0-based step index in the run
    load: int
    iops: float
    mbps: float
    p99_ms: float | None
    confirm: bool = False

    def keeps(self, limit_ms: float) -> bool:
        return self.p99_ms is not None and self.p99_ms <= limit_ms


@dataclass
class SpecCurveResult:
    label: str
    dimension: str  # "queue depth" | "workers"
    p99_max_ms: float
    metric: str  # "iops" | "mbps": the figure the sentence leads with
    points: list[CurvePoint] = field(default_factory=list)  # in the order measured
    answer_load: int | None = None
    bracket: tuple[int | None, int | None] = (None, None)

    @property
    def steps_measured(self) -> int:
        return sum(not p.confirm for p in self.points)

    @property
    def answer(self) -> CurvePoint | None:
        return next((p for p in self.points if p.load == self.answer_load and not p.confirm), None)

    @property
    def confirmation(self) -> CurvePoint | None:
        return next((p for p in self.points if p.confirm), None)

    def load_words(self, load: int) -> str:
        return f"QD {load}" if self.dimension == "queue depth" else f"{load} worker{'s' if load != 1 else ''}"

    def sentence(self) -> str:
        limit = f"{self.p99_max_ms:g} ms"
        a = self.answer
        if a is None:
            lowest = min(self.points, key=lambda p: p.load, default=None)
            got = (
                f" (p99 {lowest.p99_ms:.3g} ms at {self.load_words(lowest.load)})"
                if lowest and lowest.p99_ms is not None
                else ""
            )
            return f"{self.label}: no load kept p99 ≤ {limit}{got}; {self.steps_measured} steps measured"
        lead = f"{a.iops:,.0f} IOPS" if self.metric == "iops" else f"{a.mbps:,.1f} MB/s"
        c = self.confirmation
        confirm = (
            ""
            if c is None
            else (
                f"; confirmed: p99 {c.p99_ms:.3g} ms"
                if c.keeps(self.p99_max_ms)
                else f"; NOT confirmed: the repeat measured p99 {c.p99_ms if c.p99_ms is not None else float('nan'):.3g} "
                f"ms > {limit} (the knee is noisy here; run longer steps)"
            )
        )
        nxt = self.bracket[1]
        above = f", {self.load_words(nxt)} broke it" if nxt is not None else ", the highest load tried"
        return (
            f"{self.label}: {lead} at {self.load_words(a.load)} with p99 {a.p99_ms:.3g} ms ≤ {limit}"
            f"{above} ({self.steps_measured} steps measured{confirm})"
        )


def _all(step: StepInfo):
    return next((r.metrics for r in step.results if r.level == "all" and r.key == ALL_KEY), None)


def _load(step: StepInfo, dimension: str) -> int:
    if dimension == "workers":
        return len(step.active_workers)
    return int(step.queue_depth or 0)


def curve_of(run: Run) -> list[SpecCurveResult]:
    """The run's curve results, one per access spec; empty for a run that was not a curve."""
    info: Any = extra(run, CURVE)
    if not isinstance(info, dict):
        return []
    by_index = {s.index: s for s in run.steps}
    out = []
    for spec in info.get("specs") or []:
        result = SpecCurveResult(
            str(spec.get("label", "")),
            str(info.get("dimension", "queue depth")),
            float(info.get("p99_max_ms") or 0),
            str(info.get("metric", "iops")),
            answer_load=spec.get("answer_load"),
            bracket=tuple(spec.get("bracket") or (None, None)),
        )
        confirm = spec.get("confirm_step")
        for idx in spec.get("steps") or []:
            step = by_index.get(idx)
            m = _all(step) if step is not None else None
            if step is None or m is None:
                continue
            result.points.append(
                CurvePoint(
                    idx, _load(step, result.dimension), m.iops, m.mbps, m.percentile_ms(99), idx == confirm
                )
            )
        out.append(result)
    return out


def table_rows(result: SpecCurveResult) -> list[list[str]]:
    """Load, IOPS, MB/s, p99 ms, within the limit, step — by load, the confirming step last."""
    rows = []
    for p in sorted(result.points, key=lambda p: (p.confirm, p.load)):
        rows.append(
            [
                str(p.load),
                f"{p.iops:,.0f}",
                f"{p.mbps:,.1f}",
                f"{p.p99_ms:.3g}" if p.p99_ms is not None else "-",
                "yes" if p.keeps(result.p99_max_ms) else "no",
                f"{p.step + 1}{' (confirm)' if p.confirm else ''}",
            ]
        )
    return rows


def curve_lines(run: Run) -> list[str]:
    """Text lines for `show` and reports: each spec's sentence; nothing for a run that was not a curve."""
    return [r.sentence() for r in curve_of(run)]
