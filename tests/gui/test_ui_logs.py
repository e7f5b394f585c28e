"""The window says in the log what the user did and what they answered (issue 41.5): each action by its key
before its slot runs, each question's title with the button pressed (Cancel for Escape or Enter on a
destructive question), Save / Discard / Cancel for unsaved changes."""

from __future__ import annotations

import logging

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow, QMessageBox

from app.ui.actions import ActionSpec, make_action
from app.ui.confirm import confirm, unsaved_answer, unsaved_box


@pytest.fixture
def logged(caplog):
    """Records of the window's loggers, even where the log file set-up stopped ``app`` propagating."""
    ui = logging.getLogger("app.ui")
    ui.addHandler(caplog.handler)
    caplog.set_level(logging.INFO, logger="app.ui")
    yield caplog
    ui.removeHandler(caplog.handler)


def _said(caplog, logger: str) -> list[str]:
    return list(dict.fromkeys(r.getMessage() for r in caplog.records if r.name == logger))


def _press_on_the_question(qtbot, key: Qt.Key, button_text: str | None = None) -> None:
    def press() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        if button_text is None:
            qtbot.keyClick(box, key)
        else:
            next(b for b in box.buttons() if b.text() == button_text).click()

    QTimer.singleShot(100, press)


def test_an_action_is_logged_by_its_key_before_its_slot_runs(qtbot, logged):
    window = QMainWindow()
    qtbot.addWidget(window)
    order: list[str] = []
    action = make_action(
        window, ActionSpec("start", "&Start"), lambda: order.append(_said(logged, "app.ui.actions")[-1])
    )
    action.trigger()
    assert order == ["action start"]


@pytest.mark.parametrize(
    ("key", "button", "answer"), [(Qt.Key.Key_Escape, None, "Cancel"), (None, "Delete", "Delete")]
)
def test_a_question_and_its_answer_are_logged(qtbot, logged, key, button, answer):
    _press_on_the_question(qtbot, key, button)
    assert confirm(None, "Delete 2 runs?", "They cannot be brought back.", "Delete") is (answer == "Delete")
    assert _said(logged, "app.ui.confirm") == [f"asked 'Delete 2 runs?': {answer}"]


def test_the_answer_to_unsaved_changes_is_logged(qtbot, logged):
    _press_on_the_question(qtbot, Qt.Key.Key_Escape)
    assert unsaved_answer(unsaved_box(None, "Unsaved plan", "Save the changes?")) == "cancel"
    assert _said(logged, "app.ui.confirm") == ["asked 'Unsaved plan': cancel"]
