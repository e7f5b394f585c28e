"""File jobs: new, open (dialog, recent, drag and drop, examples), save, export, unsaved changes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QStandardPaths, QTimer
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMenu, QMessageBox, QWidget

from app.live.data import LiveResults
from app.model.examples import EXAMPLES, TESTFILE, example
from app.model.fidelity import all_notes
from app.model.opening import PlanOpenError, open_plan
from app.model.to_icf import plan_to_icf, unwritable
from app.model.validation import Problem
from app.store.db_location import default_test_file
from app.ui.confirm import unsaved_answer, unsaved_box
from app.ui.plan.plan_document import PlanDocument
from app.ui.run.run_driver import RunDriver
from app.ui.settings import add_recent_file, recent_files
from app.ui.user_desk import UserDesk
from app.ui.window.host_facts import HostFactsKeeper
from app.ui.window.running import plan_errors

PLAN_SUFFIXES = (".icf", ".conf", ".json")
OPEN_FILTER = (
    "Plans (*.icf *.conf *.json);;Iometer configuration (*.icf *.conf);;Fiometer plan (*.json);;All files (*)"
)
SAVE_FILTER = "Fiometer plan (*.fiometer.json *.json)"


VMWARE_TITLE = "VMware unofficial storage performance (Iometer .icf)"
VMWARE_TIP = (
    "The community's VMware storage benchmark as Iometer saved it: four access specifications "
    "(Max Throughput-100%Read, RealLife-60%Rand-65%Read, Max Throughput-50%Read, "
    "Random-8k-70%Read); place its target on Disk Targets"
)


def plan_errors_text(name: str, errors: list[Problem]) -> str:
    """The dialog's text for a plan opened with errors: each by the name of its spec, manager, worker or
    target and its line, and what to do."""
    shown = errors[:20]
    more = f"\n\u2026 and {len(errors) - len(shown)} more (in Messages)" if len(errors) > len(shown) else ""
    return (
        f"{name} opened with {len(errors)} error{'s' * (len(errors) != 1)}; Start is disabled until they "
        "are fixed (the access specifications with errors are marked in red on the Access Specifications "
        "tab; Edit fixes them):\n\n" + "\n".join(f"\u2022 {p}" for p in shown) + more
    )


def droppable_paths(mime: Any) -> list[Path]:
    if not mime.hasUrls():
        return []
    return [
        Path(u.toLocalFile())
        for u in mime.urls()
        if u.isLocalFile() and Path(u.toLocalFile()).suffix.lower() in PLAN_SUFFIXES
    ]


def user_documents() -> Path:
    """The user's documents folder (the home folder where there is none)."""
    docs = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return Path(docs) if docs and Path(docs).is_dir() else Path.home()


def writable_folder(folder: Path) -> bool:
    """A folder the user may save into: not Fiometer's own (its bundled examples), and writable."""
    from app.paths import resources_dir

    if folder.resolve().is_relative_to(resources_dir().resolve()):
        return False
    return folder.is_dir() and os.access(folder, os.W_OK)


def plan_file_name(name: str, suffix: str) -> str:
    """'vmware.icf' -> 'vmware.fiometer.json' (or '.icf'): the file's name without its plan suffixes."""
    for end in (".fiometer.json", ".json", ".icf", ".conf"):
        if name.lower().endswith(end):
            name = name[: -len(end)]
            break
    return (name or "plan") + suffix


