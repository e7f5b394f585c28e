"""Bar charts per access specification, baseline vs candidates (Qt-free).

A chart is laid out once into drawing primitives (rectangles, lines, text in abstract units); the HTML
report writes them as inline SVG and the PDF paints the same primitives with QPainter, so both show the
same chart. Bars are horizontal: access specification names are long and stay readable on the left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

from app.analysis.compare import METRICS, Comparison, MetricDef, StepValues, load_text
from app.report.tables import chart_label, fmt, fmt_sig

# Mid-tone colours: they read on the report's white paper and on the window's dark chart background alike.
BASELINE_COLOR = "#8a96a6"  # before: a quiet grey-blue
CANDIDATE_COLORS = ("#2f74c0", "#e07b28", "#2a9d8f", "#9467bd", "#d14a4a")
FONT = "DejaVu Sans, Segoe UI, Helvetica, Arial, sans-serif"
CHAR_W = 0.6  # DejaVu Sans: average advance per point of font size (generous, so text never overlaps)


@dataclass
class Series:
    label: str
    values: list[float | None]
    color: str
    ranges: list[tuple[float, float] | None] = field(default_factory=list)  # lowest..highest of repeats


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
    dash: bool = False


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


def step_decimals(step: float) -> int:
    """Decimals that show every multiple of an axis step exactly (2.5 -> 1, 0.25 -> 2, 2000 -> 0)."""
    return next((d for d in range(7) if abs(round(step, d) - step) <= step * 1e-9), 6)


def _wrap(label: str, size: float, width: float) -> list[str]:
    """One or two lines, split at a space or hyphen; a longer label is cut with an ellipsis."""
    if text_width(label, size) <= width + 0.01:
        return [label]
    cuts = [i + 1 for i, ch in enumerate(label) if ch in " -_/"]
    fitting = [i for i in cuts if text_width(label[:i], size) <= width]
    if fitting:
        first, rest = label[: fitting[-1]].rstrip(), label[fitting[-1] :].lstrip()
    else:
        n = max(1, int(width / (size * CHAR_W)))
        first, rest = label[:n], label[n:]
    if text_width(rest, size) > width:
        rest = rest[: max(1, int(width / (size * CHAR_W)) - 1)] + "\u2026"
    return [first, rest]


def _title_lines(text: str, size: float, width: float, most: int = 3) -> list[str]:
    """A chart's title in up to ``most`` lines, split at a space or hyphen; what still does not fit is cut
    with an ellipsis (a small multiple's title is half as wide as a chart's)."""
    out: list[str] = []
    while len(out) < most - 1 and text_width(text, size) > width + 0.01:
        fitting = [
            i + 1 for i, ch in enumerate(text) if ch in " -_/" and text_width(text[: i + 1], size) <= width
        ]
        cut = fitting[-1] if fitting else max(1, int(width / (size * CHAR_W)))
        out.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    if text_width(text, size) > width + 0.01:
        text = text[: max(1, int(width / (size * CHAR_W)) - 1)] + "\u2026"
    return [*out, text]


def layout(chart: BarChart, width: float = 640.0) -> Drawing:
    title_size, label_size, value_size, tick_size = 11.0, 8.5, 7.5, 7.5
    n = len(chart.series)
    bar_h, bar_gap, group_gap = 11.0, 2.0, 12.0
    values = [v for s in chart.series for v in s.values if v is not None]
    highs = [r[1] for s in chart.series for r in s.ranges if r]
    top = max(values + highs, default=0.0)
    step = nice_step(top)
    axis_max = step * max(1, math.ceil(top / step - 1e-9)) if top > 0 else 1.0
    tick_digits = step_decimals(step)

    longest = max((text_width(c, label_size) for c in chart.categories), default=0)
    label_avail = min(longest, width * 0.32)
    label_w = label_avail + 8
    value_w = max((text_width(fmt_sig(v), value_size) for v in values), default=20) + 8
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
        d.items.append(
            Line(x, plot_top, x, plot_top + plot_h, "#e3e6ea" if i else "#9aa0a6", 0.8 if i else 1.0)
        )
        d.items.append(
            Text(x, plot_top + plot_h + 11, fmt(i * step, tick_digits), tick_size, "#555555", "middle")
        )
    d.items.append(
        Text(
            (x0 + x1) / 2,
            plot_top + plot_h + 24,
            f"{chart.metric.unit} ({'higher' if chart.metric.higher_is_better else 'lower'} is better)",
            tick_size,
            "#555555",
            "middle",
        )
    )
    # bars
    for ci, cat in enumerate(chart.categories):
        gy = plot_top + group_gap / 2 + ci * (group_h + group_gap)
        lines = _wrap(cat, label_size, label_avail)
        mid = gy + group_h / 2
        for li, ln in enumerate(lines):
            d.items.append(
                Text(
                    label_w - 8,
                    mid + 3 + (li - (len(lines) - 1) / 2) * (label_size + 2),
                    ln,
                    label_size,
                    "#222222",
                    "end",
                )
            )
        for si, s in enumerate(chart.series):
            by = gy + si * (bar_h + bar_gap)
            v = s.values[ci] if ci < len(s.values) else None
            if v is None:
                d.items.append(Text(x0 + 4, by + bar_h - 2.5, "not compared", value_size, "#888888"))
                continue
            w = max(0.0, v * scale)
            d.items.append(Rect(x0, by, w, bar_h, s.color))
            rng = s.ranges[ci] if ci < len(s.ranges) else None
            if rng:  # error bar: the lowest and highest of the side's repeated runs
                lo, hi = x0 + rng[0] * scale, x0 + rng[1] * scale
                mid_y = by + bar_h / 2
                d.items.append(Line(lo, mid_y, hi, mid_y, "#1d2733", 0.8))
                d.items.append(Line(lo, by + 2, lo, by + bar_h - 2, "#1d2733", 0.8))
                d.items.append(Line(hi, by + 2, hi, by + bar_h - 2, "#1d2733", 0.8))
                w = max(w, hi - x0)
            d.items.append(Text(x0 + w + 4, by + bar_h - 2.5, fmt_sig(v), value_size, "#333333"))
    d.height = plot_top + plot_h + 30
    return d


def to_svg(drawing: Drawing, title: str = "") -> str:
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {drawing.width:.0f} {drawing.height:.0f}" '
        f'width="{drawing.width:.0f}" height="{drawing.height:.0f}" role="img" '
        f'aria-label="{escape(title)}" font-family="{FONT}">'
    ]
    for it in drawing.items:
        if isinstance(it, Rect):
            out.append(
                f'<rect x="{it.x:.1f}" y="{it.y:.1f}" width="{it.w:.1f}" height="{it.h:.1f}" '
                f'fill="{it.fill}"/>'
            )
        elif isinstance(it, Line):
            dash = ' stroke-dasharray="4 3"' if it.dash else ""
            out.append(
                f'<line x1="{it.x1:.1f}" y1="{it.y1:.1f}" x2="{it.x2:.1f}" y2="{it.y2:.1f}" '
                f'stroke="{it.color}" stroke-width="{it.width:g}"{dash}/>'
            )
        else:
            weight = ' font-weight="bold"' if it.bold else ""
            out.append(
                f'<text x="{it.x:.1f}" y="{it.y:.1f}" font-size="{it.size:g}" fill="{it.color}" '
                f'text-anchor="{it.anchor}"{weight}>{escape(it.text)}</text>'
            )
    out.append("</svg>")
    return "\n".join(out)


def chart_title(d: MetricDef) -> str:
    return chart_label(d)


def _category(s: StepValues, repeated: bool = True, load: str = "") -> str:
    """A bar's label: the spec and its load, "Random-8k (QD 64 → 8)" (``load`` from the paired row)."""
    k = s.key
    own = load_text(k.queue_depth, k.queue_depth, k.workers, k.workers, k.targets, k.targets, k.shared)
    return f"{k.spec} ({load or own})"


