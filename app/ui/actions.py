"""Every action, menu and toolbar entry of the main window, declared as data.

The window hands in the slots (``key -> callable``) and the things only it can make (the recent-files
and examples submenus, the Messages dock's toggle); ``build`` makes the QActions, the menus and the
toolbar from these tables; ``update_enabled`` applies each action's enabled-when conditions.
Nothing finds a menu by its text: menus and places are named by key.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from PySide6.QtGui import QAction, QIcon, QKeySequence, QUndoStack
from PySide6.QtWidgets import QMainWindow, QMenu, QStyle, QToolBar

from app.ui.run_icons import DRAWN

log = logging.getLogger(__name__)

SP = QStyle.StandardPixmap
SK = QKeySequence.StandardKey

# Conditions an action may need (all must hold); the window computes them (see ``update_enabled``).
IDLE = "idle"  # no test running
RUNNING = "running"  # a test is running or stopping
VALID = "valid"  # the plan has no errors (Start waits until they are fixed)
STOPPABLE = "stoppable"  # a test is running and not yet stopping
WORKER = "worker"  # a worker is selected in the Topology
MANAGER = "manager"  # a manager (not a worker) is selected
NOT_ALL = "not_all"  # something other than "All managers" is selected


@dataclass(frozen=True)
class ActionSpec:
    key: str
    text: str
    tip: str = ""
    shortcut: str | QKeySequence.StandardKey | None = None
    icon: QStyle.StandardPixmap | None = None
    enabled_when: tuple[str, ...] = ()


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("new", "&New", "Start a new plan (Ctrl+N)", SK.New, SP.SP_FileIcon, (IDLE,)),
    ActionSpec(
        "open",
        "&Open…",
        "Open an Iometer .icf or a Fiometer plan (Ctrl+O)",
        SK.Open,
        SP.SP_DialogOpenButton,
        (IDLE,),
    ),
    ActionSpec(
        "save", "&Save", "Save the plan as a Fiometer plan file (Ctrl+S)", SK.Save, SP.SP_DialogSaveButton
    ),
    ActionSpec("save_as", "Save &As…", "Save the plan under a new name", SK.SaveAs),
    ActionSpec("export_icf", "&Export as .icf…", "Write an Iometer .icf file"),
    ActionSpec(
        "export_results",
        "Export Iometer &results.csv…",
        "Write a stored run as an Iometer results.csv (the last run of this window, or one chosen in "
        "History)",
    ),
    ActionSpec(
        "import_results",
        "Import Iometer &results…",
        "Store the runs of an Iometer results.csv in the history, to compare old numbers",
    ),
    ActionSpec("quit", "&Quit", "Close Fiometer", SK.Quit),
    ActionSpec(
        "add_manager",
        "Add &manager…",
        "Add a host running fio --server as a manager (Ctrl+Shift+M)",
        "Ctrl+Shift+M",
        SP.SP_ComputerIcon,
        (IDLE,),
    ),
    ActionSpec(
        "set_manager_host",
        "Set manager &host…",
        "Choose where the selected manager runs: this machine or a fio server (imported managers have "
        "no host until you choose)",
        "Ctrl+Shift+H",
        enabled_when=(IDLE, MANAGER),
    ),
    ActionSpec(
        "add_worker",
        "Add &worker",
        "Add a disk worker to the selected manager (Ctrl+Shift+W)",
        "Ctrl+Shift+W",
        SP.SP_FileDialogNewFolder,
        (IDLE,),
    ),
    ActionSpec(
        "add_network_worker",
        "Add &network worker",
        "Add a TCP network worker to the selected manager; "
        "choose its partner manager on the Network Targets tab",
        enabled_when=(IDLE,),
    ),
    ActionSpec(
        "duplicate_worker",
        "&Duplicate worker",
        "Copy the selected worker with its targets and specs (Ctrl+D)",
        "Ctrl+D",
        SP.SP_FileDialogDetailedView,
        (IDLE, WORKER),
    ),
    ActionSpec(
        "add_target",
        "Add &test file…",
        "Add a test file target to the selected worker (Ctrl+Shift+T)",
        "Ctrl+Shift+T",
        enabled_when=(IDLE, WORKER),
    ),
    ActionSpec(
        "remove",
        "&Remove",
        "Remove the selected worker or manager (Ctrl+Del)",
        "Ctrl+Del",
        SP.SP_TrashIcon,
        (IDLE, NOT_ALL),
    ),
    ActionSpec("start", "&Start", "Start the test (F5)", "F5", SP.SP_MediaPlay, (IDLE, VALID)),
    ActionSpec(
        "stop",
        "S&top",
        "Stop (Esc): end the current step with fio's final numbers and go on with the "
        "next step, as Iometer's Stop does",
        "Esc",
        SP.SP_MediaStop,
        (STOPPABLE,),
    ),
    ActionSpec(
        "stop_all",
        "Stop &all",
        "Stop all (Shift+Esc): end the current step with fio's final numbers and "
        "run no further steps; press again to abort at once",
        "Shift+Esc",
        SP.SP_BrowserStop,
        (RUNNING,),
    ),
    ActionSpec("history", "&History", "Show the stored runs (Ctrl+H)", "Ctrl+H"),
    ActionSpec("user_guide", "&User guide", "The user guide bundled with Fiometer (F1)", "F1"),
    ActionSpec(
        "open_log_folder",
        "Open &log folder",
        "Show the folder of Fiometer's log file (attach the log to a bug report)",
    ),
    ActionSpec("about", "&About Fiometer", "The version, fio, and where results are stored"),
)
SPECS = {a.key: a for a in ACTIONS}

SEPARATOR = "-"
# Menus in order: (key, title, entries). An entry is an action key, SEPARATOR, or "@name" for a submenu or
# action the window provides (recent, examples, theme, messages).
MENUS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "file",
        "&File",
        (
            "new",
            "open",
            "@recent",
            "@examples",
            SEPARATOR,
            "save",
            "save_as",
            "export_icf",
            SEPARATOR,
            "import_results",
            "export_results",
            SEPARATOR,
            "quit",
        ),
    ),
    (
        "edit",
        "&Edit",
        (
            "@undo",
            "@redo",
            SEPARATOR,
            "add_manager",
            "set_manager_host",
            "add_worker",
            "add_network_worker",
            "duplicate_worker",
            "add_target",
            "remove",
        ),
    ),
    ("run", "&Run", ("start", "stop", "stop_all")),
    ("view", "&View", ("history", "@messages", "@theme")),
    ("help", "&Help", ("user_guide", "open_log_folder", SEPARATOR, "about")),
)
TOOLBAR: tuple[str, ...] = (
    "new",
    "open",
    "save",
    SEPARATOR,
    "add_manager",
    "add_worker",
    "duplicate_worker",
    "remove",
    SEPARATOR,
    "start",
    "stop",
    "stop_all",
)


def undo_actions(window: QMainWindow, stack: QUndoStack) -> tuple[QAction, QAction]:
    """Edit > Undo / Redo of the plan's edits (Ctrl+Z; Ctrl+Shift+Z or Ctrl+Y), named after the step
    ("Undo Change run time"), enabled while there is one."""
    undo = stack.createUndoAction(window, "&Undo")
    undo.setShortcuts([QKeySequence("Ctrl+Z")])
    redo = stack.createRedoAction(window, "&Redo")
    redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
    for a in (undo, redo):
        a.setIcon(QIcon.fromTheme(QIcon.ThemeIcon.EditUndo if a is undo else QIcon.ThemeIcon.EditRedo))
        window.addAction(a)  # the shortcuts work with the menu bar hidden too
    return undo, redo


def _triggered(key: str, slot: Callable[[], object]) -> None:
    log.info("action %s", key)  # what the user did, in the log before what it led to
    slot()


def make_action(window: QMainWindow, spec: ActionSpec, slot: Callable[[], object]) -> QAction:
    a = QAction(spec.text, window)
    if spec.shortcut is not None:
        a.setShortcut(QKeySequence(spec.shortcut))
    if spec.key in DRAWN:  # in colour: seen on a dark toolbar too
        a.setIcon(DRAWN[spec.key]())
    elif spec.icon is not None:
        a.setIcon(window.style().standardIcon(spec.icon))
    a.setToolTip(spec.tip or spec.text.replace("&", "").replace("…", ""))
    a.setStatusTip(spec.tip)
    a.triggered.connect(lambda _checked=False: _triggered(spec.key, slot))
    window.addAction(a)  # shortcuts work while the menu bar is hidden or the toolbar off
    return a


def build(
    window: QMainWindow, slots: Mapping[str, Callable[[], object]], provided: Mapping[str, QAction | QMenu]
) -> tuple[dict[str, QAction], dict[str, QMenu], QToolBar]:
    """The actions (by key), the menus (by key) and the toolbar, from the tables above."""
    missing = sorted(set(SPECS) - set(slots))
    if missing:
        raise ValueError(f"no slot for action(s) {', '.join(missing)}")
    actions = {spec.key: make_action(window, spec, slots[spec.key]) for spec in ACTIONS}
    menus: dict[str, QMenu] = {}
    bar = window.menuBar()
    for key, title, entries in MENUS:
        menu = bar.addMenu(title)
        menus[key] = menu
        for entry in entries:
            if entry == SEPARATOR:
                menu.addSeparator()
            elif entry.startswith("@"):
                thing = provided[entry[1:]]
                if isinstance(thing, QMenu):
                    menu.addMenu(thing)
                else:
                    menu.addAction(thing)
            else:
                menu.addAction(actions[entry])
    tb = window.addToolBar("Main")
    tb.setObjectName("mainToolbar")
    for entry in TOOLBAR:
        if entry == SEPARATOR:
            tb.addSeparator()
        else:
            tb.addAction(actions[entry])
    return actions, menus, tb


def update_enabled(actions: Mapping[str, QAction], conditions: Mapping[str, bool]) -> None:
    """Enable each action whose enabled-when conditions all hold."""
    for spec in ACTIONS:
        a = actions.get(spec.key)
        if a is not None:
            a.setEnabled(all(conditions[c] for c in spec.enabled_when))
