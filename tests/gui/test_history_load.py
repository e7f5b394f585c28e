"""The History list's Load column: runs with the same name and plan told apart by their queue depths and
workers (read for all runs in one grouped query), on a real store file."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt

from app.store import Store, open_store
from app.store.overview import RunLoad, run_loads
from app.store.recorder import Recorder
from app.store.records import ManagerInfo, WorkerInfo
from app.ui.history.history_model import COLUMNS, SORT_ROLE, load_text
from app.ui.main_window import MainWindow
from tests.gui.test_history import rows, show_history

SHOTS = Path(os.environ.get("FIOMETER_SHOTS", "/tmp/fiometer-shots"))


def io_test_run(
    store: Store,
    steps: list[tuple[int | None, int]],
    worker_qds: tuple[int, ...] = (1,),
    tags: tuple[str, ...] = (),
) -> int:
    """A run named "IO-Test" (plan "IO-Test") whose steps have these (queue depth, active workers)."""
    rec = Recorder(store)
    run_id = rec.begin_run(
        {"name": "IO-Test"}, plan_name="IO-Test", name="IO-Test", tags=list(tags), host={"hostname": "lab1"}
    )
    rec.add_managers(run_id, [ManagerInfo("M1", "local", "Linux", "3.33")])
    rec.add_workers(
        run_id,
        [
            WorkerInfo("M1", f"w{i}", f"Worker {i + 1}", {"queue_depth": qd})
            for i, qd in enumerate(worker_qds)
        ],
    )
    for index, (qd, workers) in enumerate(steps):
        step = rec.begin_step(
            run_id,
            index,
            spec_name="4K random read",
            queue_depth=qd,
            active_workers=[["M1", f"w{i}"] for i in range(workers)],
            run_s=10,
        )
        rec.end_step(step, "complete")
    rec.end_run(run_id, "complete")
    return run_id


def test_load_text() -> None:
    assert load_text(RunLoad(8, 64, 1, 1)) == "QD 8\u201364, 1 worker"
    assert load_text(RunLoad(4, 4, 1, 4)) == "QD 4, 1\u20134 workers"
    assert load_text(RunLoad(None, None, 2, 2)) == "2 workers"
    assert load_text(None) == ""


def test_runs_with_the_same_name_differ_by_their_load(window: MainWindow, qtbot) -> None:
    db = Path(os.environ["FIOMETER_DB"])
    with open_store(db) as store:
        cycled = io_test_run(store, [(8, 1), (16, 1), (32, 1), (64, 1)])
        deep = io_test_run(store, [(64, 4), (64, 4)], worker_qds=(64, 64, 64, 64), tags=("nvme",))
        mixed = io_test_run(store, [(None, 2)], worker_qds=(1, 32))  # two workers with their own depths
        empty = io_test_run(store, [])
        loads = run_loads(store)
    assert loads[cycled] == RunLoad(8, 64, 1, 1)
    assert loads[mixed] == RunLoad(1, 32, 2, 2)
    assert empty not in loads

    ui = show_history(window, qtbot)
    shown = {int(r["Run"]): r for r in rows(ui)}
    assert {shown[i]["Name"] for i in (cycled, deep, mixed)} == {"IO-Test"}
    assert shown[cycled]["Load"] == "QD 8\u201364, 1 worker"
    assert shown[deep]["Load"] == "QD 64, 4 workers" and shown[deep]["Tags"] == "nvme"
    assert shown[mixed]["Load"] == "QD 1\u201332, 2 workers"
    assert shown[empty]["Load"] == ""
    # sorting by Load puts the deepest queue first (descending)
    col = COLUMNS.index("Load")
    ui.list.view.sortByColumn(col, Qt.SortOrder.DescendingOrder)
    p = ui.list.proxy
    order = [int(p.index(r, 0).data()) for r in range(p.rowCount())]
    assert order == [deep, cycled, mixed, empty]
    assert isinstance(p.index(0, col).data(SORT_ROLE), int)

    window.resize(1366, 768)
    qtbot.waitUntil(lambda: window.width() == 1366, timeout=5000)
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert window.grab().save(str(SHOTS / "history-load-column.png"))