MAX_BARS_HEIGHT = 520.0  # points of bars per chart: a chart must fit on a page (a PDF image cannot split)


def split(chart: BarChart) -> list[BarChart]:
    """A chart with too many access specifications for one page as several charts, titled 1/n, 2/n ..."""
    n = len(chart.series)
    per = max(1, int(MAX_BARS_HEIGHT // (n * 11 + (n - 1) * 2 + 12)))
    if len(chart.categories) <= per:
        return [chart]
    parts = range(0, len(chart.categories), per)
    return [
        BarChart(
            f"{chart.key}-{i + 1}",
            f"{chart.title} ({i + 1}/{len(parts)})",
            chart.metric,
            chart.categories[k : k + per],
            [Series(s.label, s.values[k : k + per], s.color, s.ranges[k : k + per]) for s in chart.series],
        )
        for i, k in enumerate(parts)
    ]


Spread = dict[tuple, dict[str, tuple[float, float]]]  # (step key, occurrence) -> metric -> (lowest, highest)


def _ranges(steps: list[StepValues | None], spread: Spread, metric: str) -> list[tuple[float, float] | None]:
    return [spread.get((s.key, s.occurrence), {}).get(metric) if s is not None else None for s in steps]


def comparison_charts(
    comparisons: list[Comparison],
    labels: list[str],
    spreads: list[Spread],
    drawn: set[int] | frozenset[int] = frozenset(),
) -> list[BarChart]:
    """Per metric: a bar per access specification for the baseline and each candidate (matched steps), with
    error bars (lowest to highest run) where a side is a group of repeated runs. ``labels`` and ``spreads``:
    the baseline's, then each candidate's; ``drawn``: the baseline's steps drawn as sweep curves (no bars)."""
    base = comparisons[0].baseline
    steps = [
        s
        for s in base.steps
        if s.index not in drawn and any(r.baseline is s for c in comparisons for r in c.rows)
    ]
    loads = {id(r.baseline): r.load for c in comparisons[:1] for r in c.rows}
    cats = [_category(s, load=loads.get(id(s), "")) for s in steps]
    charts = []
    for d in METRICS:
        series = [
            Series(
                labels[0],
                [s.values[d.key] for s in steps],
                run_color(0),
                _ranges(list(steps), spreads[0], d.key),
            )
        ]
        for i, c in enumerate(comparisons):
            matched = {id(r.baseline): r for r in c.rows}
            cand = [matched[id(s)].candidate if id(s) in matched else None for s in steps]
            series.append(
                Series(
                    labels[i + 1],
                    [matched[id(s)].changes[d.key].candidate if id(s) in matched else None for s in steps],
                    run_color(i + 1),
                    _ranges(cand, spreads[i + 1], d.key),
                )
            )
        if all(v is None for s in series for v in s.values):
            continue
        charts += split(BarChart(f"chart-{d.key}", chart_title(d), d, cats, series))
    return charts


def run_charts(side_steps: list[StepValues], label: str, spread: Spread | None = None) -> list[BarChart]:
    """Charts of one side (a report without comparisons)."""
    cats = [_category(s) for s in side_steps]
    charts = []
    for d in METRICS:
        values = [s.values[d.key] for s in side_steps]
        if all(v is None for v in values):
            continue
        charts += split(
            BarChart(
                f"chart-{d.key}",
                chart_title(d),
                d,
                cats,
                [Series(label, values, run_color(0), _ranges(list(side_steps), spread or {}, d.key))],
            )
        )
    return charts


def run_color(side: int) -> str:
    """The one colour of a side of a report or comparison (0: the baseline, or the only run; then each
    candidate), wherever its runs are drawn: the report's bar and line charts and the window's Compare tabs."""
    return BASELINE_COLOR if side == 0 else CANDIDATE_COLORS[(side - 1) % len(CANDIDATE_COLORS)]


def side_colors(n: int) -> list[str]:
    """The baseline's colour, then the candidates': the same in every chart."""
    return [run_color(i) for i in range(n)]


# --- line charts: response time distribution and per-second stability ------------------------------------
@dataclass
class LineSeries:
    label: str  # "" keeps it out of the legend (a further run of a side already named)
    points: list[tuple[float, float]]
    color: str
    width: float = 1.3
    dash: bool = False
    markers: bool = False  # a dot at every point (few points: a sweep)
    point_labels: list[str] = field(default_factory=list)  # a small caption beside each point


@dataclass
class Mark:
    """A point called out on a chart: an open square and its caption (a sweep's knee)."""

    x: float
    y: float
    caption: str
    color: str = "#a8231b"


@dataclass
class LineChart:
    key: str
    title: str
    x_title: str
    y_title: str
    series: list[LineSeries]
    x_log: bool = False
    y_max: float | None = None  # fixed top of the y axis (e.g. 100 %)
    shade: tuple[float, float, str] | None = None  # x from, x to, caption (e.g. the ramp-up)
    x_min: float | None = None
    x_max: float | None = None
    plot_height: float = 120.0
    x_log2: bool = False  # a load axis that doubles: logarithmic, straight lines between the points
    x_ticks: list[tuple[float, str]] | None = None  # ticks at these x values with these labels
    marks: list[Mark] = field(default_factory=list)


def _log_ticks(lo: float, hi: float) -> list[float]:
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return [10.0**e for e in range(a, b + 1)]


def _x_tick_labels(ticks: list[tuple[float, str]], y: float, size: float) -> list[Text]:
    """The x axis' labels, each left out that would touch the one before it (its grid line stays): a curve's
    loads 1..14 or a small multiple's response times, never printed over each other. Both ends are always
    labelled: where the last would touch, the labels before it make room (the axis says where it ends)."""
    spans = [(x - text_width(label, size) / 2, x + text_width(label, size) / 2) for x, label in ticks]

    def clear_of(before: int, i: int) -> bool:  # label i starts 3 pt or more after label ``before`` ends
        return spans[i][0] >= spans[before][1] + 3

    shown: list[int] = []
    for i in range(len(ticks)):
        if not shown or clear_of(shown[-1], i):
            shown.append(i)
    last = len(ticks) - 1
    if ticks and shown[-1] != last:
        while len(shown) > 1 and not clear_of(shown[-1], last):
            shown.pop()
        if clear_of(shown[-1], last):
            shown.append(last)
    return [Text(ticks[i][0], y, ticks[i][1], size, "#555555", "middle") for i in shown]


def _point_labels(
    pts: list[tuple[float, float]],
    labels: list[str],
    size: float,
    color: str,
    width: float,
    taken: list[tuple[float, float, float, float]],
) -> list[Text]:
    """Captions beside points (right of the point, or left at the edge); one that would cover a caption
    already drawn is left out (points crowded where the load no longer raises the throughput)."""
    out = []
    for (x, y), t in zip(pts, labels, strict=False):
        w = text_width(t, size)
        right = x + 3 + w <= width
        left = x + 3 if right else x - 3 - w
        box = (left, y + 8 - size, left + w, y + 8)
        if any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in taken):
            continue
        taken.append(box)
        out.append(Text(x + 3 if right else x - 3, y + 8, t, size, color, "start" if right else "end"))
    return out


def _free_line(
    taken: list[tuple[float, float, float, float]], x0: float, x1: float, y: float, size: float, top: float
) -> float:
    """A caption's baseline near ``y`` where it covers no caption in ``taken`` (boxes x0, y0, x1, y1), which
    it joins: a line higher each time (lower where the plot's top is reached)."""
    step = size + 2
    tries = [y - k * step for k in range(6) if y - k * step >= top + size] + [
        y + k * step for k in range(1, 6)
    ]
    for cy in tries:
        box = (x0, cy - size, x1, cy + 2)
        if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in taken):
            taken.append(box)
            return cy
    return y


