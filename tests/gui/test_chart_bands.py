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
    items = iops.many._groups
    assert len(items) == 2 * 2  # per manager: its two outline lines, then the band's vertical spans
    spans = items[1][1].ndarray()  # manager M0's spans: x, lo, x, hi
    m0 = np.array([v[0] for k, v in values.items() if k[1] == "M0"])  # iops of M0's workers [k, n]
    at = {float(x): (lo, hi) for x, lo, _x, hi in spans}
    x = 10.0
    assert at[x] == (m0[:, 9].min(), m0[:, 9].max())


def test_up_to_the_limit_a_line_per_worker(qtbot) -> None:
    grid, _live, _values = _grid(qtbot, 2, 20)
    assert not grid.bands and "one line per worker" in grid.legend.text()
    assert len(grid.charts[0].many._groups) == 2
