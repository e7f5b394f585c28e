"""Hundreds of worker series: each manager's workers drawn as one band, their lowest to their highest."""

from __future__ import annotations

import numpy as np

from app.ui.run.charts import BAND_SERIES, ChartGrid
from app.ui.run.live_data import CHART_FIELDS, KINDS, LAST, LiveResults, Series


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
    assert {tuple(r) for r in per_colour[1][:3]} <= {(float(i), float(w[i - 1]), float(i + 1), float(w[i]))
                                                     for w in m1 for i in range(1, 50)}