def _title_and_legend(d: Drawing, chart: LineChart, width: float) -> float:
    """Draws the chart's title (wrapped) and its legend (in rows); returns where the plot's top goes."""
    title_size, label_size = 10.0, 8.0
    y = title_size + 2
    lines = _title_lines(chart.title, title_size * 1.08, width)  # bold is wider
    for i, line in enumerate(lines):
        d.items.append(Text(0, y + i * (title_size + 3), line, title_size, bold=True))
    y += (title_size + 3) * (len(lines) - 1)
    y += 15
    lx = 0.0
    for s in chart.series:
        if not s.label:
            continue
        item_w = 18 + text_width(s.label, label_size) + 14
        if lx and lx + item_w > width:
            lx, y = 0.0, y + 13
        d.items.append(Line(lx, y - 3, lx + 13, y - 3, s.color, 2.0, s.dash))
        d.items.append(Text(lx + 17, y, s.label, label_size, "#333333"))
        lx += item_w
    return y + 20  # room for the y axis title above the plot


def _x_axis(chart: LineChart) -> tuple[float, float, list[float]]:
    """The x axis' range and ticks: the chart's own ticks, decades on a log axis, else nice steps."""
    xs = [p[0] for s in chart.series for p in s.points if not chart.x_log or p[0] > 0]
    if chart.x_ticks:
        ticks_x = [v for v, _ in chart.x_ticks]
        x_lo, x_hi = min(ticks_x + xs), max(ticks_x + xs)
        if x_hi <= x_lo:
            x_lo, x_hi = (x_lo / 2, x_lo * 2) if chart.x_log2 else (x_lo - 1, x_lo + 1)
    elif chart.x_log:
        ticks_x = _log_ticks(min(xs, default=0.001), max(xs, default=1.0))
        x_lo, x_hi = ticks_x[0], ticks_x[-1] if ticks_x[-1] > ticks_x[0] else ticks_x[0] * 10
    else:
        x_lo = chart.x_min if chart.x_min is not None else min(xs, default=0.0)
        top_x = chart.x_max if chart.x_max is not None else max(xs, default=1.0)
        step_x = nice_step(top_x - x_lo, 8)
        x_hi = x_lo + step_x * max(1, math.ceil((top_x - x_lo) / step_x - 1e-9))
        ticks_x = [x_lo + i * step_x for i in range(int(round((x_hi - x_lo) / step_x)) + 1)]
    return x_lo, x_hi, ticks_x


