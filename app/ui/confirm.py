"""Questions before something destructive or irreversible: the button that does it says what it does,
and the safe answer (Cancel) is the default, so Enter or Escape never destroys anything."""

from __future__ import annotations

import logging

from PySide6.QtWidgets import QAbstractButton, QMessageBox, QWidget

log = logging.getLogger(__name__)


def confirm_box(
    parent: QWidget | None, title: str, text: str, action: str = "Yes", detail: str = ""
) -> tuple[QMessageBox, QAbstractButton]:
    """The box and its action button (not shown; ``confirm`` shows it)."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.NoButton, parent)
    if detail:
        box.setInformativeText(detail)
    yes = box.addButton(action, QMessageBox.ButtonRole.DestructiveRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    return box, yes


def confirm(parent: QWidget | None, title: str, text: str, action: str = "Yes", detail: str = "") -> bool:
    """True only when the user pressed the action button."""
    box, yes = confirm_box(parent, title, text, action, detail)
    box.exec()
    done = box.clickedButton() is yes
    log.info("asked %r: %s", title, action if done else "Cancel")
    return done


def unsaved_box(parent: QWidget | None, title: str, text: str) -> QMessageBox:
    """Save / Discard / Cancel for unsaved changes: Save is the default, Escape cancels (not shown)."""
    box = QMessageBox(
        QMessageBox.Icon.Question,
        title,
        text,
        QMessageBox.StandardButton.Save
        | QMessageBox.StandardButton.Discard
        | QMessageBox.StandardButton.Cancel,
        parent,
    )
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    box.setEscapeButton(QMessageBox.StandardButton.Cancel)
    return box


def unsaved_answer(box: QMessageBox) -> str:
    """Show an ``unsaved_box``: 'save' | 'discard' | 'cancel'."""
    answer = QMessageBox.StandardButton(box.exec())
    said = {QMessageBox.StandardButton.Save: "save", QMessageBox.StandardButton.Discard: "discard"}.get(
        answer, "cancel"
    )
    log.info("asked %r: %s", box.windowTitle(), said)
    return said
