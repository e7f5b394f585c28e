"""Issue 28 point 3: nothing silent. A plan with errors (an .icf with 165 % reads) opens with a dialog that
names each error by its access specification, manager, worker or target and line; the spec is flagged on the
Access Specifications tab; Start is disabled until the errors are fixed; no message shows an internal field
path such as ``specs[1].lines[0].reads``."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from app.model.validation import validate
from app.ui.main_window import MainWindow
from app.ui.plan.plan_document import Change
from tests.helpers import grid

FIXTURE = Path(__file__).parent.parent / "fixtures" / "icf" / "iometer-1.1.0-saved.icf"
INTERNAL = re.compile(r"\b(specs|lines|managers|workers|targets)\[\d+\]|setup\.\w")


def bad_icf(tmp_path: Path) -> Path:
    text = FIXTURE.read_text(encoding="latin-1")
    assert "\t4096,100,70,100,0,1,4096,0" in text
    path = tmp_path / "bad reads.icf"
    path.write_text(
        text.replace("\t4096,100,70,100,0,1,4096,0", "\t4096,100,165,100,0,1,4096,0", 1), encoding="latin-1"
    )
    return path


def test_an_icf_with_errors_opens_with_a_dialog_and_start_waits(
    window: MainWindow, dialogs, tmp_path: Path, qtbot
) -> None:
    assert window.files.open_path(bad_icf(tmp_path))
    assert len(dialogs.problems) == 1
    title, text = dialogs.problems[0]
    assert title == "The plan has errors"
    assert (
        'access specification "4 KiB; 70% Read; 100% random", line 1, % read: must be a whole number '
        "from 0 to 100 %, got 165" in text
    )
    assert "Start is disabled" in text and not INTERNAL.search(text)
    # in Messages too, as an error, and Start waits
    lines = [window.messages.item(i).text() for i in range(window.messages.count())]
    assert any(ln.startswith("Error: access specification") for ln in lines)
    assert not any(INTERNAL.search(ln) for ln in lines)
    assert not window.action_map["start"].isEnabled()
    assert "% read" in window.action_map["start"].toolTip()
    assert not window.run_control.start_run()  # (the keyboard shortcut cannot start it either)
    # flagged where it is fixed
    tree = window.specs_tab.tree
    flagged = [
        tree.topLevelItem(g).child(i)
        for g in range(tree.topLevelItemCount())
        for i in range(tree.topLevelItem(g).childCount())
        if tree.topLevelItem(g).child(i).foreground(0).color() == QColor(Qt.GlobalColor.red)
    ]
    assert [it.text(0) for it in flagged] == ["4 KiB; 70% Read; 100% random"]
    assert "165" in flagged[0].toolTip(0)
    # fixed: Start is enabled again
    window.doc.edit(
        "Edit spec",
        Change.SPECS,
        lambda plan: setattr(plan.spec("4 KiB; 70% Read; 100% random").lines[0], "reads", 70),
    )
    assert window.action_map["start"].isEnabled()


def test_a_valid_plan_opens_without_a_dialog(window: MainWindow, dialogs) -> None:
    assert window.files.open_path(FIXTURE)
    assert dialogs.problems == [] and window.action_map["start"].isEnabled()


def test_no_problem_names_an_internal_path() -> None:
    plan = grid(2, 2, 2)
    plan.specs[0].lines[0].reads = 165
    plan.specs[0].lines[0].size = 0
    plan.managers[1].workers[0].queue_depth = 0
    plan.managers[0].workers[1].specs.append("nowhere")
    plan.managers[0].workers[0].targets[0].name = plan.managers[0].workers[0].targets[0].path = ""
    plan.setup.run_time = -5
    problems = validate(plan)
    texts = [str(p) for p in problems]
    assert len(texts) >= 6 and not any(INTERNAL.search(t) for t in texts), texts
    assert any(
        t.startswith(
            f'manager "{plan.managers[1].name}", worker "{plan.managers[1].workers[0].name}", '
            "# of outstanding I/Os"
        )
        for t in texts
    ), texts
    assert any(t.startswith("Test Setup, run time") for t in texts), texts


def test_a_file_that_is_no_plan_is_said_before_asking_about_unsaved_changes(
    window: MainWindow, dialogs, tmp_path: Path
) -> None:
    asked = []
    window.files.maybe_discard = lambda: asked.append(True) or True
    window.doc.edit("Rename", Change.SETUP, lambda plan: setattr(plan, "name", "changed"))  # unsaved changes
    path = tmp_path / "notes.json"
    path.write_text("hello, not JSON")
    assert not window.files.open_path(path)
    assert asked == []  # nothing to lose: the plan stays as it was
    ((title, text),) = dialogs.problems
    assert "not a plan: neither an Iometer configuration (.icf) nor a plan saved by Fiometer" in text