def _series_items(s: LineSeries, pts: list[tuple[float, float]], *, steps: bool) -> list[Rect | Line | Text]:
    """A series' line through its points (``steps``: a cumulative share, a step up at each bucket) and its
    markers (always for a lone point)."""
    items: list[Rect | Line | Text] = []
    for (ax, ay), (bx, by) in zip(pts, pts[1:], strict=False):
        if steps:
            items += [Line(ax, ay, bx, ay, s.color, s.width), Line(bx, ay, bx, by, s.color, s.width)]
        else:
            items.append(Line(ax, ay, bx, by, s.color, s.width, s.dash))
    if len(pts) == 1 or s.markers:
        items += [Rect(x - 1.5, yy - 1.5, 3, 3, s.color) for x, yy in pts]
    return items


def _mark(
    m: Mark,
    mx: float,
    my: float,
    top: float,
    width: float,
    size: float,
    captions: list[tuple[float, float, float, float]],
) -> list[Line | Text]:
    """An open square around the point at (mx, my), its caption beside it (left of it at the right edge), on a
    line where it covers none of the ``captions`` drawn (which it joins)."""
    r = 4.5
    w = text_width(m.caption, size)
    right = mx + r + 3 + w <= width
    cx = mx + r + 3 if right else mx - r - 3 - w
    cy = _free_line(captions, cx, cx + w, max(top + 7, my - r - 2), size, top)
    return [
        Line(mx - r, my - r, mx + r, my - r, m.color, 1.2),
        Line(mx + r, my - r, mx + r, my + r, m.color, 1.2),
        Line(mx + r, my + r, mx - r, my + r, m.color, 1.2),
        Line(mx - r, my + r, mx - r, my - r, m.color, 1.2),
        Text(
            mx + r + 3 if right else mx - r - 3,
            cy,
            m.caption,
            size,
            m.color,
            "start" if right else "end",
            bold=True,
        ),
    ]


