"""Chart layout (Qt-free): axis, bars proportional to values, long charts split, valid SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from app.analysis.compare import METRIC_BY_KEY
from app.report.charts import BarChart, Rect, Series, Text, layout, nice_step, split, to_svg
from app.report.tables import digits_for, fmt, pct_cell


def chart(n: int = 4, series: int = 2) -> BarChart:
    cats = [f"Spec {i} <&> \u201cquoted\u201d" for i in range(n)]
    return BarChart("chart-iops", "IOPS", METRIC_BY_KEY["iops"], cats,
                    [Series(f"Run {s + 1}", [1000.0 * (i + 1) * (s + 1) for i in range(n)], "#123456")
                     for s in range(series)])


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
    assert digits_for([0.000415, 14.5], 2) == 6 and digits_for([10809, 1530], 0) == 0
    assert digits_for([0.361, 5.2], 2) == 3
