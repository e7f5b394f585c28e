"""A sweep run's curves as report line charts (Qt-free): per family of sweeps (``analysis.sweep_curves``) IOPS,
MB/s, and average and p99 response time against the load, and the response time against the throughput with
the knee marked; one line per outer value where the plan sweeps two dimensions."""

from __future__ import annotations

from collections.abc import Callable

from app.analysis.sweep import KNEE_RULE, Sweep
from app.analysis.sweep_curves import CurveLine, SweepFamily, sweep_families
from app.report.charts import CANDIDATE_COLORS, LineChart, LineSeries, Mark, run_color
from app.store.records import Run

HEIGHT = 105.0
WORK = {"iops": "IOPS", "mbps": "MB/s"}


def curves_title(run: Run) -> str:
    return f"Run {run.id} \u2014 sweep curves"


def knee_note() -> str:
    return KNEE_RULE + "."


def _color(i: int) -> str:
    return CANDIDATE_COLORS[i % len(CANDIDATE_COLORS)]


def family_charts(family: SweepFamily, key: str, color: Callable[[int], str] = _color) -> list[LineChart]:
    """The four charts of one family; ``key`` prefixes each chart's key; ``color``: the i-th line's."""
    ticks = family.ticks()
    common = {"x_log2": family.log2, "x_ticks": ticks, "plot_height": HEIGHT}
    x = family.x_title
    many = len(family.lines) > 1

    def load_series(field: str, dash: bool = False, label: str | None = None) -> list[LineSeries]:
        return [
            LineSeries(label if label is not None else ln.label, ln.series(field), color(i), 1.4, dash, True)
            for i, ln in enumerate(family.lines)
        ]

    knees = family.knees()
    out = [
        LineChart(
            f"{key}-{field}",
            f"{WORK[field]}: {family.title}",
            x,
            WORK[field],
            load_series(field),
            **common,
            marks=[Mark(p.load, getattr(p, field), family.knee_caption(ln, p)) for ln, p in knees]
            if field == family.throughput
            else [],
        )
        for field in ("iops", "mbps")
    ]
    if many:  # the outer values name the solid lines; the dashed ones follow their colour
        lat = load_series("lat_mean_ms") + load_series("lat_p99_ms", dash=True, label="")
    else:
        lat = load_series("lat_mean_ms", label="average") + load_series("lat_p99_ms", dash=True, label="p99")
    lat = [s for s in lat if s.points]
    out.append(
        LineChart(
            f"{key}-lat",
            f"Response time (solid: average, dashed: p99): {family.title}",
            x,
            "ms",
            lat,
            **common,
        )
    )
    work = WORK[family.throughput]
    curve = [
        LineSeries(
            ln.label,
            ln.latency_vs_throughput(),
            color(i),
            1.4,
            markers=True,
            point_labels=[family.tick_label(p.load) for p in ln.sweep.points if p.lat_mean_ms is not None],
        )
        for i, ln in enumerate(family.lines)
    ]
    # the knee's ratio as a line from the origin: every other point lies on or above it
    top = max((t for ln in family.lines for t, _ in ln.latency_vs_throughput()), default=0.0)
    curve += [
        LineSeries(
            "",
            [(0.0, 0.0), (top, top * p.lat_mean_ms / getattr(p, family.throughput))],
            "#9aa0a6",
            0.8,
            dash=True,
        )
        for _, p in knees
        if getattr(p, family.throughput) > 0
    ]
    marks = [
        Mark(getattr(p, family.throughput), p.lat_mean_ms, family.knee_caption(ln, p)) for ln, p in knees
    ]
    out.append(
        LineChart(
            f"{key}-knee",
            f"Average response time against {work}, knee marked: {family.title}",
            f"{work} (labels: {family.noun}; dashed: the knee's {work} per ms)",
            "ms",
            curve,
            x_min=0.0,
            plot_height=HEIGHT,
            marks=marks,
        )
    )
    return out


def compared_charts(key: str, before: Sweep, after: Sweep, labels: tuple[str, str]) -> list[LineChart]:
    """Two runs' sweeps of one workload overlaid, a line per side in its colour (``run_color``): throughput,
    response time (average and p99) and the knee chart, as a run's own sweep curves are."""
    family = SweepFamily(
        before.label, before.dimension, None, [CurveLine(labels[0], before), CurveLine(labels[1], after)]
    )
    charts = family_charts(family, key, run_color)
    for c in charts:  # short enough for two charts a row: the axes say over what, the legend whose
        if c.key.endswith("-knee"):
            c.title = f"Response time against {WORK[family.throughput]}, knees marked: {before.label}"
    return charts


def sweep_charts(run: Run) -> list[LineChart]:
    """Every family's charts, in step order."""
    charts = [
        c for i, fam in enumerate(sweep_families(run), 1) for c in family_charts(fam, f"sweep-{run.id}-{i}")
    ]
    for c in charts:  # a report holds several runs' curves: each title says whose
        c.title = f"Run {run.id} \u2014 {c.title}"
    return charts
