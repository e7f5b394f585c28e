"""GUI test fixtures: real widgets, offscreen, and settings in a temporary folder (never the user's)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.model import planfile
from app.model.plan import LOCAL, Plan, SpecLine, Target
from tests.helpers import grid


@pytest.fixture(autouse=True)
def private_settings(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    from app.ui.settings import ENV_DIR, use_settings_dir

    folder = tmp_path_factory.mktemp("settings")
    use_settings_dir(folder)
    monkeypatch.setenv(ENV_DIR, str(folder))
    monkeypatch.setenv("FIOMETER_DB", str(folder / "results.db"))  # never the user's results database
    return folder


@pytest.fixture(autouse=True)
def collector_on_the_gui_thread(qapp):
    """As in the app (app/ui/gui_collector.py): Python's collector runs on the GUI thread only, here also
    after each test for what the test made without running the event loop. The tests outside tests/gui that
    run later in the same process get Python's automatic collection back."""
    import gc

    from app.ui.gui_collector import collect_due, collect_on_gui_thread

    collect_on_gui_thread(qapp)  # (turns automatic collection off, as MainWindow and StoreTasks do)
    yield
    collect_due()
    gc.enable()


class Recorder:
    """Stands in for modal message boxes: records what the window wanted to say or ask."""

    def __init__(self, answer: bool = True):
        self.problems: list[tuple[str, str]] = []
        self.questions: list[tuple[str, str]] = []
        self.answer = answer

    def problem(self, title: str, text: str) -> None:
        self.problems.append((title, text))

    def ask(self, title: str, text: str, action: str = "Yes") -> bool:
        self.questions.append((title, text))
        return self.answer


@pytest.fixture
def dialogs() -> Recorder:
    return Recorder()


@pytest.fixture
def window(qtbot, dialogs: Recorder):
    from app.ui.main_window import MainWindow
    from app.ui.settings import app_settings

    win = MainWindow(app_settings())
    win.show_problem = dialogs.problem  # type: ignore[method-assign]
    win.ask = dialogs.ask  # type: ignore[method-assign]
    win.files.ask_unsaved = False  # (changes are dropped, as --screenshot's window does)
    win.close_question = lambda: "discard"  # type: ignore[method-assign]
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    qtbot.waitExposed(win)
    if sys.platform == "win32":  # a real display (Wine's): keys and shortcuts reach the active window only
        win.activateWindow()
        qtbot.waitActive(win, timeout=5000)
    yield win
    if win.controller.running:
        win.controller.abort()
        qtbot.waitUntil(lambda: not win.controller.running, timeout=20000)


def local_plan(
    tmp_path: Path, managers: int = 1, workers: int = 2, targets: int = 1, specs: tuple[str, ...] = ("S",)
) -> Plan:
    """A runnable plan on this machine: test files in tmp_path, 4 KiB random 70 % reads."""
    plan = grid(managers, workers, targets, specs=specs, qd=4)
    for s in plan.specs:
        s.lines = [SpecLine(4096, 100, 70, 100, 0, 1, 4096, 0)]
    for m in plan.managers:
        m.host = LOCAL
        for wi, w in enumerate(m.workers):
            w.targets = [Target(str(tmp_path / f"{m.name}-w{wi + 1}-t{t + 1}.tst")) for t in range(targets)]
    plan.name = "GUI test plan"
    return plan


def plan_file(tmp_path: Path, plan: Plan | None = None, name: str = "plan.fiometer.json") -> Path:
    path = tmp_path / name
    planfile.save(plan or local_plan(tmp_path), path)
    return path
