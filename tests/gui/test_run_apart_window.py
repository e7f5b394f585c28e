"""The window's run in a process of its own (app.session.run_apart): two real fio servers on 127.0.0.x, run_apart=2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.engine.run.runner import RunOptions
from app.live.data import ALL_KEY, WHOLE
from app.model.plan import Target
from app.session.run_apart import RunApart
from app.session.run_session import RunSession
from app.store import get_run, open_store
from app.ui.main_window import MainWindow
from tests.fio_servers import fio_servers
from tests.gui.conftest import local_plan

pytestmark = pytest.mark.fio


def said(window: MainWindow) -> str:
    return "\n".join(window.messages.item(i).text() for i in range(window.messages.count()))


@pytest.fixture
def fio_server():
    yield from fio_servers()


def two_server_plan(tmp_path: Path, fio_server):
    plan = local_plan(tmp_path, managers=2, workers=2)
    for i, m in enumerate(plan.managers):
        host, port, _proc = fio_server(f"127.0.0.{i + 2}")
        m.host = f"{host}:{port}"
        for wi, w in enumerate(m.workers):
            w.targets = [Target(str(tmp_path / f"{m.name}-{wi}.tst"))]
    return plan


def two_servers_in(window: MainWindow, tmp_path: Path, fio_server, run_time: int, run_apart: int) -> None:
    window.doc.replace(two_server_plan(tmp_path, fio_server))
    window.run_control.run_options = RunOptions(
        engine="null", run_time=run_time, file_size=1 << 20, run_apart=run_apart
    )


def test_a_fan_out_at_the_limit_runs_apart_and_the_window_shows_and_stores_it(
    window: MainWindow, tmp_path: Path, fio_server, qtbot
) -> None:
    two_servers_in(window, tmp_path, fio_server, run_time=3, run_apart=2)
    assert window.run_control.start_run()
    session = window.controller.session
    assert isinstance(session, RunApart) and session.pid != os.getpid()
    if os.name == "posix":
        assert os.getsid(session.pid) == session.pid  # a session of its own: not the window's CPU group
    with qtbot.waitSignal(window.controller.finished, timeout=120000) as finished:
        pass
    assert finished.args == ["complete"], said(window)
    end = window.controller.run_end
    assert (
        end is not None and end.run_id is not None and end.summary is not None and end.summary.complete == 1
    )
    assert window.live.series[ALL_KEY].ys(WHOLE, "iops")[-1] > 0  # the charts were fed from the other process
    assert window.results_tab.table.item(0, 0).text() not in ("", "—")
    assert f"Stored as run {end.run_id}" in said(window)
    with open_store(Path(os.environ["FIOMETER_DB"])) as store:
        run = get_run(store, end.run_id)
    assert run.status == "complete" and {m.name for m in run.managers} == {"M1", "M2"}
    assert window.controller.session is None and not window.controller.running


def test_below_the_limit_the_run_stays_on_a_thread_of_the_window(
    window: MainWindow, tmp_path: Path, fio_server, qtbot
) -> None:
    two_servers_in(window, tmp_path, fio_server, run_time=1, run_apart=3)
    with qtbot.waitSignal(window.controller.finished, timeout=120000) as finished:
        assert window.run_control.start_run()
        assert isinstance(window.controller.session, RunSession)
    assert finished.args == ["complete"]


def test_stop_all_and_closing_reach_a_run_apart(
    window: MainWindow, tmp_path: Path, fio_server, qtbot
) -> None:
    two_servers_in(window, tmp_path, fio_server, run_time=120, run_apart=2)
    assert window.run_control.start_run()
    qtbot.waitUntil(lambda: window.live.series.get(ALL_KEY) is not None, timeout=60000)
    with qtbot.waitSignal(window.controller.finished, timeout=60000) as finished:
        window.controller.stop()
    assert finished.args == ["stopped"]
    assert window.controller.run_end is not None and window.controller.run_end.run_id is not None
