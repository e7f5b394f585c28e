"""Issue 29.3: the main window is composed, not mixed. Its File jobs (``PlanFiles``) and its side of a run
(``RunControl``) are objects given what they use in their constructors: each works on its own, without a
MainWindow, with whatever desk it is handed (here a recorder, not the window)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDockWidget, QMainWindow, QStatusBar, QWidget

from app.engine.run.runner import RunOptions
from app.live.data import LiveResults
from app.ui.main_window import MainWindow
from app.ui.plan.plan_document import PlanDocument
from app.ui.plan.topology import TopologyTree
from app.ui.run.results_tab import ResultsTab
from app.ui.run.run_driver import RunDriver
from app.ui.window.files import PlanFiles
from app.ui.window.host_facts import HostFactsKeeper
from app.ui.window.running import RunControl
from app.ui.window.status import RunStatus
from tests.gui.conftest import local_plan, plan_file


class Desk:
    """A UserDesk that records what it is told (problems, questions, messages)."""

    def __init__(self) -> None:
        self.settings: QSettings | None = None
        self.persist = False
        self.problems: list[tuple[str, str]] = []
        self.questions: list[str] = []
        self.messages: list[tuple[str, str]] = []
        self.bar = QStatusBar()

    def ask(self, title: str, text: str, action: str = "Yes") -> bool:
        self.questions.append(title)
        return True

    def show_problem(self, title: str, text: str) -> None:
        self.problems.append((title, text))

    def add_message(self, text: str, level: str = "info") -> None:
        self.messages.append((text, level))

    def statusBar(self) -> QStatusBar:  # noqa: N802 (QMainWindow's name)
        return self.bar


class Parts:
    """The collaborators the window would pass, made here without a window."""

    def __init__(self, qtbot, tmp_path: Path) -> None:
        self.parent = QMainWindow()
        qtbot.addWidget(self.parent)
        self.desk = Desk()
        self.doc = PlanDocument(self.parent)
        self.live = LiveResults()
        self.controller = RunDriver(self.parent, None, tmp_path / "results.db")
        self.topology = TopologyTree()
        self.results_tab = ResultsTab(self.doc, self.live)
        self.dock = QDockWidget("Messages", self.parent)
        self.shown: list[QWidget] = []
        self.titles: list[str] = []

    def run_control(self) -> RunControl:
        return RunControl(
            self.parent,
            self.desk,
            self.doc,
            self.live,
            self.controller,
            self.topology,
            self.results_tab,
            RunStatus(self.desk.bar),
            self.dock,
            self.shown.append,
        )

    def files(self) -> PlanFiles:
        hosts = HostFactsKeeper(self.parent, self.doc, self.topology, _targets_tab(self.doc), lambda _s: None)
        return PlanFiles(
            self.parent,
            self.desk,
            self.doc,
            self.live,
            self.controller,
            hosts,
            self.dock,
            lambda: self.titles.append(self.doc.title),
        )


def _targets_tab(doc: PlanDocument):
    from app.ui.plan.targets_tab import TargetsTab

    return TargetsTab(doc)


def test_the_window_derives_from_qmainwindow_only_and_holds_its_parts() -> None:
    assert MainWindow.__bases__ == (QMainWindow,)
    assert not [c for c in MainWindow.__mro__ if c.__module__.startswith("app.ui.window")]
    # no state shared through the class: nothing mutable at class level in the window or its parts
    for cls in (MainWindow, PlanFiles, RunControl):
        shared = {
            name
            for name, value in vars(cls).items()
            if isinstance(value, (list, dict, set)) and not name.startswith("__")
        }
        assert shared == set(), cls
    for cls in (PlanFiles, RunControl):  # their dependencies are constructor arguments, named
        params = list(inspect.signature(cls.__init__).parameters)
        assert "desk" in params and "doc" in params and "controller" in params


def test_run_control_refuses_a_plan_with_errors_through_its_desk(qtbot, tmp_path: Path) -> None:
    parts = Parts(qtbot, tmp_path)
    control = parts.run_control()
    plan = local_plan(tmp_path, workers=1)
    plan.specs[0].lines[0].reads = 165
    parts.doc.replace(plan)
    assert not control.start_run()
    assert [t for t, _ in parts.desk.problems] == ["The plan has errors"]
    assert "165" in parts.desk.problems[0][1]
    assert not parts.controller.running and parts.shown == []


@pytest.mark.fio
def test_run_control_runs_a_tiny_plan_without_a_window(qtbot, tmp_path: Path) -> None:
    """Real fio (null engine): Start through RunControl shows Results Display, says the run in Messages
    (through the desk it was given) and the status fields; Stop all ends it."""
    parts = Parts(qtbot, tmp_path)
    control = parts.run_control()
    parts.doc.replace(local_plan(tmp_path, workers=1, specs=("S", "T")))
    control.run_options = RunOptions(engine="null", run_time=60, ramp_up=0, file_size=1 << 20)
    assert control.start_run()
    assert parts.shown == [parts.results_tab]
    assert control.status.state.text() == "Running"
    assert parts.controller.listener is not None
    with qtbot.waitSignal(parts.controller.listener.samplesArrived, timeout=30000):
        pass
    control.stop_all()
    with qtbot.waitSignal(parts.controller.finished, timeout=30000) as finished:
        pass
    assert finished.args == ["stopped"]
    said = [text for text, _level in parts.desk.messages]
    assert said[0] == "Run started: 2 step(s)"
    assert any(text.startswith("Run stopped") for text in said)
    assert any(text.startswith("Stored as run 1 in ") for text in said)
    assert [m.label for m in parts.live.steps] == ["1: S"]  # the step and its samples reached the charts
    parts.live.flush()
    assert parts.live.series
    assert control.status.state.text() == "Last run: stopped"


def test_plan_files_open_and_save_through_its_desk(qtbot, tmp_path: Path) -> None:
    parts = Parts(qtbot, tmp_path)
    files = parts.files()
    not_a_plan = tmp_path / "notes.json"
    not_a_plan.write_text("[1, 2", encoding="utf-8")
    assert not files.open_path(not_a_plan)
    assert [t for t, _ in parts.desk.problems] == ["Cannot open the plan"]
    assert str(not_a_plan) in parts.desk.problems[0][1]
    path = plan_file(tmp_path, local_plan(tmp_path, workers=2))
    assert files.open_path(path)
    assert path in (parts.doc.path, parts.doc.opened_from)
    assert len(parts.doc.plan.managers[0].workers) == 2
    assert parts.desk.bar.currentMessage().startswith(f"Opened {path}")
    saved = tmp_path / "copy.fiometer.json"
    assert files._save_to(saved) and saved.is_file()
    assert parts.titles == [parts.doc.title] and "copy" in parts.doc.title
    assert not parts.doc.dirty


def test_the_headless_window_drops_changes_without_asking(qtbot, tmp_path: Path, monkeypatch) -> None:
    """`gui --screenshot`'s window (and the benchmarks'): a plan changed there (--map) closes without the
    unsaved-changes box, which would wait forever with nobody to answer it."""
    from app.ui import settings as prefs
    from app.ui.launch import HeadlessWindow
    from app.ui.window import files as files_module

    def no_box(_box: object) -> str:
        raise AssertionError("the unsaved-changes question was asked")

    monkeypatch.setattr(files_module, "unsaved_answer", no_box)
    win = HeadlessWindow(prefs.app_settings(), persist=False, db_path=tmp_path / "runs.db")
    qtbot.addWidget(win)
    assert win.files.open_path(plan_file(tmp_path, local_plan(tmp_path, workers=1)), ask_discard=False)
    win.doc.edit("rename", [], lambda plan: setattr(plan, "name", "changed"))
    assert win.doc.dirty
    win.show()
    assert win.close()
    assert not win.isVisible()
