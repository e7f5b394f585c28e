"""The History tab in the window (the run list, stored runs and comparisons in closable tabs),
File > Import Iometer results…, View > History, and report dialogs. ``install_history(...)`` is the
only thing main_window.py calls; everything else stays in these modules.

The list is read the first time the tab is shown (opening the window creates no database), again when
a run finishes in this window, and whenever the tab is shown again (runs made by the CLI meanwhile).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QTabBar, QTabWidget, QWidget

from app.store import Store
from app.ui.history.compare_data import CompareRequest, repeat_key
from app.ui.history.compare_view import CompareView
from app.ui.history.history_tab import HistoryTab
from app.ui.history.report_dialog import ReportDialog
from app.ui.history.run_view import RunView
from app.ui.history.store_tasks import StoreTasks, TaskProblem
from app.ui.run.run_driver import RunDriver
from app.ui.user_desk import UserDesk

HISTORY_TAB = "History"
IMPORT_FILTER = "Iometer results (*.csv);;All files (*)"


class HistoryWorkspace(QTabWidget):
    """The History tab: the run list first (never closed), then stored runs and comparisons."""

    def __init__(self, runs: HistoryTab, parent: QWidget | None = None):
        super().__init__(parent)
        self.runs = runs
        self.setDocumentMode(True)
        self.setTabsClosable(True)
        self.setMovable(False)
        self.addTab(runs, "Runs")
        for side in (QTabBar.ButtonPosition.RightSide, QTabBar.ButtonPosition.LeftSide):
            self.tabBar().setTabButton(0, side, None)
        self.tabCloseRequested.connect(self.close_view)

    def views(self) -> list[QWidget]:
        return [self.widget(i) for i in range(1, self.count())]

    def add_view(self, view: QWidget, title: str, tip: str = "") -> None:
        i = self.addTab(view, title)
        self.setTabToolTip(i, tip or title)
        self.setCurrentIndex(i)

    def close_view(self, index: int) -> None:
        if index <= 0:
            return
        w = self.widget(index)
        self.removeTab(index)
        w.deleteLater()


class HistoryUi(QObject):
    def __init__(self, window: QWidget, desk: UserDesk, tabs: QTabWidget, controller: RunDriver):
        """``window``: the dialogs' parent; ``desk``: how to tell and ask the user; ``tabs``: where the History
        tab is; ``controller``: its database and its finished runs."""
        super().__init__(window)
        self.window = window
        self.desk = desk
        self.tabs = tabs
        self.controller = controller
        self.tasks = StoreTasks(controller.db_path)
        self.list = HistoryTab(desk, self.tasks)
        self.workspace = HistoryWorkspace(self.list)
        self.dialogs: list[ReportDialog] = []
        self._shown = False

        self.list.open_run.connect(self.open_run)
        self.list.compare_runs.connect(
            lambda ids: self.compare(CompareRequest([ids[0]], [[i] for i in ids[1:]]))
        )
        self.list.report_runs.connect(
            lambda ids: self.report(CompareRequest([ids[0]], [[i] for i in ids[1:]]))
        )
        self.list.import_requested.connect(self.import_dialog)
        self.list.runs_deleted.connect(self._runs_deleted)
        controller.finished.connect(self._run_finished)
        tabs.currentChanged.connect(lambda _i: self._tab_changed())

    # --- list ---------------------------------------------------------------------------------
    def _tab_changed(self) -> None:
        if self.tabs.currentWidget() is self.workspace:
            self.list.refresh()

    def _run_finished(self, _status: str) -> None:
        rec = self.controller.run_end
        self.list.refresh(select=[rec.run_id] if rec is not None and rec.run_id is not None else None)

    def show_history(self) -> None:
        self.tabs.setCurrentWidget(self.workspace)
        self.workspace.setCurrentIndex(0)

    def labels(self) -> dict[int, str]:
        return {r.id: r.label() for r in self.list.model.rows}

    # --- views --------------------------------------------------------------------------------
    def _existing(self, kind: type, ids: set[int]) -> QWidget | None:
        return next((v for v in self.workspace.views() if isinstance(v, kind) and v.run_ids == ids), None)

    def open_run(self, run_id: int) -> RunView:
        view = self._existing(RunView, {run_id})
        if view is None:
            view = RunView(run_id, self.tasks)
            view.report_requested.connect(lambda ids: self.report(CompareRequest(ids, [])))
            view.failed.connect(lambda msg, v=view: self._view_failed(v, "Cannot open the run", msg))
            label = self.labels().get(run_id, f"Run {run_id}")
            self.workspace.add_view(view, view.title(), f"{label} \u2014 stored, not live")
            view.load()
        self.show_history()
        self.workspace.setCurrentWidget(view)
        return view

    def compare(self, request: CompareRequest) -> CompareView:
        view = self._existing(CompareView, set(request.run_ids))
        if view is None:
            view = CompareView(
                request,
                self.tasks,
                self.labels(),
                repeat_keys={r.id: repeat_key(r.run) for r in self.list.model.rows},
            )
            view.report_requested.connect(self.report)
            view.failed.connect(lambda msg, v=view: self._view_failed(v, "Cannot compare the runs", msg))
            self.workspace.add_view(view, view.title())
            view.load()
        self.show_history()
        self.workspace.setCurrentWidget(view)
        return view

    def _view_failed(self, view: QWidget, title: str, message: str) -> None:
        """A run deleted meanwhile or a database that cannot be read: say so, and drop the empty tab."""
        i = self.workspace.indexOf(view)
        if i > 0 and getattr(view, "data", None) is None:
            self.workspace.close_view(i)
        self.desk.show_problem(title, message)
        self.list.refresh()

    def _runs_deleted(self, ids: list[int]) -> None:
        gone = set(ids)
        for v in self.workspace.views():
            if getattr(v, "run_ids", set()) & gone:
                self.workspace.close_view(self.workspace.indexOf(v))

    def report(self, request: CompareRequest) -> ReportDialog:
        dlg = ReportDialog(self.desk, request, StoreTasks(self.tasks.db_path), self.labels(), self.window)
        self.dialogs = [d for d in self.dialogs if d.isVisible() or d.writing] + [dlg]
        dlg.show()
        return dlg

    def slots(self) -> dict[str, Any]:
        """What History's actions (app/ui/actions.py) do."""
        return {
            "import_results": self.import_dialog,
            "history": self.show_history,
            "export_results": self.export_dialog,
        }

    # --- export -------------------------------------------------------------------------------
    def export_run_id(self) -> int | None:
        """The run File > Export Iometer results.csv writes: the one selected in History's list, else the
        last run of this window."""
        selected = self.list.selected_ids()
        if selected and self.tabs.currentWidget() is self.workspace:
            return selected[0]
        rec = self.controller.run_end
        if rec is not None and rec.run_id is not None:
            return rec.run_id
        return selected[0] if selected else None

    def export_dialog(self) -> None:
        run_id = self.export_run_id()
        if run_id is None:
            self.desk.show_problem(
                "Nothing to export",
                "Run a test first, or select a stored run in History; "
                "File > Export Iometer results.csv then writes it.",
            )
            self.show_history()
            return
        path, _ = QFileDialog.getSaveFileName(
            self.window,
            f"Export run {run_id} as Iometer results",
            str(Path.home() / f"run-{run_id}-results.csv"),
            IMPORT_FILTER,
        )
        if path:
            self.export_results(run_id, path)

    def export_results(self, run_id: int, path: str | Path) -> None:
        """Write a stored run as an Iometer 1.1.0 results.csv (the CLI's export), in the background."""
        from app.analysis.export_run import run_results_csv_bytes
        from app.store.queries import get_run

        def work(store: Store) -> Path:
            from app.safe_files import write_file

            write_file(path, run_results_csv_bytes(get_run(store, run_id)))
            return Path(path)

        def done(out: Path) -> None:
            text = f"Run {run_id} written to {out} (Iometer results.csv)"
            self.desk.add_message(text)
            self.desk.statusBar().showMessage(text, 10000)

        self.tasks.submit(
            f"exporting run {run_id}",
            work,
            done,
            lambda msg: self.desk.show_problem("Cannot export the run", msg),
            owner=self.list,
        )

    # --- import -------------------------------------------------------------------------------
    def import_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Import Iometer results", str(Path.home()), IMPORT_FILTER
        )
        if path:
            self.import_results(path)

    def import_results(self, path: str | Path) -> None:
        """Store every series of an Iometer results.csv as a run (the CLI's import-results), in the background."""
        from app.analysis.iometer_import import IMPORT_TAG, import_results_file
        from app.analysis.iometer_results_reader import ResultsFileError

        def work(store: Store) -> list[Any]:
            try:
                return import_results_file(store, path, [IMPORT_TAG])
            except ResultsFileError as e:
                raise TaskProblem(f"{e}\nNothing was imported.") from e

        def done(imported: list[Any]) -> None:
            n = len(imported)
            text = (
                f"{n} run{'s' * (n != 1)} imported from {Path(path).name}"
                if n
                else f"{Path(path).name} holds no results to import"
            )
            self.desk.add_message(text)
            self.desk.statusBar().showMessage(text, 10000)
            self.show_history()
            self.list.clear_filters(select=[r.run_id for r in imported])

        self.desk.statusBar().showMessage(f"Importing {path}\u2026")
        self.tasks.submit(
            f"importing {path}",
            work,
            done,
            lambda msg: self.desk.show_problem("Cannot import the results", msg),
            owner=self.list,
        )


def install_history(window: QWidget, desk: UserDesk, tabs: QTabWidget, controller: RunDriver) -> HistoryUi:
    """Add the History tab to the main window's ``tabs``; its actions' slots are ``HistoryUi.slots()``."""
    ui = HistoryUi(window, desk, tabs, controller)
    tabs.addTab(ui.workspace, HISTORY_TAB)
    tabs.setTabToolTip(
        tabs.indexOf(ui.workspace), "Every stored run: open, compare, report, tag, annotate, delete"
    )
    return ui