def layout_line(chart: LineChart, width: float = 640.0) -> Drawing:
    tick_size = 7.0
    d = Drawing(width, 0)
    y = _title_and_legend(d, chart, width)
    ys = [p[1] for s in chart.series for p in s.points]
    x_lo, x_hi, ticks_x = _x_axis(chart)
    tick_text: dict[float, str] = dict(chart.x_ticks) if chart.x_ticks else {}
    top_y = chart.y_max if chart.y_max is not None else max(ys, default=1.0)
    step_y = nice_step(top_y, 4)
    y_hi = step_y * max(1, math.ceil(top_y / step_y - 1e-9)) if top_y > 0 else 1.0
    y_digits = step_decimals(step_y)
    y_w = (
        max(text_width(fmt(v * step_y, y_digits), tick_size) for v in range(int(round(y_hi / step_y)) + 1))
        + 6
    )

    def tick_label(v: float) -> str:
        if v in tick_text:
            return tick_text[v]
        return fmt_sig(v) if chart.x_log else fmt(v, 0 if v == int(v) else 1)

    x0, x1 = y_w + 12, width - text_width(tick_label(ticks_x[-1]), tick_size) / 2 - 2
    if chart.x_ticks:  # points sit on the first and last tick: room for their markers and labels
        x0 = max(x0, text_width(tick_label(ticks_x[0]), tick_size) / 2 + 2) + 6
        x1 -= 6
    top, bottom = y, y + chart.plot_height

    def px(v: float) -> float:
        if chart.x_log2:
            return x0 + (math.log2(max(v, x_lo)) - math.log2(x_lo)) / (math.log2(x_hi) - math.log2(x_lo)) * (
                x1 - x0
            )
        if chart.x_log:
            v = max(v, x_lo)
            return x0 + (math.log10(v) - math.log10(x_lo)) / (math.log10(x_hi) - math.log10(x_lo)) * (x1 - x0)
        return x0 + (v - x_lo) / ((x_hi - x_lo) or 1) * (x1 - x0)

    def py(v: float) -> float:
        return bottom - min(v, y_hi) / y_hi * (bottom - top)

    if chart.shade:
        a, b, caption = chart.shade
        d.items.append(Rect(px(a), top, max(0.0, px(min(b, x_hi)) - px(a)), bottom - top, "#eef0f3"))
        d.items.append(Text(px(a) + 3, top + 9, caption, tick_size, "#777777"))
    for i in range(int(round(y_hi / step_y)) + 1):
        yy = py(i * step_y)
        d.items.append(Line(x0, yy, x1, yy, "#e3e6ea" if i else "#9aa0a6", 0.6 if i else 0.9))
        d.items.append(Text(x0 - 4, yy + 2.5, fmt(i * step_y, y_digits), tick_size, "#555555", "end"))
    for v in ticks_x:
        d.items.append(Line(px(v), top, px(v), bottom, "#eceef1", 0.5))
    d.items += _x_tick_labels([(px(v), tick_label(v)) for v in ticks_x], bottom + 10, tick_size)
    d.items.append(Text((x0 + x1) / 2, bottom + 22, chart.x_title, tick_size, "#555555", "middle"))
    d.items.append(Text(0, top - 5, chart.y_title, tick_size, "#555555"))
    taken: list[tuple[float, float, float, float]] = []  # point labels drawn: none is printed over another
    for s in chart.series:
        pts = [(px(x), py(v)) for x, v in s.points if not chart.x_log or x > 0]
        d.items += _series_items(s, pts, steps=chart.x_log)
        d.items += _point_labels(pts, s.point_labels, tick_size - 1, s.color, width, taken)
    captions: list[tuple[float, float, float, float]] = []  # no caption printed over another
    for m in chart.marks:
        d.items += _mark(m, px(m.x), py(m.y), top, width, tick_size, captions)
    d.height = bottom + 28
    return d


