"""Chart layout (Qt-free): axis, bars proportional to values, long charts split, valid SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from app.analysis.compare import METRIC_BY_KEY
from app.report.charts import BarChart, Rect, Series, Text, layout, nice_step, split, to_svg
from app.report.tables import fmt, fmt_sig, pct_cell, sig_decimals


def chart(n: int = 4, series: int = 2) -> BarChart:
    cats = [f"Spec {i} <&> \u201cquoted\u201d" for i in range(n)]
    return BarChart(
        "chart-iops",
        "IOPS",
        METRIC_BY_KEY["iops"],
        cats,
        [
            Series(f"Run {s + 1}", [1000.0 * (i + 1) * (s + 1) for i in range(n)], "#123456")
            for s in range(series)
        ],
    )


@pytest.mark.parametrize(("top", "step"), [(12167, 2500), (954.76, 200), (0.784, 0.2), (5.25, 2), (100, 20)])
def test_nice_steps(top, step):
    assert nice_step(top) == pytest.approx(step)


def test_bars_are_proportional_and_labelled():
    d = layout(chart(), 600)
    bars = [it for it in d.items if isinstance(it, Rect) and it.h > 9]
    assert len(bars) == 8
    widths = sorted(b.w for b in bars)
    assert widths[-1] / widths[0] == pytest.approx(8000 / 1000)
    texts = [it.text for it in d.items if isinstance(it, Text)]
    assert "8,000" in texts and "IOPS (higher is better)" in texts
    assert max(b.x + b.w for b in bars) < 600


def test_long_charts_are_split_so_each_fits_a_page():
    parts = split(chart(60, 3))
    assert len(parts) > 1 and sum(len(p.categories) for p in parts) == 60
    assert parts[0].title.endswith(f"(1/{len(parts)})")
    assert all(layout(p, 480).height < 700 for p in parts)
    assert parts[1].series[2].values[0] == chart(60, 3).series[2].values[len(parts[0].categories)]


def test_svg_is_well_formed_and_escaped():
    svg = to_svg(layout(chart(), 600), "IOPS <chart>")
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert any("Spec 0 <&>" in (t.text or "") for t in root.iter("{http://www.w3.org/2000/svg}text"))


def test_number_formatting():
    assert fmt(-2.5, 2) == "\u22122.50" and fmt(877, 0, sign=True) == "+877" and fmt(None, 2) == "\u2013"
    assert fmt(-0.0004, 2) == "0.00"  # no sign on a value that rounds to zero
    assert pct_cell(-0.04).text == "0.0 %" and pct_cell(8.11).text == "+8.1 %"


def test_axis_ticks_show_every_step_exactly():
    from app.report.charts import LineChart, LineSeries, layout_line, step_decimals

    assert [step_decimals(x) for x in (2.5, 0.25, 2000, 0.2, 5)] == [1, 2, 0, 1, 0]
    d = layout_line(
        LineChart("c", "t", "x", "ms", [LineSeries("a", [(0, 1.0), (1, 9.6)], "#000")], x_min=0, x_max=1)
    )
    ticks = [it.text for it in d.items if isinstance(it, Text) and it.anchor == "end"]
    assert ticks == ["0.0", "2.5", "5.0", "7.5", "10.0"]


def test_one_number_rule_three_significant_digits_whole_numbers_from_100():
    assert [fmt_sig(v) for v in (12345.6, 337.78, 23.87, 8.642, 0.2123, 0.000415)] == [
        "12,346",
        "338",
        "23.9",
        "8.64",
        "0.212",
        "0.000415",
    ]
    assert sig_decimals(0) == 0 and sig_decimals(None) == 0 and fmt_sig(-1.234, sign=True) == "\u22121.23"


def test_error_bars_span_the_lowest_to_the_highest_run():
    from app.report.charts import Line

    c = chart(2, 1)
    c.series[0].ranges = [(800.0, 1300.0), None]
    d = layout(c, 600)
    bars = sorted((it for it in d.items if isinstance(it, Rect) and it.h > 9), key=lambda r: r.y)
    scale = bars[0].w / 1000.0
    horizontal = [
        it
        for it in d.items
        if isinstance(it, Line) and it.y1 == it.y2 and bars[0].y < it.y1 < bars[0].y + bars[0].h
    ]
    assert len(horizontal) == 1
    bar = horizontal[0]
    assert bar.x1 - bars[0].x == pytest.approx(800 * scale) and bar.x2 - bars[0].x == pytest.approx(
        1300 * scale
    )
    assert not [
        it
        for it in d.items
        if isinstance(it, Line) and it.y1 == it.y2 and bars[1].y < it.y1 < bars[1].y + bars[1].h
    ]


def test_one_function_gives_each_side_its_colour() -> None:
    from app.report.charts import BASELINE_COLOR, run_color, side_colors

    assert run_color(0) == BASELINE_COLOR and side_colors(3) == [run_color(0), run_color(1), run_color(2)]
    assert len({run_color(i) for i in range(6)}) == 6  # the baseline and five candidates all differ


def test_a_single_run_report_draws_the_run_in_one_colour(tmp_path) -> None:
    from app.report.charts import run_color
    from app.report.document import ReportMeta, build_report
    from app.store import open_store
    from tests.gui.history_support import before_after_store

    before, _after = before_after_store(tmp_path / "r.db")
    with open_store(tmp_path / "r.db") as store:
        rep = build_report(store, [before], [], ReportMeta())
    bars = {s.color for ch in rep.charts for s in ch.series}
    lines = {s.color for ch in rep.line_charts for s in ch.series}
    assert bars == {run_color(0)} and lines == {run_color(0)}  # the bars were blue, its lines grey


@pytest.mark.parametrize("seconds,drawn", [(2, False), (3, True)])
def test_per_second_charts_need_a_few_seconds_to_draw_a_line(tmp_path, seconds, drawn) -> None:
    from app.report.document import ReportMeta, build_report
    from app.store import open_store
    from tests.gui.history_support import add_samples, before_after_store

    before, _after = before_after_store(tmp_path / "r.db", samples=False)
    with open_store(tmp_path / "r.db") as store:
        add_samples(store, before, seconds=seconds)
        rep = build_report(store, [before], [], ReportMeta())
    timelines = [ch for ch in rep.line_charts if ch.key.startswith(("iops-", "lat-"))]
    assert bool(timelines) is drawn  # two seconds drew lone dots, not lines
    assert all(len(s.points) == seconds for ch in timelines for s in ch.series)


@pytest.mark.parametrize("width", [640.0, 240.0])
@pytest.mark.parametrize(
    "ticks",
    [
        None,  # a logarithmic axis of response times: 0.000010 .. 100
        [(float(v), str(v)) for v in range(1, 15)],  # a curve's loads 1..14 (the overlapping "14")
        [(float(v), f"QD {v}") for v in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)],
    ],
)
def test_axis_tick_labels_never_overlap(width, ticks) -> None:
    """A tick label that would touch its neighbour is left out (the grid line stays); at full width and as a
    small multiple."""
    from app.report.charts import LineChart, LineSeries, layout_line, text_width

    pts = [(1e-5, 1.0), (50.0, 100.0)] if ticks is None else [(x, x) for x, _ in ticks]
    chart = LineChart("k", "t", "x", "y", [LineSeries("a", pts, "#000")], x_log=ticks is None, x_ticks=ticks)
    d = layout_line(chart, width)
    bottom = max(t.y for t in d.items if isinstance(t, Text) and t.text == "x") - 12  # the x tick row
    labels = sorted(
        (t.x, text_width(t.text, t.size)) for t in d.items if isinstance(t, Text) and t.y == bottom
    )
    assert len(labels) >= 2
    for (xa, wa), (xb, wb) in zip(labels, labels[1:], strict=False):
        assert xa + wa / 2 < xb - wb / 2, labels


def test_point_captions_never_cover_each_other() -> None:
    """A curve's loads 8..14 crowd where the throughput no longer rises: their captions are not printed over
    each other (each drawn one keeps its place, the rest are left out)."""
    from app.report.charts import LineChart, LineSeries, layout_line, text_width

    pts = [(100.0 * v, float(v)) if v < 8 else (800.0 + v, 8 + v / 10) for v in range(1, 15)]
    labels = [f"QD {v}" for v in range(1, 15)]
    series = LineSeries("a", pts, "#123456", markers=True, point_labels=labels)
    d = layout_line(LineChart("k", "t", "IOPS", "ms", [series]), 300.0)
    caps = [t for t in d.items if isinstance(t, Text) and t.text in labels]
    assert 2 <= len(caps) < len(labels)
    boxes = [
        (
            t.x if t.anchor == "start" else t.x - text_width(t.text, t.size),
            t.y - t.size,
            text_width(t.text, t.size),
        )
        for t in caps
    ]
    for i, (x, y, w) in enumerate(boxes):
        for x2, y2, w2 in boxes[i + 1 :]:
            assert not (x < x2 + w2 and x2 < x + w and y < y2 + caps[0].size and y2 < y + caps[0].size), boxes


def test_knee_captions_of_two_sides_never_cover_each_other() -> None:
    """Before and after overlaid: both knees at the same place (QD 1, low response time), their captions each
    on a line of their own, near their marks."""
    from app.report.charts import LineChart, LineSeries, Mark, layout_line, text_width

    a = LineSeries("before", [(400.0, 0.5), (420.0, 40.0), (430.0, 150.0)], "#888", markers=True)
    b = LineSeries("after", [(790.0, 0.6), (820.0, 40.0), (860.0, 75.0)], "#27c", markers=True)
    marks = [Mark(400.0, 0.5, "knee (before): QD 1"), Mark(790.0, 0.6, "knee (after): QD 1")]
    d = layout_line(LineChart("k", "t", "IOPS", "ms", [a, b], x_min=0.0, marks=marks), 300.0)
    caps = [t for t in d.items if isinstance(t, Text) and t.text.startswith("knee")]
    assert len(caps) == 2
    boxes = [
        (
            t.x if t.anchor == "start" else t.x - text_width(t.text, t.size),
            t.y - t.size,
            text_width(t.text, t.size),
        )
        for t in caps
    ]
    (x, y, w), (x2, y2, w2) = boxes
    assert not (x < x2 + w2 and x2 < x + w and y < y2 + caps[0].size and y2 < y + caps[0].size), boxes


def test_a_long_title_takes_three_lines_at_half_width_and_the_legend_comes_after() -> None:
    from app.report.charts import LineChart, LineSeries, layout_line

    title = "Response time (solid: average, dashed: p99): dd read 64k \u2026 dd read 4096k over transfer size"
    d = layout_line(
        LineChart("k", title, "x", "ms", [LineSeries("before", [(1.0, 1.0), (2.0, 2.0)], "#000")]), 250.0
    )
    lines = [t for t in d.items if isinstance(t, Text) and t.bold]
    assert len(lines) == 3 and " ".join(t.text for t in lines) == title  # whole, nothing cut
    legend = next(t for t in d.items if isinstance(t, Text) and t.text == "before")
    assert legend.y - legend.size > lines[-1].y  # below the title's last line, not over it


def test_a_load_on_one_object_says_so() -> None:
    from app.analysis.compare import load_text
    from app.report.workloads import target_names

    assert load_text(1, 1, 4, 4, 4, 4, "device") == "QD 1, 4 workers on one device"
    assert load_text(1, 1, 4, 4, 4, 4) == "QD 1, 4 workers, 4 targets"
    assert load_text(8, 8, 1, 1, 4, 4, "file") == "QD 8, 4 targets on one file"
    assert load_text(1, 1, 1, 1, 1, 1, "device") == "QD 1"
    assert target_names(["TESTFILE"] * 4) == "TESTFILE (4 jobs)"
    assert target_names(["A", "B"]) == "A, B" and target_names([]) == "\u2013"


@pytest.mark.parametrize("width", [160.0, 200.0, 260.0, 320.0, 640.0])
@pytest.mark.parametrize("top", [10, 14, 37, 120, 3600])
def test_a_line_charts_x_axis_labels_both_ends_and_never_overlaps(width: float, top: int) -> None:
    """A small multiple's time axis 0..10 s had no "10" (the last label was left out as it touched the one
    before it): both ends are labelled at every width, labels left out in between instead, none touching."""
    from app.report.charts import LineChart, LineSeries, layout_line, text_width

    chart = LineChart(
        "iops-1", "IOPS", "time (s)", "IOPS", [LineSeries("ALL", [(0, 5.0), (top, 9.0)], "#000")]
    )
    d = layout_line(chart, width)
    axis_y = max(
        t.y for t in d.items if isinstance(t, Text) and t.anchor == "middle" and t.text != "time (s)"
    )
    labels = [t for t in d.items if isinstance(t, Text) and t.y == axis_y and t.text != "time (s)"]
    values = [float(t.text.replace(",", "")) for t in labels]
    assert values[0] == 0 and values[-1] >= top, values
    spans = sorted(
        (t.x - text_width(t.text, t.size) / 2, t.x + text_width(t.text, t.size) / 2) for t in labels
    )
    assert all(b[0] >= a[1] for a, b in zip(spans, spans[1:], strict=False)), spans
