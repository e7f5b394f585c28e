"""The main window: Topology on the left, Iometer's tabs on the right, menus, toolbar, status bar."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDockWidget,
    QFileDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app import __version__
from app.model.examples import EXAMPLES, example
from app.model.fidelity import all_notes
from app.model.opening import PlanOpenError
from app.model.plan import LOCAL, Manager, Worker
from app.model.to_icf import plan_to_icf, unwritable
from app.model.units import format_duration
from app.model.validation import validate
from app.ui import theme
from app.ui.plan.document import ASSIGNMENT, TOPOLOGY, PlanDocument
from app.ui.plan.hosts import HostFacts, LocalFactsProbe, RemoteProbe
from app.ui.plan.library import SpecLibrary
from app.ui.plan.manager_dialog import AddManagerDialog, parse_host_port
from app.ui.plan.setup_tab import SetupTab
from app.ui.plan.specs_tab import SpecsTab
from app.ui.plan.targets_tab import TargetsTab
from app.ui.plan.topology import Selection, TopologyTree
from app.ui.run.live_data import LiveResults
from app.ui.run.results_tab import ResultsTab
from app.ui.run.run_controller import IDLE_STATE, RUNNING, RunController
from app.ui.settings import add_recent_file, recent_files
from app.ui.widgets import Banner

PLAN_SUFFIXES = (".icf", ".conf", ".json")
OPEN_FILTER = "Plans (*.icf *.conf *.json);;Iometer configuration (*.icf *.conf);;Fiometer plan (*.json);;All files (*)"
SAVE_FILTER = "Fiometer plan (*.fiometer.json *.json)"
TAB_NAMES = ("Disk Targets", "Access Specifications", "Test Setup", "Results Display")
STOP_GRACE_MS = 15000  # closing during a run: after Stop, abort if fio has not ended by then


def icf_export_available() -> bool:
    import icf_import

    return hasattr(icf_import, "write")


def droppable_paths(mime: Any) -> list[Path]:
    if not mime.hasUrls():
        return []
    return [Path(u.toLocalFile()) for u in mime.urls()
            if u.isLocalFile() and Path(u.toLocalFile()).suffix.lower() in PLAN_SUFFIXES]


class MainWindow(QMainWindow):
    def __init__(self, settings: QSettings | None = None, persist: bool = True,
                 db_path: str | Path | None = None):
        super().__init__()
        self.settings = settings
        self.persist = persist and settings is not None
        self.doc = PlanDocument(self)
        self.library = SpecLibrary(settings)
        self.live = LiveResults()
        self.controller = RunController(self, None, db_path)
        self.run_options: Any = None  # RunOptions for the next Start (tests, screenshots); None = plan's own
        self.run_endpoints: dict[str, Any] | None = None
        self._close_after_run = False
        self.theme_mode = str(settings.value("view/theme", theme.SYSTEM)) if settings else theme.SYSTEM

        self.setWindowTitle("Fiometer")
        self.setAcceptDrops(True)
        self.resize(1280, 800)

        self.topology = TopologyTree()
        self.tabs = QTabWidget()
        self.targets_tab = TargetsTab(self.doc)
        self.specs_tab = SpecsTab(self.doc, self.library)
        self.setup_tab = SetupTab(self.doc)
        self.results_tab = ResultsTab(self.doc, self.live)
        for w, name in zip((self.targets_tab, self.specs_tab, self.setup_tab, self.results_tab), TAB_NAMES,
                           strict=True):
            self.tabs.addTab(w, name)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.topology)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([230, 1050])
        self.banner = Banner()
        self.banner.close_button.clicked.connect(self._first_run_seen)
        central = QWidget()
        clay = QVBoxLayout(central)
        clay.setContentsMargins(4, 4, 4, 0)
        clay.addWidget(self.banner)
        clay.addWidget(self.splitter, 1)
        self.setCentralWidget(central)

        self.messages = QListWidget()
        self.messages.setWordWrap(True)
        self.messages_dock = QDockWidget("Messages", self)
        self.messages_dock.setObjectName("messagesDock")
        self.messages_dock.setWidget(self.messages)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.messages_dock)
        self.resizeDocks([self.messages_dock], [110], Qt.Orientation.Vertical)
        self.messages_dock.hide()

        self._make_actions()
        self._make_menus_and_toolbar()
        self._make_status_bar()

        self.topology.selection_changed.connect(self._on_selection)
        self.doc.replaced.connect(self._on_replaced)
        self.doc.changed.connect(self._on_changed)
        self.doc.dirty_changed.connect(lambda _d: self._update_title())
        self.controller.state_changed.connect(self._on_run_state)
        self.controller.refused.connect(lambda text: self.show_problem("Cannot start the test", text))
        self.controller.finished.connect(self._on_run_finished)

        self.local_probe = LocalFactsProbe()  # no parent: see hosts.py on threads and lifetimes
        self.local_probe.ready.connect(self._on_local_facts)
        self.local_probe.fio_status.connect(self.show_fio_status)
        self.local_probe.start()
        self.remote_probe = RemoteProbe()
        self.remote_probe.done.connect(self._on_remote_facts)
        self._on_replaced()
        self.results_tab.apply_palette()
        # --- History hook (issue 4, app/ui/history/history_hook.py): History tab, File > Import Iometer results…,
        # View > History, stored runs, comparisons and reports. Nothing else in this file knows about it.
        from app.ui.history.history_hook import install_history

        self.history = install_history(self)
        # --- end of History hook
        self._restore_layout()
        self._on_run_state(IDLE_STATE)

    # --- actions, menus, toolbar, status -------------------------------------------------------
    def _action(self, text: str, slot: Any, shortcut: Any = None, tip: str = "", icon: Any = None) -> QAction:
        a = QAction(text, self)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        if icon is not None:
            a.setIcon(self.style().standardIcon(icon))
        a.setToolTip(tip or text.replace("&", "").replace("…", ""))
        a.setStatusTip(tip)
        a.triggered.connect(lambda _checked=False: slot())
        self.addAction(a)
        return a

    def _make_actions(self) -> None:
        SP = self.style().StandardPixmap
        self.act_new = self._action("&New", self.new_plan, QKeySequence.StandardKey.New, "Start a new plan (Ctrl+N)",
                                    SP.SP_FileIcon)
        self.act_open = self._action("&Open…", self.open_dialog, QKeySequence.StandardKey.Open,
                                     "Open an Iometer .icf or a Fiometer plan (Ctrl+O)", SP.SP_DialogOpenButton)
        self.act_save = self._action("&Save", self.save, QKeySequence.StandardKey.Save,
                                     "Save the plan as a Fiometer plan file (Ctrl+S)", SP.SP_DialogSaveButton)
        self.act_save_as = self._action("Save &As…", self.save_as, QKeySequence.StandardKey.SaveAs,
                                        "Save the plan under a new name")
        self.act_export = self._action("&Export as .icf…", self.export_icf, None, "Write an Iometer .icf file")
        if not icf_export_available():
            self.act_export.setEnabled(False)
            self.act_export.setToolTip("Export as .icf needs the ICF writer (icf_import.write), which is not "
                                       "in this build yet")
        self.act_quit = self._action("&Quit", self.close, QKeySequence.StandardKey.Quit, "Close Fiometer")
        self.act_add_manager = self._action("Add &manager…", self.add_manager, None,
                                            "Add a host running fio --server as a manager", SP.SP_ComputerIcon)
        self.act_map_manager = self._action("Set manager &host…", self.set_manager_host, None,
                                            "Choose where the selected manager runs: this machine or a fio "
                                            "server (imported managers have no host until you choose)")
        self.act_add_worker = self._action("Add &worker", self.add_worker, None,
                                           "Add a disk worker to the selected manager", SP.SP_FileDialogNewFolder)
        self.act_dup_worker = self._action("&Duplicate worker", self.duplicate_worker, "Ctrl+D",
                                           "Copy the selected worker with its targets and specs",
                                           SP.SP_FileDialogDetailedView)
        self.act_remove = self._action("&Remove", self.remove_selected, None,
                                       "Remove the selected worker or manager", SP.SP_TrashIcon)
        self.act_start = self._action("&Start", self.start_run, "F5", "Start the test (F5)", SP.SP_MediaPlay)
        self.act_stop = self._action("S&top", self.stop_run, "Esc",
                                     "Stop (Esc): end the current step with fio's final numbers and go on "
                                     "with the next step, as Iometer's Stop does", SP.SP_MediaStop)
        self.act_stop_all = self._action("Stop &all", self.stop_all, "Shift+Esc",
                                         "Stop all (Shift+Esc): end the current step with fio's final numbers and "
                                         "run no further steps; press again to abort at once", SP.SP_BrowserStop)
        self.act_stop.setShortcutContext(Qt.ShortcutContext.WindowShortcut)

    def _make_menus_and_toolbar(self) -> None:
        mb = self.menuBar()
        file_menu = mb.addMenu("&File")
        file_menu.addActions([self.act_new, self.act_open])
        self.recent_menu = file_menu.addMenu("Open &recent")
        self.examples_menu = file_menu.addMenu("&Examples")
        for ex in EXAMPLES:
            a = self.examples_menu.addAction(ex.title, lambda key=ex.key: self.open_example(key))
            a.setToolTip(ex.description)
            a.setStatusTip(ex.description)
        self.examples_menu.setToolTipsVisible(True)
        file_menu.addSeparator()
        file_menu.addActions([self.act_save, self.act_save_as, self.act_export])
        file_menu.addSeparator()
        file_menu.addAction(self.act_quit)
        edit = mb.addMenu("&Edit")
        edit.addActions([self.act_add_manager, self.act_map_manager, self.act_add_worker, self.act_dup_worker,
                         self.act_remove])
        run = mb.addMenu("&Run")
        run.addActions([self.act_start, self.act_stop, self.act_stop_all])
        view = mb.addMenu("&View")
        view.addAction(self.messages_dock.toggleViewAction())
        theme_menu = view.addMenu("&Theme")
        self.theme_actions: dict[str, QAction] = {}
        for mode, title in ((theme.SYSTEM, "Follow the system"), (theme.LIGHT, "Light"), (theme.DARK, "Dark")):
            a = QAction(title, self, checkable=True)
            a.setChecked(mode == self.theme_mode)
            a.triggered.connect(lambda _c=False, m=mode: self.set_theme(m))
            theme_menu.addAction(a)
            self.theme_actions[mode] = a
        help_menu = mb.addMenu("&Help")
        help_menu.addAction(self._action("&About Fiometer", self.about))
        self._fill_recent_menu()

        tb = self.addToolBar("Main")
        tb.setObjectName("mainToolbar")
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        tb.addActions([self.act_new, self.act_open, self.act_save])
        tb.addSeparator()
        tb.addActions([self.act_add_manager, self.act_add_worker, self.act_dup_worker, self.act_remove])
        tb.addSeparator()
        tb.addActions([self.act_start, self.act_stop, self.act_stop_all])

    def _make_status_bar(self) -> None:
        sb = self.statusBar()
        self.status_state = QLabel()
        self.status_step = QLabel()
        self.status_time = QLabel()
        for w in (self.status_state, self.status_step, self.status_time):
            w.setMinimumWidth(120)
            sb.addPermanentWidget(w)
        self.clock = QTimer(self)
        self.clock.setInterval(500)
        self.clock.timeout.connect(self._update_status)

    # --- document events ---------------------------------------------------------------------
    def _on_replaced(self) -> None:
        self.topology.facts = {k: v for k, v in self.topology.facts.items()
                               if (m := self.doc.plan.manager(k)) is not None and m.host == LOCAL}
        for m in self.doc.plan.managers:
            self.probe_manager(m)
        self.topology.rebuild(self.doc.plan, Selection(0, 0) if self.doc.plan.managers and
                              self.doc.plan.managers[0].workers else Selection())
        self._on_selection(self.topology.selection)
        self._update_title()
        self.messages.clear()
        for w in self.doc.warnings:
            self.add_message(w, "warning")
        for n in self.doc.notes:
            self.add_message(f"{n.where}: {n.message}", "note")
        if self.doc.warnings or self.doc.notes:
            self.messages_dock.show()

    def _on_changed(self, what: str) -> None:
        if what in (TOPOLOGY, ASSIGNMENT) or what == "targets":
            self.topology.rebuild(self.doc.plan)

    def _on_selection(self, sel: Selection) -> None:
        self.targets_tab.set_selection(sel)
        self.specs_tab.set_selection(sel)
        self.results_tab.set_selection(sel)
        self._update_actions()

    def _update_title(self) -> None:
        self.setWindowTitle(f"{self.doc.title}[*] — Fiometer")
        self.setWindowModified(self.doc.dirty)

    def show_fio_status(self, status: Any) -> None:
        """First run (or fio missing): where fio is, or how to install it (app.first_run's words)."""
        from app.first_run import first_run_text

        # without settings (benchmarks, embedded uses) there is no "first" run to greet
        seen = self.settings is None or bool(self.settings.value("firstRun/seen", False, type=bool))
        if not status.found:
            self.banner.show_text(first_run_text(status), warning=True)
        elif not seen or status.upgrade_advised:
            self.banner.show_text("Welcome to Fiometer. " + first_run_text(status))

    def _first_run_seen(self) -> None:
        if self.persist:
            self.settings.setValue("firstRun/seen", True)

    def probe_manager(self, m: Manager) -> None:
        """Ask a remote manager's fio server for its OS and fio version, in the background."""
        hp = parse_host_port(m.host) if m.host not in (None, LOCAL) else None
        if hp is not None:
            self.remote_probe.run(m.name, *hp)

    def _on_remote_facts(self, name: str, facts: HostFacts) -> None:
        m = self.doc.plan.manager(name)
        if m is None or m.host in (None, LOCAL):
            return
        self.topology.set_facts(name, facts)
        self.topology.rebuild(self.doc.plan)

    def _on_local_facts(self, facts: HostFacts) -> None:
        for m in self.doc.plan.managers:
            if m.host == LOCAL:
                self.topology.set_facts(m.name, facts)
        self.local_facts = facts
        self.topology.rebuild(self.doc.plan)

    # --- messages ------------------------------------------------------------------------------
    def add_message(self, text: str, level: str = "info") -> None:
        prefix = {"error": "Error: ", "warning": "Warning: ", "note": "fio cannot reproduce exactly — "}.get(level, "")
        item = QListWidgetItem(prefix + text)
        if level == "error":
            item.setForeground(Qt.GlobalColor.red)
        self.messages.addItem(item)
        self.messages.scrollToBottom()

    def show_problem(self, title: str, text: str) -> None:
        """Tell the user something went wrong (a modal box; tests replace this method)."""
        self.add_message(f"{title}: {text}", "error")
        QMessageBox.warning(self, title, text)

    def ask(self, title: str, text: str) -> bool:
        """Yes/No question (a modal box; tests replace this method)."""
        return QMessageBox.question(self, title, text) == QMessageBox.StandardButton.Yes

    # --- files ---------------------------------------------------------------------------------
    def _maybe_discard(self) -> bool:
        if not self.doc.dirty:
            return True
        box = QMessageBox(QMessageBox.Icon.Question, "Unsaved changes",
                          f"Save the changes to {self.doc.title}?",
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self)
        answer = box.exec()
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def new_plan(self) -> None:
        if self.controller.running or not self._maybe_discard():
            return
        self.doc.new()
        self.live.clear()
        self._on_local_facts(getattr(self, "local_facts", HostFacts()))

    def open_dialog(self) -> None:
        start = str(Path(recent_files(self.settings)[0]).parent) if self.settings and recent_files(self.settings) \
            else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, "Open plan", start, OPEN_FILTER)
        if path:
            self.open_path(path)

    def open_path(self, path: str | Path, ask_discard: bool = True) -> bool:
        """Open a .icf or plan file; problems are shown, never raised."""
        if self.controller.running:
            self.show_problem("Cannot open", "Stop the running test before opening another plan.")
            return False
        if ask_discard and not self._maybe_discard():
            return False
        try:
            opened = self.doc.open(path)
        except (PlanOpenError, OSError) as e:
            self.show_problem("Cannot open the plan", str(e))
            return False
        except Exception as e:  # a reader bug: say so instead of crashing the window
            self.show_problem("Cannot open the plan", f"{path}: unexpected error: {e}")
            return False
        self.live.clear()
        if getattr(self, "local_facts", None):
            self._on_local_facts(self.local_facts)
        if self.persist:
            add_recent_file(self.settings, path)
            self._fill_recent_menu()
        self.statusBar().showMessage(f"Opened {path}: {len(opened.plan.managers)} manager(s), "
                                     f"{len(opened.plan.specs)} access spec(s)", 8000)
        return True

    def open_example(self, key: str) -> bool:
        """A bundled example plan (File > Examples), as a new unsaved plan."""
        if self.controller.running:
            self.show_problem("Cannot open", "Stop the running test before opening another plan.")
            return False
        if not self._maybe_discard():
            return False
        plan = example(key)
        self.doc.replace(plan, notes=all_notes(plan))
        self.live.clear()
        if getattr(self, "local_facts", None):
            self._on_local_facts(self.local_facts)
        self.statusBar().showMessage(f"Example {plan.name!r}: {plan.setup.description}. Its target TESTFILE needs "
                                     "a place: select it in Disk Targets and use Set path...", 15000)
        return True

    def save(self) -> bool:
        if self.doc.path is None:
            return self.save_as()
        return self._save_to(self.doc.path)

    def save_as(self) -> bool:
        base = self.doc.path or (self.doc.opened_from.with_suffix(".fiometer.json") if self.doc.opened_from
                                 else Path.home() / f"{self.doc.plan.name}.fiometer.json")
        path, _ = QFileDialog.getSaveFileName(self, "Save plan", str(base), SAVE_FILTER)
        return self._save_to(Path(path)) if path else False

    def _save_to(self, path: Path) -> bool:
        try:
            self.doc.save(path)
        except OSError as e:
            self.show_problem("Cannot save", f"{path}: {e}")
            return False
        if self.persist:
            add_recent_file(self.settings, path)
            self._fill_recent_menu()
        self._update_title()
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def export_icf(self) -> None:
        base = (self.doc.path or self.doc.opened_from or Path.home() / self.doc.plan.name).with_suffix(".icf")
        path, _ = QFileDialog.getSaveFileName(self, "Export as Iometer configuration", str(base),
                                              "Iometer configuration (*.icf)")
        if path:
            self.export_icf_to(Path(path))

    def export_icf_to(self, path: Path) -> bool:
        """Write the plan as an Iometer 1.1.0 .icf; what the file cannot keep goes to Messages."""
        import icf_import

        problems = unwritable(self.doc.plan)
        if problems:  # never a '?' or a name Iometer reads back cut short
            self.show_problem("Cannot export as .icf", "The .icf would not say what the plan says:\n\n"
                              + "\n".join(problems))
            return False
        doc, notes = plan_to_icf(self.doc.plan)
        try:
            icf_import.save(doc, path)
        except OSError as e:
            self.show_problem("Cannot export", f"{path}: {e}")
            return False
        for n in notes:
            self.add_message(f"Export: {n}", "warning")
        if notes:
            self.messages_dock.show()
        self.statusBar().showMessage(f"Exported {path}", 5000)
        return True

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = recent_files(self.settings) if self.settings else []
        for f in files:
            self.recent_menu.addAction(f, lambda p=f: self.open_path(p))
        self.recent_menu.setEnabled(bool(files))

    def place_targets(self, mapping: dict[str, str]) -> int:
        """Set the path of every target whose name the mapping knows (Iometer's 'C:' rule too)."""
        from app.engine.targets import lookup_mapping

        placed = 0
        for m in self.doc.plan.managers:
            for w in m.workers:
                for t in w.targets:
                    path = lookup_mapping(t.name, mapping)
                    if path and t.path != path:
                        t.path = path
                        placed += 1
        if placed:
            self.doc.touch("targets")
        return placed

    # --- drag and drop -------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 (Qt's name)
        if droppable_paths(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: Any) -> None:  # noqa: N802
        if droppable_paths(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        paths = droppable_paths(event.mimeData())
        if not paths:
            event.ignore()
            return
        event.acceptProposedAction()
        # open after the drop returns, so a dialog does not run inside the drag-and-drop loop
        QTimer.singleShot(0, lambda: self.open_path(paths[0]))

    # --- topology edits ------------------------------------------------------------------------
    def _selected_manager(self) -> Manager | None:
        sel = self.topology.selection
        plan = self.doc.plan
        if sel.manager is not None and sel.manager < len(plan.managers):
            return plan.managers[sel.manager]
        return plan.managers[0] if len(plan.managers) == 1 else None

    def add_manager(self) -> None:
        dlg = AddManagerDialog({m.name for m in self.doc.plan.managers}, self)
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return
        self.add_manager_to_plan(dlg.manager_name(), dlg.address(), dlg.facts)

    def add_manager_to_plan(self, name: str, address: str, facts: HostFacts | None = None) -> None:
        m = Manager(name, address, workers=[Worker("Worker 1")])
        self._give_default_specs(m.workers[0])
        self.doc.plan.managers.append(m)
        self._after_host_change(m, facts)
        self.topology.select(Selection(len(self.doc.plan.managers) - 1))

    def set_manager_host(self) -> None:
        sel = self.topology.selection
        if sel.manager is None:
            self.statusBar().showMessage("Select a manager first", 4000)
            return
        m = self.doc.plan.managers[sel.manager]
        dlg = AddManagerDialog({x.name for x in self.doc.plan.managers}, self, manager=m)
        if dlg.exec() == QDialog.DialogCode.Accepted:
            m.host = dlg.address()
            self._after_host_change(m, dlg.facts)

    def _after_host_change(self, m: Manager, facts: HostFacts | None) -> None:
        self.topology.facts.pop(m.name, None)
        if m.host == LOCAL and getattr(self, "local_facts", None):
            self.topology.set_facts(m.name, self.local_facts)
        elif facts is not None:
            self.topology.set_facts(m.name, facts)
        else:
            self.probe_manager(m)
        self.doc.touch(TOPOLOGY)

    def _give_default_specs(self, w: Worker) -> None:
        """Iometer gives a new worker every spec whose default assignment is ALL (or DISK)."""
        w.specs = [s.name for s in self.doc.plan.specs if s.default_assignment in ("ALL", "DISK")]

    def add_worker(self) -> None:
        m = self._selected_manager()
        if m is None:
            if not self.doc.plan.managers:
                self.show_problem("No manager", "Add a manager first.")
                return
            m = self.doc.plan.managers[0]
        w = Worker(self.doc.unique_worker_name(m))
        self._give_default_specs(w)
        m.workers.append(w)
        self.doc.touch(TOPOLOGY)
        mi = self.doc.plan.managers.index(m)
        self.topology.select(Selection(mi, len(m.workers) - 1))

    def duplicate_worker(self) -> None:
        sel = self.topology.selection
        if not sel.is_worker:
            self.statusBar().showMessage("Select a worker to duplicate", 4000)
            return
        m = self.doc.plan.managers[sel.manager]
        w = copy.deepcopy(m.workers[sel.worker])
        w.name = self.doc.unique_worker_name(m)
        m.workers.insert(sel.worker + 1, w)
        self.doc.touch(TOPOLOGY)
        self.topology.select(Selection(sel.manager, sel.worker + 1))

    def remove_selected(self) -> None:
        sel = self.topology.selection
        plan = self.doc.plan
        if sel.is_all:
            self.statusBar().showMessage("Select a worker or a manager to remove", 4000)
            return
        if sel.is_worker:
            del plan.managers[sel.manager].workers[sel.worker]
            new = Selection(sel.manager, sel.worker - 1) if sel.worker > 0 else Selection(sel.manager)
        else:
            del plan.managers[sel.manager]
            new = Selection()
        self.doc.touch(TOPOLOGY)
        self.topology.select(new)

    def _update_actions(self) -> None:
        running = self.controller.running
        sel = self.topology.selection
        for a in (self.act_new, self.act_open, self.act_add_manager, self.act_add_worker):
            a.setEnabled(not running)
        self.act_dup_worker.setEnabled(not running and sel.is_worker)
        self.act_map_manager.setEnabled(not running and sel.manager is not None and not sel.is_worker)
        self.act_remove.setEnabled(not running and not sel.is_all)
        self.act_start.setEnabled(not running)
        self.act_stop.setEnabled(self.controller.state == RUNNING)
        self.act_stop_all.setEnabled(running)
        for tab in (self.targets_tab, self.specs_tab, self.setup_tab):
            tab.setEnabled(not running)

    # --- running -------------------------------------------------------------------------------
    def arm_writes(self, risks: list[Any]) -> bool:
        """Ask before writing to raw disks or existing files (the engine refuses unarmed writes)."""
        lines = "\n".join(f"• {r.manager}: {r.path} — {r.reason}" for r in risks)
        if not self.ask("Targets would be written", "This run WRITES to targets holding data:\n\n" + lines
                        + "\n\nTheir contents will be overwritten. Start anyway?"):
            return False
        in_use = [r for r in risks if r.in_use]
        if in_use:
            return self.ask("Disks in use", "These disks are in use; writing corrupts what is on them:\n\n"
                            + "\n".join(f"• {r.manager}: {r.path} — {r.use}" for r in in_use)
                            + "\n\nAre you absolutely sure?")
        return True

    def create_folders(self, folders: list[str]) -> bool:
        """New test files need these folders; fio would create them silently, so Fiometer asks."""
        return self.ask("Folders do not exist", "The test files go into folders that do not exist:\n\n"
                        + "\n".join(f"• {f}" for f in folders) + "\n\nCreate them?")

    def start_run(self) -> bool:
        if self.controller.running:
            return False
        plan = self.doc.plan
        errors = [p for p in validate(plan) if p.severity == "error"]
        if errors:
            self.show_problem("The plan has errors", "\n".join(str(p) for p in errors))
            return False
        listener = self.controller.start(plan, self.run_options, self.run_endpoints, self.arm_writes,
                                         self.create_folders)
        if listener is None:
            return False
        self.live.clear()
        self.results_tab.charts.clear_marks()
        self.results_tab.redraw(force=True)
        listener.stepStarted.connect(self._on_step_started)
        listener.samplesArrived.connect(self._on_samples)
        listener.messageArrived.connect(self._on_run_message)
        listener.stepFinished.connect(self._on_step_finished)
        self.tabs.setCurrentWidget(self.results_tab)
        self.add_message(f"Run started: {self.controller.progress.steps} step(s)")
        for note in self.controller.runner.notes if self.controller.runner else []:
            self.add_message(note, "warning")  # what could not be verified on remote managers
        return True

    def _on_step_started(self, index: int, offset: float, step: Any) -> None:
        self.live.start_step(offset, f"{index + 1}: {step.spec_label}")

    def _on_samples(self, _index: int, offset: float, samples: list) -> None:
        self.live.add(offset, samples)

    def _on_run_message(self, _step: Any, message: Any) -> None:
        level = getattr(message, "level", "info")
        text = getattr(message, "text", str(message))
        who = getattr(message, "manager", "")
        self.add_message(f"{who}: {text}" if who else text, level)
        if level == "error":
            self.messages_dock.show()

    def _on_step_finished(self, outcome: Any) -> None:
        step = outcome.step
        self.add_message(f"Step {step.index + 1} ({step.spec_label}): {outcome.status}")

    def stop_run(self) -> None:
        self.controller.stop_step()

    def stop_all(self) -> None:
        if self.controller.state == RUNNING:
            self.controller.stop()
        else:  # pressed again while stopping: end at once
            self.controller.abort()

    def _on_run_state(self, state: str) -> None:
        self._update_actions()
        if state == IDLE_STATE:
            self.clock.stop()
        else:
            self.clock.start()
        self._update_status()

    def _on_run_finished(self, status: str) -> None:
        self.results_tab.redraw(force=True)
        self.add_message(f"Run {status}")
        rec = self.controller.recorder
        if rec is not None and rec.run_id is not None:
            self.add_message(f"Stored as run {rec.run_id} in {self.controller.stored_in} "
                             f"(fiometer show {rec.run_id})")
        self.statusBar().showMessage(f"Run {status}", 10000)
        if self._close_after_run:
            self.close()

    def _update_status(self) -> None:
        c = self.controller
        p = c.progress
        if c.state == IDLE_STATE:
            self.status_state.setText(f"Last run: {c.last_status}" if c.last_status else "Ready")
            self.status_step.setText(f"{p.steps} step(s)" if p.steps else "")
            self.status_time.setText("")
            return
        self.status_state.setText("Running" if c.state == RUNNING else "Stopping…")
        self.status_step.setText(f"Step {max(p.step, 1)}/{p.steps}")
        rem = p.remaining()
        self.status_time.setText(f"Elapsed {format_duration(p.elapsed())}  ·  Remaining "
                                 + (format_duration(rem) if rem is not None else "until stopped"))

    # --- theme, layout, closing ----------------------------------------------------------------
    def set_theme(self, mode: str) -> None:
        self.theme_mode = mode
        for m, a in self.theme_actions.items():
            a.setChecked(m == mode)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            theme.apply_theme(app, mode)
        self.results_tab.apply_palette()
        if self.persist:
            self.settings.setValue("view/theme", mode)

    def follow_system_scheme(self) -> None:
        if self.theme_mode == theme.SYSTEM:
            self.set_theme(theme.SYSTEM)

    def _restore_layout(self) -> None:
        if self.settings is None:
            return
        geo = self.settings.value("window/geometry")
        if geo is not None:
            self.restoreGeometry(geo)
        state = self.settings.value("window/state")
        if state is not None:
            self.restoreState(state)
        split = self.settings.value("window/splitter")
        if split is not None:
            self.splitter.restoreState(split)
        results = self.settings.value("window/results_splitter")
        if results is not None:
            self.results_tab.splitter.restoreState(results)

    def _save_layout(self) -> None:
        if not self.persist:
            return
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("window/splitter", self.splitter.saveState())
        self.settings.setValue("window/results_splitter", self.results_tab.splitter.saveState())
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if self.controller.running:
            if self._close_after_run:
                event.ignore()
                return
            if not self.ask("A test is running", "Stop the test and close Fiometer?"):
                event.ignore()
                return
            self._close_after_run = True
            self.controller.stop()
            QTimer.singleShot(STOP_GRACE_MS, self.controller.abort)
            self.statusBar().showMessage("Stopping the test; Fiometer closes when fio has ended…")
            event.ignore()
            return
        if not self._maybe_discard():
            event.ignore()
            return
        self._save_layout()
        event.accept()

    def about(self) -> None:
        from app.about import about_text

        QMessageBox.about(self, f"About Fiometer {__version__}", about_text())


def screen_fits(win: MainWindow) -> None:
    """Keep a restored geometry on a visible screen (monitors change between sessions)."""
    screen = QGuiApplication.screenAt(win.geometry().center())
    if screen is None:
        win.move(0, 0)


def tab_widgets(win: MainWindow) -> list[QWidget]:
    return [win.tabs.widget(i) for i in range(win.tabs.count())]
