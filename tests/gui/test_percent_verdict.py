"""Issue 38.3: one verdict on an access specification whose '% of size' lines add up to 90. Iometer refuses
it ("Percentages don't add to 100.", AccessSpecList::LoadConfigNew); Fiometer keeps it so that it can be
corrected, says the same words when the file opens (Messages), in the CLI and in the spec editor, marks the
spec in the library and in the worker's assignment, and Start refuses it with those words."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from app.ui.main_window import MainWindow
from app.ui.plan.library import PLAN
from app.ui.plan.spec_editor import SpecEditor
from app.ui.plan.topology import Selection
from icf_import.read_specs import percent_total_words
from tests.unit.icf_corpus import ACCESS_SPECS, DISK_WORKER, icf, manager_list

WORDS = percent_total_words(90)


def bad_file(tmp_path: Path) -> Path:
    path = tmp_path / "h3_bad_percent_sum.icf"
    path.write_text(icf(ACCESS_SPECS.replace("\t4096,100,", "\t4096,90,"), manager_list(DISK_WORKER)))
    return path


def test_the_cli_says_the_verdict_and_refuses_to_run(tmp_path: Path) -> None:
    path = bad_file(tmp_path)
    fio = [sys.executable, "-m", "app.cli", "--db", str(tmp_path / "r.db")]
    shown = subprocess.run([*fio, "import", str(path)], capture_output=True, text=True, timeout=60)
    assert WORDS in shown.stdout + shown.stderr
    assert "kept as written" not in shown.stdout + shown.stderr
    run = subprocess.run([*fio, "run", str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and WORDS in run.stderr, run.stderr


def test_the_window_marks_the_spec_and_start_refuses_it(window: MainWindow, dialogs, tmp_path: Path) -> None:
    assert window.files.open_path(bad_file(tmp_path))
    messages = [window.messages.item(i).text() for i in range(window.messages.count())]
    assert any(WORDS in m for m in messages), messages
    assert not any("scales its lines" in m for m in messages)
    red = QColor(Qt.GlobalColor.red)
    tab = window.specs_tab
    tree = tab.tree
    items = [
        tree.topLevelItem(i).child(j)
        for i in range(tree.topLevelItemCount())
        for j in range(tree.topLevelItem(i).childCount())
    ]
    [mine] = [it for it in items if it.data(0, Qt.ItemDataRole.UserRole) == (PLAN, "4K random read")]
    assert mine.foreground(0).color() == red and WORDS in mine.toolTip(0)
    window.topology.select(Selection(0, 0))
    [assigned] = [tab.assigned.item(i) for i in range(tab.assigned.count())]
    assert assigned.foreground().color() == red and WORDS in assigned.toolTip()
    assert not window.run_control.start_run()
    title, text = dialogs.problems[-1]
    assert WORDS in text, text


def test_the_spec_editor_says_the_same_words(qtbot) -> None:
    from app.model.plan import AccessSpec, SpecLine

    editor = SpecEditor(AccessSpec("S", [SpecLine(4096, 90, 100, 100, 0, 1, 4096, 0)]), set())
    qtbot.addWidget(editor)
    editor.validate()
    assert (
        percent_total_words(90).replace(" (Access Specifications > Edit)", "")
        in editor.errors["of_size"].text()
    )
