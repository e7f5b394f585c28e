"""Screenshots of the charts: each chart's statistic chosen from its menu, the p99 line at 4 s updates, step
names above the plots, the dark theme, a stored run's charts, and one colour per run in a comparison.
A real local fio run (null engine, two 20 s steps) feeds the live charts; the History pictures use the
demo database of history_shots.py.
Run: QT_QPA_PLATFORM=offscreen python docs/screenshots/chart_shots.py"""

from __future__ import annotations

import sys
import tempfile
from datetime import timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from history_shots import NOW, demo_run  # noqa: E402
from shot_kit import settle, start_app, two_spec_plan  # noqa: E402

from app.engine.run.runner import RunOptions  # noqa: E402
from app.live.data import LAST  # noqa: E402
from app.store import open_store  # noqa: E402
from app.ui import settings as prefs  # noqa: E402
from app.ui import theme  # noqa: E402
from app.ui.launch import HeadlessWindow  # noqa: E402
from tests.stored_runs import AFTER, BEFORE  # noqa: E402

SIZE = (1280, 800)


def save(widget, name: str) -> None:
    widget.grab().save(str(HERE / name))
    print(HERE / name)


def live_run(win: HeadlessWindow, tmp: Path) -> None:
    plan = two_spec_plan(tmp, "Charts at 4 s updates")
    plan.setup.update_frequency = 4
    plan.setup.update_type = LAST
    win.doc.replace(plan)
    win.run_control.run_options = RunOptions(engine="null", run_time=20)
    assert win.run_control.start_run()
    while win.controller.running:
        settle(0.2)
    settle(0.5)


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="fiometer-chart-shots-"))
    start_app(tmp)
    db = tmp / "results.db"
    with open_store(db) as store:
        before = demo_run(
            store, "EVA 4400 32 disks Vraid5", BEFORE, NOW - timedelta(days=12), tags=("before",)
        )
        after = demo_run(store, "EVA 4400 36 disks Vraid1", AFTER, NOW - timedelta(days=1), tags=("after",))

    win = HeadlessWindow(prefs.app_settings(), persist=False, db_path=db)
    win.show()
    win.resize(*SIZE)
    settle()
    live_run(win, tmp)
    tab = win.results_tab
    win.tabs.setCurrentWidget(tab)
    tab.scope.setCurrentIndex(tab.scope.findText("Each worker (all managers)"))
    tab.splitter.setSizes([800, 440])
    for i, field in enumerate(("iops", "cpu_pct", "lat_mean_ms", "p99_ms")):
        tab.charts.set_statistic(i, field)
    tab.redraw(force=True)
    settle(0.5)
    save(win, "chart-statistic-selector.png")
    save(tab.charts.charts[2].box, "chart-p99-4s-updates.png")
    win.set_theme(theme.DARK)
    settle(0.5)
    save(win, "chart-dark-theme.png")
    win.set_theme(theme.LIGHT)
    settle(0.3)

    ui = win.history
    ui.show_history()
    while ui.tasks.busy:
        settle(0.1)
    run = ui.open_run(before)
    while run.data is None:
        settle(0.1)
    run.charts.set_statistic(1, "p99_ms")
    run.charts.set_statistic(3, "errors")
    settle(0.5)
    save(win, "history-chart-statistics.png")

    ui.list.select_runs([before, after])
    ui.list._compare_selected()
    view = ui.workspace.currentWidget()
    while view.data is None:
        settle(0.1)
    for i, name in ((2, "compare-run-colours-over-time.png"), (1, "compare-run-colours-bars.png")):
        view.inner_tabs.setCurrentIndex(i)
        settle(0.5)
        save(win, name)
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
