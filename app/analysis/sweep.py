"""Sweep summaries: where a run's load rises step by step, its maxima and its knee.

A *sweep* is a series of steps that share one access-specification definition and differ in one load
dimension only: outstanding I/Os per target (queue depth), the number of workers, the number of targets,
or the transfer size of a single-line specification (a block-size sweep). For each sweep this gives the
maximum IOPS and maximum MB/s with the point where each was reached (as an Orion study reports them), the
response time at every point, and the *knee* (``KNEE_RULE``): the point with the most throughput per unit of
response time — IOPS divided by the average response time (MB/s in a transfer-size sweep, where larger
transfers lower IOPS by design), what queueing theory calls the *power* of an operating point. Up to the knee
more load raised the throughput by a larger factor than the response time; past it the response time grows
faster: more load buys more waiting than work. Taking the highest ratio, rather than the first step where
the response time outgrew the throughput, keeps one noisy point from placing the knee. Values come from each
step's ALL results.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.analysis.preconditioning import measured_steps
from app.model.spec_words import canonical_definition, parse_spec_text
from app.model.units import format_bytes
from app.store.records import Run, StepInfo

KNEE_RULE = (
    "The knee is the point with the highest throughput per unit of response time (IOPS divided by the "
    "average response time; MB/s when the transfer size is swept): up to it more load raised the "
    "throughput by a larger factor than the response time, past it the response time grows faster. "
    "Where that is the sweep's highest load, the sweep shows no knee: more load still paid"
)
DIMENSIONS = ("queue_depth", "workers", "targets", "transfer_size")
# What stays equal along a sweep: a worker sweep adds each worker's targets too.
FIXED = {
    "queue_depth": ("workers", "targets"),
    "workers": ("queue_depth",),
    "targets": ("queue_depth", "workers"),
    "transfer_size": ("queue_depth", "workers", "targets"),
}
_LABEL = {"queue_depth": "QD", "workers": "workers", "targets": "targets", "transfer_size": "transfer size"}


@dataclass(frozen=True)
class SweepPoint:
    step: int  # 0-based step index
    load: int  # the swept value: QD, workers, targets or bytes
    outstanding: int | None  # I/Os in flight over the step (QD x targets), when the QD is known
    iops: float
    mbps: float
    lat_mean_ms: float
    lat_p99_ms: float | None

    def at(self, dimension: str) -> str:
        """'QD 32 (64 outstanding)', '4 workers', '64 KiB'."""
        if dimension == "transfer_size":
            return format_bytes(self.load)
        if dimension == "queue_depth":
            extra = (
                f" ({self.outstanding} outstanding)"
                if self.outstanding and self.outstanding != self.load
                else ""
            )
            return f"QD {self.load}{extra}"
        return f"{self.load} {_LABEL[dimension]}"


@dataclass(frozen=True)
class Sweep:
    label: str  # the access specification (name) the sweep runs
    dimension: str  # one of DIMENSIONS
    points: list[SweepPoint]
    # what the sweep's steps share besides the swept value: "shape" (the specification but for a single
    # line's transfer size) and each other dimension's value, None where it differs or does not apply
    context: dict[str, object] = field(default_factory=dict, compare=False)

    @property
    def throughput(self) -> str:
        """The SweepPoint field the knee is judged on: IOPS, or MB/s when the transfer size is swept."""
        return "mbps" if self.dimension == "transfer_size" else "iops"

    @property
    def max_iops(self) -> SweepPoint:
        return max(self.points, key=lambda p: p.iops)

    @property
    def max_mbps(self) -> SweepPoint:
        return max(self.points, key=lambda p: p.mbps)

    @property
    def knee(self) -> SweepPoint | None:
        """See KNEE_RULE: the first point with the highest power; None when that is the last point (or no
        point has a response time)."""
        work = self.throughput
        timed = [p for p in self.points if p.lat_mean_ms > 0]
        if not timed:
            return None
        best = max(timed, key=lambda p: getattr(p, work) / p.lat_mean_ms)
        return None if best is self.points[-1] else best

    def summary(self) -> list[str]:
        """The sentences a reader wants first."""
        top, big = self.max_iops, self.max_mbps
        out = [
            f"{self.label}: maximum IOPS {top.iops:,.0f} at {top.at(self.dimension)} "
            f"(average response {_ms(top.lat_mean_ms)} ms)",
            f"{self.label}: maximum MB/s {big.mbps:,.1f} at {big.at(self.dimension)}",
        ]
        knee = self.knee
        if knee is not None:
            work = "MB/s" if self.throughput == "mbps" else "IOPS"
            out.append(
                f"{self.label}: knee at {knee.at(self.dimension)} — the most {work} per ms of average "
                "response time; beyond it the response time grows faster than the throughput"
            )
        return out


def _ms(v: float) -> str:
    return f"{v:,.3g}" if v >= 0.1 else f"{v:.3f}"


def _point(step: StepInfo, load: int) -> SweepPoint | None:
    total = next((r.metrics for r in step.results if r.level == "all"), None)
    if total is None or total.ios <= 0 or step.status != "complete":
        return None  # a stopped or partial step measured less: never a point, a maximum or a knee
    targets = len(step.active_targets)
    outstanding = step.queue_depth * targets if step.queue_depth else None
    return SweepPoint(
        step.index, load, outstanding, total.iops, total.mbps, total.lat_mean_ms, total.percentile_ms(99)
    )


def _coordinates(step: StepInfo) -> dict[str, object] | None:
    specs = parse_spec_text(step.spec_text)
    if not specs:
        return None
    definition = canonical_definition(step.spec_text)
    size: int | None = None
    shape: object = definition
    if len(specs) == 1 and len(specs[0]) == 1:  # a block-size sweep varies the one line's size
        ln = specs[0][0]
        size = ln.size
        shape = (
            ln.of_size,
            ln.reads,
            ln.random,
            ln.delay,
            ln.burst,
            "size" if ln.align == ln.size else ln.align,
            ln.reply,
        )  # aligned on the size, as such sweeps are
    return {
        "spec": definition,
        "shape": shape,
        "queue_depth": step.queue_depth,
        "workers": len(step.active_workers),
        "targets": len(step.active_targets),
        "transfer_size": size,
    }


def _inner_first(steps: list[dict[str, object]]) -> list[str]:
    """DIMENSIONS, the one most often changed alone from a step to the next first: in a plan that sweeps two
    (workers at QD 1, then at QD 8), the sweeps run along the inner one."""
    alone = dict.fromkeys(DIMENSIONS, 0)
    for a, b in zip(steps, steps[1:], strict=False):
        changed = [d for d in DIMENSIONS if a[d] != b[d]]
        if len(changed) == 1 or changed == ["workers", "targets"]:  # a worker brings its targets
            alone[changed[0]] += 1
    return sorted(DIMENSIONS, key=lambda d: -alone[d])


def find_sweeps(run: Run) -> list[Sweep]:
    """Every sweep in a run, in step order; a step belongs to one sweep at most."""
    coords = {s.index: c for s in measured_steps(run) if (c := _coordinates(s)) is not None}
    by_index = {s.index: s for s in run.steps}
    used: set[int] = set()
    sweeps: list[Sweep] = []
    for dim in _inner_first(list(coords.values())):
        fixed = FIXED[dim]
        groups: dict[tuple, list[int]] = {}
        for idx, c in coords.items():
            if idx in used or c[dim] is None:
                continue
            key = (c["shape"] if dim == "transfer_size" else c["spec"], *(c[d] for d in fixed))
            groups.setdefault(key, []).append(idx)
        for members in groups.values():
            if len({coords[i][dim] for i in members}) < 2:
                continue
            points = [
                p
                for i in sorted(members, key=lambda i: (coords[i][dim], i))
                if (p := _point(by_index[i], int(coords[i][dim]))) is not None
            ]
            if len(points) < 2:
                continue
            used.update(members)
            names = list(dict.fromkeys(by_index[i].spec_name for i in members))
            context = {
                k: (vals.pop() if len(vals := {coords[i][k] for i in members}) == 1 else None)
                for k in ("shape", *DIMENSIONS)
                if k != dim
            }
            sweeps.append(
                Sweep(
                    " / ".join(names) if dim != "transfer_size" else _size_label(names), dim, points, context
                )
            )
    return sorted(sweeps, key=lambda s: min(p.step for p in s.points))


def _size_label(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{names[0]} … {names[-1]}"
