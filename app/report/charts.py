"""Bar charts per access specification, baseline vs candidates (Qt-free).

A chart is laid out once into drawing primitives (rectangles, lines, text in abstract units); the HTML
report writes them as inline SVG and the PDF paints the same primitives with QPainter, so both show the
same chart. Bars are horizontal: access specification names are long and stay readable on the left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

from app.analysis.compare import METRICS, Comparison, MetricDef, Side, StepValues
from app.report.tables import chart_label, digits_for, fmt

BASELINE_COLOR = "#98a4b3"
CANDIDATE_COLORS = ("#1f5fa8", "#d9822b", "#2a9d8f", "#8e5bb5", "#c44e52")
FONT = "DejaVu Sans, Segoe UI, Helvetica, Arial, sans-serif"
CHAR_W = 0.6  # DejaVu Sans: average advance per point of font size (generous, so text never overlaps)


@dataclass
class Series:
    label: str
    values: list[float | None]
    color: str


@dataclass
class BarChart:
    key: str
    title: str
    metric: MetricDef
    categories: list[str]
    series: list[Series]


@dataclass
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str


@dataclass
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    color: str
    width: float = 1.0


@dataclass
class Text:
    x: float
    y: float  # baseline
    text: str
    size: float
    color: str = "#222222"
    anchor: str = "start"  # start | middle | end
    bold: bool = False


@dataclass
class Drawing:
    width: float
    height: float
    items: list[Rect | Line | Text] = field(default_factory=list)


def text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_W


def nice_step(top: float, ticks: int = 5) -> float:
    if top <= 0:
        return 1.0
    raw = top / ticks
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def _wrap(label: str, size: float, width: float) -> list[str]:
    """One or two lines, split at a space or hyphen; a longer label is cut with an ellipsis."""
    if text_width(label, size) <= width + 0.01:
        return [label]
    cuts = [i + 1 for i, ch in enumerate(label) if ch in " -_/"]
    fitting = [i for i in cuts if text_width(label[:i], size) <= width]
    if fitting:
        first, rest = label[:fitting[-1]].rstrip(), label[fitting[-1]:].lstrip()
    else:
        n = max(1, int(width / (size * CHAR_W)))
        first, rest = label[:n], label[n:]
    if text_width(rest, size) > width:
        rest = rest[:max(1, int(width / (size * CHAR_W)) - 1)] + "\u2026"
    return [first, rest]


def layout(chart: BarChart, width: float = 640.0) -> Drawing:
    title_size, label_size, value_size, tick_size = 11.0, 8.5, 7.5, 7.5
    n = len(chart.series)
    bar_h, bar_gap, group_gap = 11.0, 2.0, 12.0
    values = [v for s in chart.series for v in s.values if v is not None]
    top = max(values, default=0.0)
    step = nice_step(top)
    axis_max = step * max(1, math.ceil(top / step - 1e-9)) if top > 0 else 1.0
    digits = digits_for(values, {"iops": 0, "mbps": 1}.get(chart.metric.key, 2), significant=3)
    tick_digits = max(0, -math.floor(math.log10(step))) if step < 1 else 0

    longest = max((text_width(c, label_size) for c in chart.categories), default=0)
    label_avail = min(longest, width * 0.32)
    label_w = label_avail + 8
    value_w = max((text_width(fmt(v, digits), value_size) for v in values), default=20) + 8
    x0, x1 = label_w, width - value_w
    d = Drawing(width, 0)
    y = title_size + 2
    d.items.append(Text(0, y, chart.title, title_size, bold=True))
    # legend
    y += 16
    lx = 0.0
    for s in chart.series:
        item_w = 13 + text_width(s.label, label_size) + 14
        if lx and lx + item_w > width:
            lx, y = 0.0, y + 14
        d.items.append(Rect(lx, y - 8, 9, 9, s.color))
        d.items.append(Text(lx + 13, y, s.label, label_size, "#333333"))
        lx += item_w
    y += 12
    plot_top = y
    group_h = n * bar_h + (n - 1) * bar_gap
    plot_h = len(chart.categories) * (group_h + group_gap)
    scale = (x1 - x0) / axis_max
    # grid and ticks
    ticks = int(round(axis_max / step))
    for i in range(ticks + 1):
        x = x0 + i * step * scale
        d.items.append(Line(x, plot_top, x, plot_top + plot_h, "#e3e6ea" if i else "#9aa0a6", 0.8 if i else 1.0))
        d.items.append(Text(x, plot_top + plot_h + 11, fmt(i * step, tick_digits), tick_size, "#555555", "middle"))
    d.items.append(Text((x0 + x1) / 2, plot_top + plot_h + 24,
                        f"{chart.metric.unit} ({'higher' if chart.metric.higher_is_better else 'lower'} is better)",
                        tick_size, "#555555", "middle"))
    # bars
    for ci, cat in enumerate(chart.categories):
        gy = plot_top + group_gap / 2 + ci * (group_h + group_gap)
        lines = _wrap(cat, label_size, label_avail)
        mid = gy + group_h / 2
        for li, ln in enumerate(lines):
            d.items.append(Text(label_w - 8, mid + 3 + (li - (len(lines) - 1) / 2) * (label_size + 2), ln,
                                label_size, "#222222", "end"))
        for si, s in enumerate(chart.series):
            by = gy + si * (bar_h + bar_gap)
            v = s.values[ci] if ci < len(s.values) else None
            if v is None:
                d.items.append(Text(x0 + 4, by + bar_h - 2.5, "not compared", value_size, "#888888"))
                continue
            w = max(0.0, v * scale)
            d.items.append(Rect(x0, by, w, bar_h, s.color))
            d.items.append(Text(x0 + w + 4, by + bar_h - 2.5, fmt(v, digits), value_size, "#333333"))
    d.height = plot_top + plot_h + 30
    return d


def to_svg(drawing: Drawing, title: str = "") -> str:
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {drawing.width:.0f} {drawing.height:.0f}" '
           f'width="{drawing.width:.0f}" height="{drawing.height:.0f}" role="img" '
           f'aria-label="{escape(title)}" font-family="{FONT}">']
    for it in drawing.items:
        if isinstance(it, Rect):
            out.append(f'<rect x="{it.x:.1f}" y="{it.y:.1f}" width="{it.w:.1f}" height="{it.h:.1f}" '
                       f'fill="{it.fill}"/>')
        elif isinstance(it, Line):
            out.append(f'<line x1="{it.x1:.1f}" y1="{it.y1:.1f}" x2="{it.x2:.1f}" y2="{it.y2:.1f}" '
                       f'stroke="{it.color}" stroke-width="{it.width:g}"/>')
        else:
            weight = ' font-weight="bold"' if it.bold else ""
            out.append(f'<text x="{it.x:.1f}" y="{it.y:.1f}" font-size="{it.size:g}" fill="{it.color}" '
                       f'text-anchor="{it.anchor}"{weight}>{escape(it.text)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def side_label(side: Side) -> str:
    """Legend text: the run's name where it has one, e.g. "Run 2: VMware template, QD 16"."""
    if len(side.runs) == 1 and side.runs[0].name:
        return f"Run {side.runs[0].id}: {side.runs[0].name}"
    return side.label


