"""The History run view's Sweep tab: shown only for sweep runs, its curves the stored numbers, the knee marked."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from app.store import open_store
from app.ui.history.run_view import RunView
from app.ui.main_window import MainWindow
from tests.stored_runs import RunSpec, StepSpec, record

RND8K = "8192,100,100,100,0,1,8192,0"
SEQ1M = "1048576,100,0,0,0,1,0,0"
# (QD, IOPS, avg ms, p99 ms): IOPS per ms peaks at QD 8 (9,000 / 0.9 = 10,000)
SMALL = [
    (1, 1000, 1.0, 2.0),
    (2, 2000, 1.0, 2.0),
    (4, 4000, 1.0, 2.0),
    (8, 9000, 0.9, 2.0),
    (16, 9500, 1.7, 4.0),
    (32, 9600, 3.3, 8.0),
]


def db_path() -> Path:
    return Path(os.environ["FIOMETER_DB"])


def sweep_run() -> int:
    steps = [
        StepSpec("Small random 8k read", iops, iops * 8192 / 1e6, avg, avg * 3, p99, qd=qd, lines=RND8K)
        for qd, iops, avg, p99 in SMALL
    ]
    steps += [
        StepSpec(
            "Large sequential 1M read",
            100 * qd,
            100 * qd * 1.048576,
            2.0 * qd,
            9.0 * qd,
            3.0 * qd,
            qd=qd,
            lines=SEQ1M,
        )
        for qd in (1, 2, 4)
    ]
    with open_store(db_path()) as store:
        return record(store, RunSpec(steps, name="Orion-style sweep"))


def opened(window: MainWindow, qtbot, run_id: int) -> RunView:
    ui = window.history
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.show_history()
    view = ui.open_run(run_id)
    qtbot.waitUntil(lambda: view.data is not None, timeout=10000)
    return view


def curve(plot, index: int = 0) -> list[tuple[float, float]]:
    x, y = plot.plot.listDataItems()[index].getData()
    return [(round(float(a), 6), round(float(b), 6)) for a, b in zip(x, y, strict=True)]


def test_a_sweep_run_has_a_sweep_tab_with_its_curves_and_knee(window: MainWindow, qtbot) -> None:
    run_id = sweep_run()
    view = opened(window, qtbot, run_id)
    assert [view.views.tabText(i) for i in range(view.views.count())] == [
        "Over time",
        "Response time distribution",
        "Sweep",
        "Results per step",
    ]
    sweep = view.sweep
    assert [sweep.choice.itemText(i) for i in range(sweep.choice.count())] == [
        "Small random 8k read over queue depth",
        "Large sequential 1M read over queue depth",
    ]
    assert "Small random 8k read: knee at QD 8" in sweep.summary.text()
    plots = sweep.plots
    # IOPS over log2(QD): x = 0, 1, 2 ... and the stored IOPS
    assert curve(plots["iops"]) == [
        (math.log2(qd), pytest.approx(iops, rel=1e-3)) for qd, iops, _a, _p in SMALL
    ]
    ticks = plots["iops"].plot.getAxis("bottom")._tickLevels[0]
    assert [t for _v, t in ticks] == ["1", "2", "4", "8", "16", "32"]
    assert [b for _a, b in curve(plots["lat"], 0)] == pytest.approx([a for _q, _i, a, _p in SMALL], rel=1e-3)
    assert [b for _a, b in curve(plots["lat"], 1)] == pytest.approx([p for _q, _i, _a, p in SMALL], rel=1e-2)
    # response time against IOPS, then the knee's open square at QD 8's point
    knee_curve = curve(plots["knee"], 0)
    assert knee_curve == [(pytest.approx(i, rel=1e-3), pytest.approx(a, rel=1e-3)) for _q, i, a, _p in SMALL]
    (mark,) = [c for c in curve(plots["knee"], 1)]
    assert mark == (pytest.approx(9000, rel=1e-3), pytest.approx(0.9, rel=1e-3))
    texts = [it.toPlainText() for it in plots["knee"].plot.items if hasattr(it, "toPlainText")]
    assert "knee: QD 8" in texts and {"1", "32"} <= set(texts)
    # the other family
    sweep.choice.setCurrentIndex(1)
    assert [b for _a, b in curve(plots["iops"])] == pytest.approx([100, 200, 400], rel=1e-3)
    assert sweep.summary.text().startswith("Large sequential 1M read: maximum IOPS 400 at QD 4")
    view.views.setCurrentWidget(sweep)
    assert not view.scope.isEnabled() and not view.step.isEnabled()  # Show and Step are for the other tabs
    view.resize(1100, 800)
    assert not sweep.grab().isNull()


def test_a_run_that_is_no_sweep_has_no_sweep_tab(window: MainWindow, qtbot) -> None:
    steps = [
        StepSpec("Small random 8k read", 9000, 73.7, 0.9, 3.0, 2.0, qd=8, lines=RND8K),
        StepSpec("Large sequential 1M read", 400, 419.4, 8.0, 36.0, 12.0, qd=8, lines=SEQ1M),
    ]
    with open_store(db_path()) as store:
        fixed = record(store, RunSpec(steps, name="Two fixed steps"))
    view = opened(window, qtbot, fixed)
    assert [view.views.tabText(i) for i in range(view.views.count())] == [
        "Over time",
        "Response time distribution",
        "Results per step",
    ]
    assert view.sweep.families == []