# Per-step charts, one per access specification and load: the response time distribution, the share of I/Os,
# and the IOPS and response time per second (a row: a step's IOPS beside its response time); and the four
# curves of a sweep, both sides' overlaid (compare) or a run's own.
SMALL_FAMILIES = (("dist-",), ("share-",), ("iops-", "lat-"), ("sweep-compare-",), ("sweep-",))
SMALL_FROM = 3  # a family of this many charts or more is drawn as small multiples, two side by side


def family_of(key: str) -> int:
    """The index of the per-step family a chart's key belongs to, -1 for none."""
    return next((i for i, f in enumerate(SMALL_FAMILIES) if key.startswith(f)), -1)


def small_multiples(charts: list[LineChart]) -> set[str]:
    """Keys of the per-step charts drawn half-width, two a row: a sweep's 2 x 8 steps make pages, not
    dozens of them."""
    out: set[str] = set()
    for i in range(len(SMALL_FAMILIES)):
        keys = [c.key for c in charts if family_of(c.key) == i]
        if len(keys) >= SMALL_FROM:
            out.update(keys)
    return out


def draw(chart: BarChart | LineChart, width: float) -> Drawing:
    """Any report chart laid out at ``width`` points."""
    return layout_line(chart, width) if isinstance(chart, LineChart) else layout(chart, width)
