"""The window tells the truth about a run: steps ran / stopped / skipped in the status bar, and an
unexpected error is logged and shown with the log's path."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from app import diagnostics
from app.engine.run.runner import RunOptions
from app.ui import crash
from app.ui.main_window import MainWindow
from tests.gui.conftest import local_plan


@pytest.mark.fio
def test_status_bar_counts_the_steps_that_ran(window: MainWindow, tmp_path: Path, qtbot) -> None:
    """Stop (Esc) on step 1, Stop All on step 2 of 3: two stopped, one skipped (it said "3 step(s)")."""
    plan = local_plan(tmp_path, workers=1, specs=("S", "T", "U"))
    window.doc.replace(plan)
    window.run_control.run_options = RunOptions(engine="null", run_time=60, file_size=1 << 20)
    assert window.run_control.start_run()
    assert window.status_step.text() == "Step 1/3"
    reported: list[int] = []  # step index of every batch of samples
    assert window.controller.listener is not None
    window.controller.listener.samplesArrived.connect(lambda index, _offset, _samples: reported.append(index))
    qtbot.waitUntil(lambda: 0 in reported, timeout=30000)
    window.run_control.stop_run()
    qtbot.waitUntil(lambda: 1 in reported, timeout=30000)
    window.run_control.stop_all()
    with qtbot.waitSignal(window.controller.finished, timeout=30000) as finished:
        pass
    assert finished.args == ["stopped"]
    window.run_control.update_status()
    assert window.status_state.text() == "Last run: stopped"
    assert window.status_step.text() == "2 of 3 steps ran (2 stopped); 1 skipped"
    messages = [window.messages.item(i).text() for i in range(window.messages.count())]
    assert "Run stopped: 2 of 3 steps ran (2 stopped); 1 skipped" in messages


@pytest.fixture
def hooks():
    saved = sys.excepthook, threading.excepthook
    yield
    sys.excepthook, threading.excepthook = saved


def test_unexpected_error_in_the_window_is_logged_and_shown_with_the_log_path(
    qtbot, hooks, monkeypatch
) -> None:
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(
        crash.QMessageBox, "critical", lambda parent, title, text: shown.append((title, text))
    )
    crash.install(show_dialog=True)
    try:
        raise KeyError("a slot went wrong")
    except KeyError as e:
        sys.excepthook(type(e), e, e.__traceback__)
    ((title, text),) = shown
    log = diagnostics.log_path()
    assert title == crash.TITLE and str(log) in text and "KeyError" in text and "Traceback" not in text
    logged = log.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in logged and "a slot went wrong" in logged

    def worker() -> None:
        raise RuntimeError("a thread went wrong")

    t = threading.Thread(target=worker, name="fiometer-test")
    t.start()
    t.join()
    assert "a thread went wrong" in log.read_text(encoding="utf-8")
    assert len(shown) == 1  # no dialog from another thread
