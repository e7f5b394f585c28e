"""A tab about the worker selected in the Topology (Disk Targets, Network Targets)."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from app.model.plan import Worker
from app.ui.plan.plan_document import PlanDocument
from app.ui.plan.topology import Selection


class WorkerPage(QWidget):
    """Keeps the Topology's selection and shows it again (``refresh``) whenever it changes."""

    def __init__(self, doc: PlanDocument, parent: QWidget | None = None):
        super().__init__(parent)
        self.doc = doc
        self.sel = Selection()
        self._loading = False  # True while the page fills its own fields (their signals are not edits)

    def set_selection(self, sel: Selection) -> None:
        self.sel = sel
        self.refresh()

    def worker(self) -> Worker | None:
        return self.sel.worker_in(self.doc.plan)

    def refresh(self) -> None:
        raise NotImplementedError
