"""Line charts of a report (Qt-free): the response time distribution per access specification (cumulative,
and the share of I/Os per latency bin; both sides overlaid) and the per-second IOPS and average response time
of every run's step, ramp-up shaded."""

from __future__ import annotations

import statistics

from app.analysis.compare import Side, StepValues
from app.report.charts import LineChart, LineSeries
from app.report.latency import Distribution, side_steps
from app.store.database import Store
from app.store.queries import step_samples


def distribution_charts(dists: list[Distribution], colors: dict[str, str]) -> list[LineChart]:
    return [
        LineChart(
            d.key,
            d.title,
            "response time (ms, logarithmic)",
            "% of I/Os completed within",
            [LineSeries(label, pts, colors.get(label, "#1f5fa8")) for label, pts in d.series],
            x_log=True,
            y_max=100.0,
        )
        for d in dists
    ]


def share_charts(dists: list[Distribution], colors: dict[str, str]) -> list[LineChart]:
    """Histograms of response times (``latency.shares``): a step outline per side."""
    return [
        LineChart(
            d.key,
            d.title,
            "response time (ms, logarithmic)",
            "% of I/Os",
            [LineSeries(label, pts, colors.get(label, "#1f5fa8")) for label, pts in d.series],
            x_log=True,
        )
        for d in dists
    ]


def step_series(store: Store, step_id: int) -> list[tuple[float, float, float]]:
    """(t, IOPS, average response time in ms) per interval of a step's ALL level; t since the step started.
    fio's last report often covers a sliver of an interval (its rate then means little): intervals shorter
    than half the typical one are left out."""
    samples = step_samples(store, step_id, "all", "ALL", histograms=False)
    if not samples:
        return []
    typical = statistics.median(m.seconds for _, m in samples)
    start = io_start(samples)
    return [(t - start, m.iops, m.lat_mean_ms) for t, m in samples if m.seconds >= typical / 2]


def io_start(samples) -> float:
    """Seconds from the step's start to its first I/O: the first interval's end less its length. fio lays out
    test files before its clock starts; the time that took is not part of the step's measured time, so both
    sides' lines start at their first I/O (differences under half a second are left as they are)."""
    t, m = samples[0]
    start = t - (m.seconds or 0)
    return start if start >= 0.5 else 0.0


MIN_POINTS = 3  # a line over time needs at least this many seconds (1-s steps made a chart of lone dots)


def timeline_charts(
    store: Store,
    rows: list[tuple[str, list[tuple[Side, StepValues]]]],
    labels: dict[int, str],
    colors: dict[str, str],
) -> list[LineChart]:
    """Per access specification: IOPS per second and average response time per second, a line per run (the
    runs of a side in its colour), the ramp-up (not measured) shaded. A specification whose steps all have
    fewer than ``MIN_POINTS`` measured seconds gets none: its numbers are in the tables."""
    out = []
    for i, (spec, sides) in enumerate(rows, 1):
        iops, lat = [], []
        ramp, length = 0.0, 0.0
        for side, step in sides:
            label = labels[id(side)]
            for n, info in enumerate(side_steps(side, step)):
                pts = step_series(store, info.id)
                if not pts:
                    continue
                ramp = max(ramp, info.ramp_s)
                length = max(length, pts[-1][0])  # the step's real length, not its run-time limit
                name = label if n == 0 else ""
                color = colors.get(label, "#1f5fa8")
                iops.append(LineSeries(name, [(t, v) for t, v, _ in pts], color, 1.0))
                lat.append(LineSeries(name, [(t, v) for t, _, v in pts], color, 1.0))
        if all(len(s.points) < MIN_POINTS for s in iops):
            continue
        shade = (0.0, ramp, "ramp-up") if ramp else None
        out.append(
            LineChart(
                f"iops-{i}",
                f"IOPS per second: {spec}",
                "time since the step's first I/O (s)",
                "IOPS",
                iops,
                shade=shade,
                x_min=0.0,
                x_max=length,
                plot_height=95.0,
            )
        )
        out.append(
            LineChart(
                f"lat-{i}",
                f"Average response time per second: {spec}",
                "time since the step's first I/O (s)",
                "ms",
                lat,
                shade=shade,
                x_min=0.0,
                x_max=length,
                plot_height=95.0,
            )
        )
    return out
