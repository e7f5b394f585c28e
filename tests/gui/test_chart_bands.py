"""Hundreds of worker series: each manager's workers drawn as one band, their lowest to their highest."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QImage

from app.live.data import CHART_FIELDS, KINDS, LAST, Block, LiveResults, Series
from app.ui.charts.chart_grid import BAND_SERIES, ChartGrid


def _grid(qtbot, managers: int, workers: int) -> tuple[ChartGrid, LiveResults, dict]:
    grid = ChartGrid()
    qtbot.addWidget(grid)
    grid.resize(1000, 600)
    keys = [("worker", f"M{m}", f"w{w}") for m in range(managers) for w in range(workers)]
    live = LiveResults()
    rng = np.random.default_rng(5)
    values = {}
    for j, key in enumerate(keys):
        s = Series()
        n = 50
        s.x = np.arange(1, n + 1, dtype=np.float64)
        v = (1000 + 10 * j + 50 * rng.standard_normal((len(CHART_FIELDS), n))).astype(np.float32)
        s.values = {k: v.copy() for k in KINDS}
        s.n = n
        live.series[key] = s
        values[key] = v
    live.revision += 1
    grid.set_series(keys, [f"{k[1]} / {k[2]}" for k in keys])
    grid.show()
    grid.redraw(live, LAST, force=True)
    return grid, live, values


def test_beyond_the_limit_each_manager_is_one_band(qtbot) -> None:
    grid, _live, values = _grid(qtbot, 2, BAND_SERIES // 2 + 1)
    assert grid.bands and "a band from its lowest to its highest worker" in grid.legend.text()
    iops = grid.charts[CHART_FIELDS.index("iops")]
    per_colour = iops.many.colour_lines()
    assert len(per_colour) == 2  # one colour per manager
    m0 = np.array([v[0] for k, v in values.items() if k[1] == "M0"])  # iops of M0's workers [k, n]
    lines = per_colour[0]
    spans = lines[lines[:, 0] == lines[:, 2]]  # the band's vertical spans: x, lo, x, hi
    at = {float(x): (lo, hi) for x, lo, _x, hi in spans}
    assert at[10.0] == (m0[:, 9].min(), m0[:, 9].max())
    outline = lines[lines[:, 0] != lines[:, 2]]  # its lowest and its highest worker, point to point
    assert (9.0, m0[:, 8].min(), 10.0, m0[:, 9].min()) in {tuple(r) for r in outline}
    assert (9.0, m0[:, 8].max(), 10.0, m0[:, 9].max()) in {tuple(r) for r in outline}


def test_up_to_the_limit_a_line_per_worker(qtbot) -> None:
    grid, _live, values = _grid(qtbot, 2, 20)
    assert not grid.bands and "one line per worker" in grid.legend.text()
    per_colour = grid.charts[0].many.colour_lines()
    assert len(per_colour) == 2
    m1 = [v[0] for k, v in values.items() if k[1] == "M1"]
    assert len(per_colour[1]) == 20 * 49  # 50 points, each its own bin: 49 segments per worker
    assert {tuple(r) for r in per_colour[1][:3]} <= {
        (float(i), float(w[i - 1]), float(i + 1), float(w[i])) for w in m1 for i in range(1, 50)
    }


def _live_block(managers: int, workers: int, points: int, spare: int) -> tuple[list, LiveResults]:
    """Series as a live run keeps them (one block per level), with ``spare`` points more to come."""
    keys = [("worker", f"M{m}", f"w{w}") for m in range(managers) for w in range(workers)]
    live = LiveResults()
    rng = np.random.default_rng(11)
    total = points + spare
    for j, key in enumerate(keys):
        s = Series()
        s.x = np.arange(1, total + 1, dtype=np.float64)
        v = (1100 + 2 * j + 40 * rng.standard_normal((len(CHART_FIELDS), total))).astype(np.float32)
        v[:, 30] = np.nan  # a gap where a step starts
        s.values = {k: v.copy() for k in KINDS}
        s.n = total
        live.blocks.setdefault("worker", Block()).add(s)
        s.n = points
        live.series[key] = s
    live.revision += 1
    return keys, live


def _pixels(widget) -> np.ndarray:
    img = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    return (
        np.frombuffer(img.constBits(), np.uint8)
        .reshape(img.height(), img.bytesPerLine())[:, : img.width() * 4]
        .copy()
    )


@pytest.mark.parametrize("workers", [20, BAND_SERIES // 2 + 1])
def test_live_updates_repaint_only_the_newest_strip_and_match_a_full_redraw(qtbot, workers: int) -> None:
    keys, live = _live_block(2, workers, 60, 12)
    labels = [f"{k[1]} / {k[2]}" for k in keys]
    inc = ChartGrid()
    qtbot.addWidget(inc)
    inc.resize(900, 600)
    inc.set_series(keys, labels)
    with qtbot.waitExposed(inc):  # painted as on screen: into the charts' kept pictures
        inc.show()
    inc.redraw(live, LAST, force=True)
    chart = inc.charts[0]
    chart.widget.viewport().repaint()
    strips = []
    real_update = chart.many.update
    chart.many.update = lambda *rect: (strips.append(rect), real_update(*rect))
    for _ in range(12):  # live updates: a point more in every series
        for s in live.series.values():
            s.n += 1
        live.revision += 1
        inc.redraw(live, LAST)
        for c in inc.charts:
            c.widget.viewport().repaint()
    # after the first update (the axes found their range), only the strip right of the newest bins again
    assert len(strips) == 12 and all(r and r[0].left() > 0.5 * inc.x_top for r in strips[1:])
    full = ChartGrid()  # the same points drawn in one go, on the same time axis
    qtbot.addWidget(full)
    full.resize(900, 600)
    full.set_series(keys, labels)
    full.show()
    for s in live.series.values():  # the axis grows with the data: let it grow as the incremental one's did
        s.n -= 12
    full.redraw(live, LAST, force=True)
    for s in live.series.values():
        s.n += 12
    full._grid = None  # nothing kept from that drawing: every bin decimated again
    full.redraw(live, LAST, force=True)
    assert [c.y_top for c in full.charts] == [c.y_top for c in inc.charts] and full.x_top == inc.x_top
    a, b = _pixels(inc), _pixels(full)
    assert a.shape == b.shape
    differ = np.count_nonzero((a != b).reshape(a.shape[0], -1, 4).any(axis=2))
    assert differ <= 0.001 * a.shape[0] * a.shape[1] / 4