class PlanFiles:
    """File menu's jobs on the plan document: new, open (dialog, recent, examples, dropped files), save,
    export as .icf, and the question about unsaved changes. It talks to the user through ``desk`` (looked up
    at the time of use: tests replace the window's ``ask`` and ``show_problem``)."""

    def __init__(
        self,
        parent: QWidget,
        desk: UserDesk,
        doc: PlanDocument,
        live: LiveResults,
        controller: RunDriver,
        hosts: HostFactsKeeper,
        messages_dock: QDockWidget,
        update_title: Callable[[], None],
    ):
        """``parent``: the dialogs' and menus' parent; ``controller``: no plan is replaced while it runs;
        ``update_title``: after a save (the window's title names the file)."""
        self.parent = parent
        self.desk = desk
        self.doc = doc
        self.live = live
        self.controller = controller
        self.hosts = hosts
        self.messages_dock = messages_dock
        self.update_title = update_title
        self.ask_unsaved = True  # off (--screenshot, benchmarks): changes are dropped without a question
        self.recent_menu = QMenu("Open &recent", parent)
        self.examples_menu = QMenu("&Examples", parent)
        self._make_examples_menu()
        self.fill_recent_menu()

    def _make_examples_menu(self) -> None:
        vmware = self.examples_menu.addAction(VMWARE_TITLE, self.open_bundled_icf)
        vmware.setToolTip(VMWARE_TIP)
        vmware.setStatusTip(VMWARE_TIP)
        self.examples_menu.addSeparator()
        for ex in EXAMPLES:

            def open_it(key: str = ex.key) -> None:
                self.open_example(key)

            a = self.examples_menu.addAction(ex.title, open_it)
            a.setToolTip(ex.description)
            a.setStatusTip(ex.description)
        self.examples_menu.setToolTipsVisible(True)

    def fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        settings = self.desk.settings
        files = recent_files(settings) if settings else []
        for f in files:

            def open_it(p: str = f) -> None:
                self.open_path(p)

            self.recent_menu.addAction(f, open_it)
        self.recent_menu.setEnabled(bool(files))

    def _remember(self, path: str | Path) -> None:
        settings = self.desk.settings
        if self.desk.persist and settings is not None:
            add_recent_file(settings, path)
            self.fill_recent_menu()

    def unsaved_question(self, also: str = "") -> QMessageBox:
        """Save / Discard / Cancel for the open plan's changes; Save is the default, Escape cancels."""
        text = f"Save the changes to {self.doc.title}?"
        return unsaved_box(self.parent, "Unsaved changes", (also + "\n\n" + text) if also else text)

    def maybe_discard(self) -> bool:
        """Whether the open plan may be replaced or closed: clean, saved, or its changes discarded (asked
        unless ``ask_unsaved`` is off, then they are dropped)."""
        if not self.doc.dirty or not self.ask_unsaved:
            return True
        answer = unsaved_answer(self.unsaved_question())
        if answer == "save":
            return self.save()
        return answer == "discard"

    def new_plan(self) -> None:
        if self.controller.running or not self.maybe_discard():
            return
        self.doc.new()
        self.live.clear()
        self.hosts.apply_local_facts()

    def open_dialog(self) -> None:
        settings = self.desk.settings
        recent = recent_files(settings) if settings else []
        start = str(Path(recent[0]).parent) if recent else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self.parent, "Open plan", start, OPEN_FILTER)
        if path:
            self.open_path(path)

    def open_path(self, path: str | Path, ask_discard: bool = True, remember: bool = True) -> bool:
        """Open a .icf or plan file; problems are shown, never raised, and leave the open plan as it was."""
        if self.controller.running:
            self.desk.show_problem("Cannot open", "Stop the running test before opening another plan.")
            return False
        try:  # read first: a file that is no plan is said at once, before asking about unsaved changes
            opened = open_plan(Path(path))
        except (PlanOpenError, OSError) as e:
            self.desk.show_problem("Cannot open the plan", str(e))
            return False
        except Exception as e:  # a reader bug: say so instead of crashing the window
            self.desk.show_problem("Cannot open the plan", f"{path}: unexpected error: {e}")
            return False
        if ask_discard and not self.maybe_discard():
            return False
        self.doc.open(path, opened)
        self.live.clear()
        self.hosts.apply_local_facts()
        if remember:
            self._remember(path)
        self.desk.statusBar().showMessage(
            f"Opened {path}: {len(opened.plan.managers)} manager(s), {len(opened.plan.specs)} access spec(s)",
            8000,
        )
        errors = plan_errors(self.doc.plan)
        if errors:  # never silent: what is wrong, where, and that Start waits for it
            self.desk.show_problem("The plan has errors", plan_errors_text(Path(path).name, errors))
        return True

    def open_bundled_icf(self) -> bool:
        """File > Examples > the bundled Iometer .icf (the README's example), as a plan not yet saved."""
        from app.paths import example_plan

        return self.open_path(example_plan(), remember=False)

    def open_example(self, key: str) -> bool:
        """A bundled example plan (File > Examples), as a new unsaved plan."""
        if self.controller.running:
            self.desk.show_problem("Cannot open", "Stop the running test before opening another plan.")
            return False
        if not self.maybe_discard():
            return False
        plan = example(key)
        self.doc.replace(plan, notes=all_notes(plan))
        where = default_test_file()
        self.doc.place_targets({TESTFILE: str(where)})  # runs as shipped: one test file for every worker
        self.doc.mark_saved()
        self.live.clear()
        self.hosts.apply_local_facts()
        self.desk.add_message(
            f"Example {plan.name!r}: {plan.setup.description}. Its test file is {where} (created "
            "when the run starts); Disk Targets > Set path… places it elsewhere."
        )
        self.desk.statusBar().showMessage(
            f"Example {plan.name!r}: its target {TESTFILE} is the test file {where}", 15000
        )
        return True

    def save(self) -> bool:
        if self.doc.path is None:
            return self.save_as()
        return self._save_to(self.doc.path)

    def save_as(self) -> bool:
        path, _ = QFileDialog.getSaveFileName(
            self.parent, "Save plan", str(self.save_as_default()), SAVE_FILTER
        )
        return self._save_to(Path(path)) if path else False

    def save_as_default(self, suffix: str = ".fiometer.json") -> Path:
        """Where Save As (and Export, with ``suffix`` .icf) start: beside the plan's own file or the file it was
        opened from, but in the user's documents where that is Fiometer's install folder (a bundled example)
        or a folder the user cannot write."""
        source = self.doc.path or self.doc.opened_from
        if self.doc.path is not None and suffix == ".fiometer.json" and writable_folder(self.doc.path.parent):
            return self.doc.path
        name = plan_file_name(source.name if source else self.doc.plan.name, suffix)
        if source is not None and writable_folder(source.parent):
            return source.parent / name
        return user_documents() / name

    def _save_to(self, path: Path) -> bool:
        try:
            self.doc.save(path)
        except OSError as e:
            self.desk.show_problem("Cannot save", f"{path}: {e}")
            return False
        self._remember(path)
        self.update_title()
        self.desk.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def export_icf(self) -> None:
        base = self.save_as_default(".icf")
        path, _ = QFileDialog.getSaveFileName(
            self.parent, "Export as Iometer configuration", str(base), "Iometer configuration (*.icf)"
        )
        if path:
            self.export_icf_to(Path(path))

    def export_icf_to(self, path: Path) -> bool:
        """Write the plan as an Iometer 1.1.0 .icf; what the file cannot keep goes to Messages."""
        import icf_import

        problems = unwritable(self.doc.plan)
        if problems:  # never a '?' or a name Iometer reads back cut short
            self.desk.show_problem(
                "Cannot export as .icf",
                "The .icf would not say what the plan says:\n\n" + "\n".join(problems),
            )
            return False
        doc, notes = plan_to_icf(self.doc.plan)
        try:
            from app.safe_files import write_file

            write_file(path, icf_import.writer.encode(doc))
        except OSError as e:
            self.desk.show_problem("Cannot export", f"{path}: {e}")
            return False
        for n in notes:
            self.desk.add_message(f"Export: {n}", "warning")
        if notes:
            self.messages_dock.show()
        self.desk.statusBar().showMessage(f"Exported {path}", 5000)
        return True

    def open_dropped(self, event: QDropEvent) -> None:
        """Files dropped on the window: the first plan among them is opened."""
        paths = droppable_paths(event.mimeData())
        if not paths:
            event.ignore()
            return
        event.acceptProposedAction()
        # open after the drop returns, so a dialog does not run inside the drag-and-drop loop
        QTimer.singleShot(0, lambda: self.open_path(paths[0]))
