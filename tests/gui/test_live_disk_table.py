"""The Results Display's disk table during real runs: a loop device read by two workers (one disk row, both
targets) by a local fio and through a real fio server on 127.0.0.2, and the null engine (a '—' row saying
why)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.engine.run.runner import RunOptions
from app.live.data import ALL_KEY
from app.model.plan import Target
from app.ui.main_window import MainWindow
from app.ui.run.disk_table import COLUMNS, ESTIMATED_TIP, FIXED, TARGETS
from tests.fio_servers import fio_servers
from tests.gui.conftest import local_plan
from tests.loop_disk import NEEDS_LOOP, loop_device_in

pytestmark = pytest.mark.fio


@pytest.fixture
def loop_device(tmp_path):
    yield from loop_device_in(tmp_path)


@pytest.fixture
def fio_server():
    yield from fio_servers()


def cells(table, row: int) -> list[str]:
    return [table.item(row, c).text() for c in range(table.columnCount())]


def number(text: str) -> float:
    return float(text.replace(",", ""))


@NEEDS_LOOP
def test_live_table_shows_the_disk_while_the_run_goes(window: MainWindow, tmp_path: Path, loop_device, qtbot):
    plan = local_plan(tmp_path, workers=2)
    plan.specs[0].lines[0].reads = 100  # reads only: nothing on the device is written
    for w in plan.managers[0].workers:
        w.targets = [Target(loop_device)]
    window.doc.replace(plan)
    window.run_control.run_options = RunOptions(run_time=8)
    rt = window.results_tab
    table = rt.disk_table
    assert window.run_control.start_run()
    name = os.path.basename(loop_device)
    util = len(FIXED)

    def shown() -> bool:
        return table.rowCount() == 1 and table.item(0, util) is not None and table.item(0, util).text() != "—"

    qtbot.waitUntil(shown, timeout=20000)
    assert window.controller.running  # during the run, not after it
    row = cells(table, 0)
    assert row[:2] == ["M1", name] and row[TARGETS] == loop_device  # one row for the disk both targets share
    values = dict(zip([c[0] for c in COLUMNS], row[util:TARGETS], strict=True))
    assert (
        0 < number(values["%util"]) <= 100
        and number(values["aqu-sz"]) > 0
        and number(values["await (ms)"]) > 0
    )
    assert number(values["r/s"]) > 0 and number(values["w/s"]) == 0
    assert table.item(0, util).toolTip() == ESTIMATED_TIP  # a local fio: the window is estimated, and says so
    first = cells(table, 0)
    qtbot.waitUntil(
        lambda: cells(table, 0) != first, timeout=10000
    )  # it follows the run, interval by interval
    rt.since_whole.setChecked(True)
    whole = cells(table, 0)
    rt.since_last.setChecked(True)
    assert cells(table, 0)[util:] != whole[util:]  # Last update and Start of test are different windows
    rt.set_selection(rt.scopes[-1].selection)  # one worker: its target is on the disk
    assert table.rowCount() == 1
    if os.environ.get("FIOMETER_SHOTS"):
        window.resize(1500, 900)
        rt.scope.setCurrentIndex(0)
        qtbot.waitUntil(lambda: window.live.series[ALL_KEY].n >= 5, timeout=20000)
        qtbot.wait(300)
        rt.grab().save(os.path.join(os.environ["FIOMETER_SHOTS"], "live-disk-stats.png"))
    with qtbot.waitSignal(window.controller.finished, timeout=30000):
        window.controller.stop()


@NEEDS_LOOP
def test_live_table_shows_a_remote_managers_disk(
    window: MainWindow, tmp_path: Path, loop_device, fio_server, qtbot
):
    host, port, _proc = fio_server("127.0.0.2")
    plan = local_plan(tmp_path, workers=1)
    plan.specs[0].lines[0].reads = 100
    plan.managers[0].host = f"{host}:{port}"
    plan.managers[0].workers[0].targets = [Target(loop_device)]
    window.doc.replace(plan)
    window.run_control.run_options = RunOptions(run_time=6)
    table = window.results_tab.disk_table
    util = len(FIXED)
    assert window.run_control.start_run()
    qtbot.waitUntil(
        lambda: (
            table.rowCount() == 1 and table.item(0, util) is not None and table.item(0, util).text() != "—"
        ),
        timeout=30000,
    )
    assert window.controller.running
    row = cells(table, 0)
    assert row[:2] == ["M1", os.path.basename(loop_device)] and 0 < number(row[util]) <= 100
    assert table.item(0, util).toolTip() == ""  # exact: a fio server sends the disk's own clock
    with qtbot.waitSignal(window.controller.finished, timeout=30000):
        window.controller.stop()


def test_live_table_says_why_there_are_no_disk_figures(window: MainWindow, tmp_path: Path, qtbot):
    window.doc.replace(local_plan(tmp_path, workers=1))
    window.run_control.run_options = RunOptions(engine="null", run_time=3, file_size=1 << 20)
    table = window.results_tab.disk_table
    assert window.run_control.start_run()
    qtbot.waitUntil(lambda: table.rowCount() == 1 and table.item(0, 0) is not None, timeout=20000)
    row = cells(table, 0)
    assert row[0] == "M1" and row[1] == "—" and all(v == "—" for v in row[len(FIXED) : TARGETS])
    assert row[TARGETS] not in ("", "—")  # the targets it concerns
    assert "null engine" in table.item(0, len(FIXED)).toolTip()
    with qtbot.waitSignal(window.controller.finished, timeout=30000):
        pass
