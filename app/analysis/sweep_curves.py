"""Sweep curves (Qt-free): what the report's and the History window's sweep charts draw.

One *family* per swept dimension and workload: the sweeps of a run that differ only in one other coordinate
(the *outer* one: a transfer-size x queue-depth plan sweeps the queue depth once per transfer size) are one
family, drawn as one line per outer value. A family gives, over the load: IOPS, MB/s, average and p99
response time; and the response time against the throughput with the knee marked (``sweep.KNEE_RULE``).
The load axis is logarithmic (base 2) where the load doubles (or quadruples ...) from point to point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.analysis.sweep import DIMENSIONS, Sweep, SweepPoint, find_sweeps
from app.model.units import format_bytes
from app.store.records import Run

AXIS_TITLE = {
    "queue_depth": "queue depth (outstanding I/Os per target)",
    "workers": "workers",
    "targets": "targets",
    "transfer_size": "transfer size",
}
NOUN = {
    "queue_depth": "queue depth",
    "workers": "workers",
    "targets": "targets",
    "transfer_size": "transfer size",
}
# the coordinate that tells a family's lines apart, tried in this order
OUTERS = ("transfer_size", "queue_depth", "workers", "targets")
MAX_TICKS = 12  # a linear load axis labels at most this many of its points


@dataclass(frozen=True)
class CurveLine:
    label: str  # the outer value ("8 KiB", "QD 4", "2 workers"); "" when the family has one line
    sweep: Sweep

    @property
    def knee(self) -> SweepPoint | None:
        return self.sweep.knee

    def series(self, field: str) -> list[tuple[float, float]]:
        """(load, value) of a SweepPoint field, in load order; points without the value left out."""
        return [(float(p.load), v) for p in self.sweep.points if (v := getattr(p, field)) is not None]

    def latency_vs_throughput(self, field: str = "lat_mean_ms") -> list[tuple[float, float]]:
        """(throughput, response time) in load order: the curve whose knee the family marks."""
        work = self.sweep.throughput
        return [(getattr(p, work), v) for p in self.sweep.points if (v := getattr(p, field)) is not None]


@dataclass(frozen=True)
class SweepFamily:
    title: str  # "Small random 8k read over queue depth", "4k … 64k random read over queue depth, by transfer size"
    dimension: str
    outer: str | None  # the coordinate telling the lines apart; None for a single line
    lines: list[CurveLine]

    @property
    def loads(self) -> list[int]:
        return sorted({p.load for ln in self.lines for p in ln.sweep.points})

    @property
    def log2(self) -> bool:
        """The load axis is logarithmic when the load multiplies by a power of two from point to point."""
        loads = self.loads
        return (
            len(loads) > 1
            and loads[0] > 0
            and all(
                b % a == 0 and (b // a) & (b // a - 1) == 0 for a, b in zip(loads, loads[1:], strict=False)
            )
        )

    @property
    def x_title(self) -> str:
        return AXIS_TITLE[self.dimension] + (", logarithmic" if self.log2 else "")

    @property
    def throughput(self) -> str:
        """ "iops" or "mbps": the x axis of the response-time curve, and what the knee is judged on."""
        return self.lines[0].sweep.throughput

    @property
    def noun(self) -> str:
        return NOUN[self.dimension]

    def tick_label(self, load: float) -> str:
        return format_bytes(int(load)) if self.dimension == "transfer_size" else f"{load:g}"

    def ticks(self) -> list[tuple[float, str]]:
        """(load, label) for the load axis: every point's load, thinned to MAX_TICKS on a linear axis."""
        loads = self.loads
        every = 1 if self.log2 else max(1, math.ceil(len(loads) / MAX_TICKS))
        keep = loads[::every]
        if keep[-1] != loads[-1]:
            keep.append(loads[-1])
        return [(float(v), self.tick_label(v)) for v in keep]

    def knees(self) -> list[tuple[CurveLine, SweepPoint]]:
        return [(ln, k) for ln in self.lines if (k := ln.knee) is not None]

    def knee_caption(self, line: CurveLine, point: SweepPoint) -> str:
        """ "knee: QD 8" or "knee (8 KiB): QD 8"."""
        return "knee" + (f" ({line.label})" if line.label else "") + f": {point.at(self.dimension)}"


def _outer_label(dimension: str, value: object) -> str:
    if dimension == "transfer_size":
        return format_bytes(int(value))  # type: ignore[arg-type]
    if dimension == "queue_depth":
        return f"QD {value}"
    return f"{value} {NOUN[dimension]}" if value != 1 else f"1 {NOUN[dimension].rstrip('s')}"


def _title(sweeps: list[Sweep], dimension: str, outer: str | None) -> str:
    labels = [s.label for s in sweeps]
    name = labels[0] if len(labels) == 1 else f"{labels[0]} \u2026 {labels[-1]}"
    return f"{name} over {NOUN[dimension]}" + (f", by {NOUN[outer]}" if outer else "")


def families(sweeps: list[Sweep]) -> list[SweepFamily]:
    """The sweeps grouped into families (see the module), in the order of their first sweep."""
    left = list(sweeps)
    groups: list[tuple[str | None, list[Sweep]]] = []
    for outer in OUTERS:
        by_key: dict[tuple, list[Sweep]] = {}
        for s in left:
            if s.dimension == outer or s.context.get(outer) is None:
                continue
            rest = tuple(
                (k, s.context.get(k)) for k in ("shape", *DIMENSIONS) if k not in (s.dimension, outer)
            )
            by_key.setdefault((s.dimension, rest), []).append(s)
        for members in by_key.values():
            if len(members) > 1 and len({m.context[outer] for m in members}) == len(members):
                members.sort(key=lambda m: m.context[outer])  # type: ignore[arg-type, return-value]
                groups.append((outer, members))
                left = [s for s in left if all(s is not m for m in members)]
    groups += [(None, [s]) for s in left]
    groups.sort(key=lambda g: min(p.step for s in g[1] for p in s.points))
    out = []
    for outer, members in groups:
        lines = [CurveLine(_outer_label(outer, m.context[outer]) if outer else "", m) for m in members]
        out.append(
            SweepFamily(_title(members, members[0].dimension, outer), members[0].dimension, outer, lines)
        )
    return out


def sweep_families(run: Run) -> list[SweepFamily]:
    return families(find_sweeps(run))
