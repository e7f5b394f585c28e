"""The main window: Topology on the left, Iometer's tabs on the right, menus, toolbar, status bar.

MainWindow is a QMainWindow that assembles its parts and passes each its collaborators in its
constructor: the plan document (edits and Undo), the topology edits (``TopologyEdits``), the host facts
(``HostFactsKeeper``), theme and layout (``WindowLook``), the Messages dock (``MessagesPanel``), the File
menu's jobs (``PlanFiles``, ``window.files``), Start / Stop and what a run shows (``RunControl``,
``window.run_control``) and History (``install_history``), all in app/ui/window/ and app/ui/history/; the
actions and menus in app/ui/actions.py. The window itself keeps what spans the parts: which actions are
enabled, the title, closing (during a run too), Qt's events, and the ``UserDesk`` the parts talk through.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QSettings, Qt, QTimer, QUrl
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDesktopServices,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QGuiApplication,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QMainWindow,
    QMenu,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app import __version__
from app.live.data import LiveResults
from app.ui import actions
from app.ui.confirm import confirm
from app.ui.gui_collector import collect_on_gui_thread
from app.ui.plan.library import SpecLibrary
from app.ui.plan.network_tab import NetworkTargetsTab
from app.ui.plan.plan_document import Change, PlanDocument
from app.ui.plan.setup_tab import SetupTab
from app.ui.plan.specs_tab import SpecsTab
from app.ui.plan.targets_tab import TargetsTab
from app.ui.plan.topology import Selection, TopologyTree
from app.ui.run.results_tab import ResultsTab
from app.ui.run.run_driver import RUNNING, RunDriver
from app.ui.widgets import Banner, scrolling, tab_leaves_tables
from app.ui.window.edits import TopologyEdits
from app.ui.window.files import PlanFiles, droppable_paths
from app.ui.window.host_facts import HostFactsKeeper
from app.ui.window.layout import SMALLEST, WindowLook
from app.ui.window.messages import MessagesPanel
from app.ui.window.running import RunControl, plan_errors
from app.ui.window.status import RunStatus
from app.ui.window.undo_keys import route_undo_keys

log = logging.getLogger(__name__)

__all__ = ["TAB_NAMES", "MainWindow", "droppable_paths"]

TAB_NAMES = ("Disk Targets", "Network Targets", "Access Specifications", "Test Setup", "Results Display")
STOP_GRACE_MS = 15000  # closing during a run: after Stop, abort if fio has not ended by then


class MainWindow(QMainWindow):
    def __init__(
        self, settings: QSettings | None = None, persist: bool = True, db_path: str | Path | None = None
    ):
        super().__init__()
        collect_on_gui_thread(QCoreApplication.instance())  # Python's collector never in another thread
        self._look: WindowLook | None = None  # theme and layout, once the parts it keeps exist
        self.settings = settings
        self.persist = persist and settings is not None
        self.doc = PlanDocument(self)
        self.library = SpecLibrary(settings)
        self.live = LiveResults()
        self.controller = RunDriver(self, None, db_path)  # created test files: beside the database
        self._close_after_run = False
        self._changes_settled = False  # closing during a run asked about the plan's changes already

        self.setWindowTitle("Fiometer")
        self.setAcceptDrops(True)
        self.resize(1280, 800)
        self.setMinimumSize(*SMALLEST)  # explicit: the window never grows because a part asks for more
        self._fitted = False

        self.topology = TopologyTree()
        self.tabs = QTabWidget()
        self.targets_tab = TargetsTab(self.doc)
        self.network_tab = NetworkTargetsTab(self.doc)
        self.specs_tab = SpecsTab(self.doc, self.library)
        self.setup_tab = SetupTab(self.doc)
        self.results_tab = ResultsTab(self.doc, self.live)
        # the long forms scroll on small screens instead of making the window taller than the screen
        for w, name in zip(
            (
                scrolling(self.targets_tab),
                scrolling(self.network_tab),
                self.specs_tab,
                scrolling(self.setup_tab),
                self.results_tab,
            ),
            TAB_NAMES,
            strict=True,
        ):
            self.tabs.addTab(w, name)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.topology)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([230, 1050])
        look = self._look = WindowLook(self, settings, self.persist, self.splitter, self.results_tab)
        self.banner = Banner()
        self.banner.close_button.clicked.connect(self._first_run_seen)
        central = QWidget()
        clay = QVBoxLayout(central)
        clay.setContentsMargins(4, 4, 4, 0)
        clay.addWidget(self.banner)
        clay.addWidget(self.splitter, 1)
        self.setCentralWidget(central)
        self.messages_panel = MessagesPanel(self)
        self.messages, self.messages_dock = self.messages_panel.messages, self.messages_panel.dock
        self.hosts = HostFactsKeeper(self, self.doc, self.topology, self.targets_tab, self.show_fio_status)
        self.edits = TopologyEdits(
            self,
            self.doc,
            self.topology,
            self.hosts,
            self.targets_tab,
            self.network_tab,
            self.statusBar(),
            self.show_tab,
            lambda title, text: self.show_problem(title, text),
        )

        # History (app/ui/history/history_hook.py): its tab, stored runs, comparisons and reports; its
        # actions are declared with the others in app/ui/actions.py.
        from app.ui.history.history_hook import install_history

        self.history = install_history(self, self, self.tabs, self.controller)
        tab_leaves_tables(self)
        self.files = PlanFiles(
            self,
            self,
            self.doc,
            self.live,
            self.controller,
            self.hosts,
            self.messages_dock,
            self._update_title,
        )
        self.status = RunStatus(self.statusBar())
        self.run_control = RunControl(
            self,
            self,
            self.doc,
            self.live,
            self.controller,
            self.topology,
            self.results_tab,
            self.status,
            self.messages_dock,
            self.show_tab,
        )
        self.setup_tab.curve_box.requested.connect(
            lambda p99, metric, top: self.run_control.start_curve(p99, metric, top)
        )
        self.setup_tab.pts_box.requested.connect(self.run_control.start_pts)
        self.run_control.round_shown = self.setup_tab.pts_box.show_round
        self.undo_action, self.redo_action = actions.undo_actions(self, self.doc.undo_stack)
        # a plan field's Ctrl+Z is the plan's Undo (History's search and the run editor keep their own)
        self._undo_keys = route_undo_keys(self.tabs, exclude=[self.history.workspace])
        slots = {
            "new": self.files.new_plan,
            "open": self.files.open_dialog,
            "save": self.files.save,
            "save_as": self.files.save_as,
            "export_icf": self.files.export_icf,
            "quit": self.close,
            "add_manager": self.edits.add_manager,
            "set_manager_host": self.edits.set_manager_host,
            "add_worker": self.edits.add_worker,
            "duplicate_worker": self.edits.duplicate_worker,
            "add_target": self.edits.add_target,
            "add_network_worker": self.edits.add_network_worker,
            "remove": self.edits.remove_selected,
            "start": self.run_control.start_run,
            "stop": self.run_control.stop_run,
            "stop_all": self.run_control.stop_all,
            "about": self.about,
            "user_guide": self.user_guide,
            "open_log_folder": self.open_log_folder,
            **self.history.slots(),
        }
        provided: dict[str, QAction | QMenu] = {
            "undo": self.undo_action,
            "redo": self.redo_action,
            "recent": self.files.recent_menu,
            "examples": self.files.examples_menu,
            "messages": self.messages_dock.toggleViewAction(),
            "theme": look.make_theme_menu(),
        }
        self.action_map, self.menus, self.toolbar = actions.build(self, slots, provided)
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        look.toolbar = self.toolbar
        self.statusBar().setToolTip(f"Results database: {self.db_path}")
        self.status_state, self.status_step, self.status_time = (
            self.status.state,
            self.status.step,
            self.status.time,
        )

        self.topology.selection_changed.connect(self._on_selection)
        self.network_tab.worker_added.connect(self.topology.select)
        self.doc.replaced.connect(self._on_replaced)
        self.doc.changed.connect(self._on_changed)
        self.doc.dirty_changed.connect(lambda _d: self._update_title())
        self.controller.state_changed.connect(self._on_run_state)
        self.controller.finished.connect(self._close_if_asked)  # (after RunControl has said how it ended)
        self.controller.tick.connect(self.results_tab.redraw)
        self.hosts.start_probes()
        self._on_replaced()
        self.results_tab.apply_palette()
        # "Follow the system": a light/dark switch of the desktop re-themes the window, charts included
        # (a method of the window: the connection ends with the window, as a plain object's would not)
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._follow_system_scheme)
        look.restore_layout()
        self.run_control.update_status()
        self._update_actions()

    # --- document events ---------------------------------------------------------------------
    def _on_replaced(self) -> None:
        self.hosts.forget_remote_facts()
        self.topology.rebuild(
            self.doc.plan,
            Selection(0, 0) if self.doc.plan.managers and self.doc.plan.managers[0].workers else Selection(),
        )
        self._on_selection(self.topology.selection)
        self._update_title()
        self.messages.clear()
        for w in self.doc.warnings:
            self.add_message(w, "warning")
        for n in self.doc.notes:
            self.add_message(f"{n.where}: {n.message}", "note")
        errors = plan_errors(self.doc.plan)
        for p in errors:
            self.add_message(str(p), "error")
        if self.doc.warnings or self.doc.notes or errors:
            self.messages_dock.show()
        self._update_actions()

    def _on_changed(self, what: Change) -> None:
        if what in (Change.TOPOLOGY, Change.ASSIGNMENT, Change.TARGETS):
            self.topology.rebuild(self.doc.plan)
        self._update_actions()  # Start waits until the plan has no errors

    def _on_run_state(self, _state: str) -> None:
        self._update_actions()

    def _close_if_asked(self, _status: str) -> None:
        if self._close_after_run:  # closed during the run: the run has ended, the window closes
            self.close()

    def _update_actions(self) -> None:
        from app.ui import actions as A

        running = self.controller.running
        sel = self.topology.selection
        errors = plan_errors(self.doc.plan)
        A.update_enabled(
            self.action_map,
            {
                A.IDLE: not running,
                A.RUNNING: running,
                A.STOPPABLE: self.controller.state == RUNNING,
                A.WORKER: sel.is_worker,
                A.MANAGER: sel.manager is not None and not sel.is_worker,
                A.NOT_ALL: not sel.is_all,
                A.VALID: not errors,
            },
        )
        start = self.action_map["start"]
        start.setToolTip(
            "Start the test (F5)"
            if not errors
            else "Fix the plan's errors first:\n"
            + "\n".join(f"\u2022 {p}" for p in errors[:10])
            + (f"\n\u2026 and {len(errors) - 10} more" if len(errors) > 10 else "")
        )
        for tab in (self.targets_tab, self.network_tab, self.specs_tab, self.setup_tab):
            tab.setEnabled(not running)

    def _on_selection(self, sel: Selection) -> None:
        self.targets_tab.set_selection(sel)
        self.network_tab.set_selection(sel)
        self.specs_tab.set_selection(sel)
        self.results_tab.set_selection(sel)
        self._update_actions()

    # --- talking to the user (the UserDesk the panels are given) ---------------------------------
    def add_message(self, text: str, level: str = "info") -> None:
        self.messages_panel.add(text, level)

    def show_problem(self, title: str, text: str) -> None:
        """Tell the user something went wrong (a modal box; tests replace this method)."""
        self.add_message(f"{title}: {text}", "error")
        log.warning("problem shown: %s: %s", title, text)
        QMessageBox.warning(self, title, text)

    def ask(self, title: str, text: str, action: str = "Yes") -> bool:
        """A question before something destructive: the ``action`` button does it, Cancel is the default
        (a modal box; tests replace this method)."""
        return confirm(self, title, text, action)

    def _update_title(self) -> None:
        self.setWindowTitle(f"{self.doc.title}[*] — Fiometer")
        self.setWindowModified(self.doc.dirty)

    def show_fio_status(self, status: Any) -> None:
        """First run (or fio missing): where fio is, or how to install it (app.first_run's words)."""
        from app.first_run import first_run_line, first_run_text

        # without settings (benchmarks, embedded uses) there is no "first" run to greet
        seen = self.settings is None or bool(self.settings.value("firstRun/seen", False, type=bool))
        if not status.found or not seen or status.upgrade_advised:
            self.banner.show_text(
                first_run_line(status), first_run_text(status, gui=True), warning=not status.found
            )

    def _first_run_seen(self) -> None:
        if self.persist and self.settings is not None:
            self.settings.setValue("firstRun/seen", True)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._fitted:  # the first time: on the screen, whole (default or remembered size)
            self._fitted = True
            self.look.fit_to_screen()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if self._look is not None:  # (None while the window is being built)
            self._look.fit_toolbar()

    @property
    def look(self) -> WindowLook:
        """Theme, size on the screen, remembered layout."""
        if self._look is None:
            raise RuntimeError("the window is still being built")
        return self._look

    @property
    def theme_mode(self) -> str:
        return self.look.theme_mode

    @property
    def theme_actions(self) -> dict[str, QAction]:
        """View > Theme's choices by mode."""
        return self.look.theme_actions

    def set_theme(self, mode: str) -> None:
        self.look.set_theme(mode)

    def _follow_system_scheme(self, _scheme: object = None) -> None:
        self.look.follow_system_scheme()

    def show_tab(self, page: QWidget) -> None:
        """Bring a tab to the front by its page (or the widget a scroll area shows as the page)."""
        for i in range(self.tabs.count()):
            w = self.tabs.widget(i)
            if w is page or (isinstance(w, QScrollArea) and w.widget() is page):
                self.tabs.setCurrentIndex(i)
                return

    # --- drag and drop (Qt's events; PlanFiles opens what is dropped) ---------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 (Qt's name)
        if droppable_paths(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802
        if droppable_paths(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        self.files.open_dropped(event)

    # --- closing -------------------------------------------------------------------------------
    def close_box(self) -> tuple[QMessageBox, dict[Any, str]]:
        """The question asked when closing during a run (not shown), and what each button means."""
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Close Fiometer during a test?",
            self.close_text(),
            QMessageBox.StandardButton.NoButton,
            self,
        )
        answers = {}
        if self.doc.dirty:
            box.setInformativeText(f"The plan {self.doc.title} also has unsaved changes.")
            answers[box.addButton("Stop, save the plan and close", QMessageBox.ButtonRole.AcceptRole)] = (
                "save"
            )
            answers[
                box.addButton("Stop, discard the changes and close", QMessageBox.ButtonRole.DestructiveRole)
            ] = "discard"
        else:
            answers[box.addButton("Stop the test and close", QMessageBox.ButtonRole.AcceptRole)] = "close"
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.setEscapeButton(cancel)
        return box, answers

    def close_text(self) -> str:
        """The close question's words, with the step running now."""
        p = self.controller.progress
        return (
            f"A test is running (step {max(p.step, 1)} of {p.steps}). Closing stops it: the current step "
            "ends with fio's numbers so far, no further steps run, and what has run is kept in History."
        )

    def close_question(self) -> str:
        """One question when closing during a run, covering the run and the plan's unsaved changes:
        'save' | 'discard' | 'close' | 'cancel'. Cancel is the default and changes nothing. While it is
        open the run goes on: its text follows the running step."""
        box, answers = self.close_box()

        def follow() -> None:
            if self.controller.running:
                box.setText(self.close_text())

        self.controller.tick.connect(follow)
        try:
            box.exec()
        finally:
            self.controller.tick.disconnect(follow)
        return answers.get(box.clickedButton(), "cancel")

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if self.controller.running:
            event.ignore()
            if self._close_after_run:
                return
            answer = self.close_question()
            if answer == "cancel" or (answer == "save" and not self.files.save()):
                return  # the run goes on, the plan stays as it is
            self._changes_settled = True  # asked already: closing after the run asks nothing more
            if not self.controller.running:  # the run ended while the question was open
                QTimer.singleShot(0, self.close)
                return
            self._close_after_run = True
            self.controller.stop()
            QTimer.singleShot(STOP_GRACE_MS, self.controller.abort)
            self.statusBar().showMessage("Stopping the test; Fiometer closes when fio has ended…")
            return
        if not self._changes_settled and not self.files.maybe_discard():
            event.ignore()
            return
        self.look.save_layout()
        event.accept()

    def user_guide(self) -> None:
        """Help > User guide: the guide bundled with the resources, in a window of its own."""
        from app.ui.help_view import show_user_guide

        self._guide = show_user_guide(self)

    def open_log_folder(self) -> None:
        """Help > Open log folder: the folder `fiometer doctor --logs` names, in the file manager; a folder
        that does not exist yet (nothing logged so far) is said, not created."""
        from app.diagnostics import log_path

        folder = log_path().parent
        if not folder.is_dir():
            QMessageBox.information(
                self,
                "Open log folder",
                f"There is no log folder yet: {folder}\n\nFiometer creates it when it first "
                "writes to its log (a warning, an error, a run). "
                "`fiometer doctor --logs` shows the log and its last lines.",
            )
            return
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
            QMessageBox.information(
                self, "Open log folder", f"No file manager could be opened. The log folder is:\n{folder}"
            )

    def about(self) -> None:
        from app.about import about_text

        QMessageBox.about(self, f"About Fiometer {__version__}", about_text(db_path=str(self.db_path)))

    @property
    def db_path(self) -> Path:
        """The results database this window stores runs in and History reads."""
        from app.store.db_location import resolve_db_path

        return resolve_db_path(self.controller.db_path)
