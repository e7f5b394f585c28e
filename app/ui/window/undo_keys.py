"""Ctrl+Z / Ctrl+Y in a plan panel's field are the plan's Undo / Redo (Edit menu), never the field's own
text history: a spin box or line edit keeps an undo list of its text, and taking Ctrl+Z there put back a
value the plan had since moved on from (an older edit, as a new step that also ended Redo) while the edit
the user had just made stayed. The plan document's stack wins, whichever field has the focus."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Slot
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QLineEdit, QWidget

KEYS = (QKeySequence.StandardKey.Undo, QKeySequence.StandardKey.Redo)


class PlanUndoKeys(QObject):
    """Follows the focus: each field inside ``scope`` (the plan's panels) that takes it gets this filter, which
    lets Undo and Redo go to the window's actions. (Not a filter on the whole application: that was a Python
    call for every event of every object, each waiting for the GIL while another thread held it; the likely
    cause of inputs waiting 0.6 s as a run started, in the full GUI suites.)"""

    def __init__(self, scope: QWidget, exclude: list[QWidget] | None = None):
        super().__init__(scope)
        self.scope = scope
        self.exclude = list(exclude or [])

    @Slot(QWidget, QWidget)
    def follow_focus(self, _old: QWidget | None, now: QWidget | None) -> None:
        if (
            isinstance(now, (QLineEdit, QAbstractSpinBox))
            and self.scope.isAncestorOf(now)
            and not any(x.isAncestorOf(now) for x in self.exclude)
        ):
            now.installEventFilter(self)  # (once: Qt keeps a filter once per object)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and any(event.matches(k) for k in KEYS)
        ):
            event.ignore()  # not the field's: the shortcut (Edit > Undo / Redo) takes it
            return True
        return False


def route_undo_keys(scope: QWidget, exclude: list[QWidget] | None = None) -> PlanUndoKeys:
    keys = PlanUndoKeys(scope, exclude)
    app = QApplication.instance()
    if isinstance(app, QApplication):
        app.focusChanged.connect(keys.follow_focus)
    return keys