def chart_title(d: MetricDef) -> str:
    return chart_label(d)


def _category(s: StepValues, repeated: bool) -> str:
    return s.key.spec + (f" (QD {s.key.queue_depth})" if repeated and s.key.queue_depth is not None else "")


MAX_BARS_HEIGHT = 520.0  # points of bars per chart: a chart must fit on a page (a PDF image cannot split)


def split(chart: BarChart) -> list[BarChart]:
    """A chart with too many access specifications for one page as several charts, titled 1/n, 2/n ..."""
    n = len(chart.series)
    per = max(1, int(MAX_BARS_HEIGHT // (n * 11 + (n - 1) * 2 + 12)))
    if len(chart.categories) <= per:
        return [chart]
    parts = range(0, len(chart.categories), per)
    return [BarChart(f"{chart.key}-{i + 1}", f"{chart.title} ({i + 1}/{len(parts)})", chart.metric,
                     chart.categories[k:k + per], [Series(s.label, s.values[k:k + per], s.color) for s in chart.series])
            for i, k in enumerate(parts)]


def comparison_charts(comparisons: list[Comparison]) -> list[BarChart]:
    """Per metric: a bar per access specification for the baseline and each candidate (matched steps)."""
    base = comparisons[0].baseline
    steps = [s for s in base.steps if any(r.baseline is s for c in comparisons for r in c.rows)]
    names = [s.key.spec for s in steps]
    cats = [_category(s, names.count(s.key.spec) > 1) for s in steps]
    charts = []
    for d in METRICS:
        matched = [{id(r.baseline): r.changes[d.key].candidate for r in c.rows} for c in comparisons]
        series = [Series(side_label(base) + " (baseline)", [s.values[d.key] for s in steps], BASELINE_COLOR)]
        for i, (c, m) in enumerate(zip(comparisons, matched, strict=True)):
            series.append(Series(side_label(c.candidate), [m.get(id(s)) for s in steps],
                                 CANDIDATE_COLORS[i % len(CANDIDATE_COLORS)]))
        if all(v is None for s in series for v in s.values):
            continue
        charts += split(BarChart(f"chart-{d.key}", chart_title(d), d, cats, series))
    return charts


def run_charts(side_steps: list[StepValues], label: str) -> list[BarChart]:
    """Charts of one run (a report without comparisons)."""
    names = [s.key.spec for s in side_steps]
    cats = [_category(s, names.count(s.key.spec) > 1) for s in side_steps]
    charts = []
    for d in METRICS:
        values = [s.values[d.key] for s in side_steps]
        if all(v is None for v in values):
            continue
        charts += split(BarChart(f"chart-{d.key}", chart_title(d), d, cats, [Series(label, values, CANDIDATE_COLORS[0])]))
    return charts
