"""Ctrl+Z / Ctrl+Y in a plan panel's field are the plan's Undo / Redo (Edit menu), never the field's own
text history: a spin box or line edit keeps an undo list of its text, and taking Ctrl+Z there put back a
value the plan had since moved on from (an older edit, as a new step that also ended Redo) while the edit
the user had just made stayed. The plan document's stack wins, whichever field has the focus."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QLineEdit, QWidget

KEYS = (QKeySequence.StandardKey.Undo, QKeySequence.StandardKey.Redo)


class PlanUndoKeys(QObject):
    """Installed on the application: the fields inside ``scope`` (the plan's panels) let Undo and Redo go to
    the window's actions."""

    def __init__(self, scope: QWidget, exclude: list[QWidget] | None = None):
        super().__init__(scope)
        self.scope = scope
        self.exclude = list(exclude or [])

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and isinstance(watched, (QLineEdit, QAbstractSpinBox))
            and any(event.matches(k) for k in KEYS)
            and self.scope.isAncestorOf(watched)
            and not any(x.isAncestorOf(watched) for x in self.exclude)
        ):
            event.ignore()  # not the field's: the shortcut (Edit > Undo / Redo) takes it
            return True
        return False


def route_undo_keys(scope: QWidget, exclude: list[QWidget] | None = None) -> PlanUndoKeys:
    keys = PlanUndoKeys(scope, exclude)
    app = QApplication.instance()
    if app is not None:
        app.installEventFilter(keys)
    return keys
