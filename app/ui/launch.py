"""Start the desktop application (``fiometer gui``)."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QSplashScreen

from app.store import resolve_db_path
from app.ui import crash, qt_messages, theme
from app.ui import settings as prefs
from app.ui.main_window import MainWindow
from app.ui.splash import application, say

__all__ = ["application", "run_gui", "smoke_window"]


class HeadlessWindow(MainWindow):
    """For --screenshot: problems go to stderr and questions are answered 'no', never a modal box."""

    def show_problem(self, title: str, text: str) -> None:
        self.add_message(f"{title}: {text}", "error")
        print(f"fiometer: {title}: {text}", file=sys.stderr)

    def ask(self, title: str, text: str, action: str = "Yes") -> bool:
        """Every question (arming a write, a disk in use, creating folders...) is answered 'no'."""
        print(f"fiometer: {title}: {text} -> no ({action!r} not chosen)", file=sys.stderr)
        return False

    def __init__(
        self, settings: QSettings | None = None, persist: bool = True, db_path: str | Path | None = None
    ):
        super().__init__(settings, persist, db_path)
        # closing (or opening another plan) never asks: changes made here, such as --map, are dropped
        self.files.ask_unsaved = False


def smoke_window(plan: str, db_path: Path) -> MainWindow:
    """The hook `fiometer --smoke` uses: the main window, shown, with ``plan`` open and ``db_path``
    as its results database, asking no questions (settings are already redirected by the caller)."""
    prefs.apply_environment()
    application()
    win = HeadlessWindow(prefs.app_settings(), persist=False, db_path=db_path)
    if not win.files.open_path(plan, ask_discard=False):
        raise RuntimeError(f"the main window could not open {plan}")
    win.show()
    return win


def run_gui(
    plan: str | None = None,
    screenshot_dir: str | None = None,
    run_options: Any = None,
    run_timeout: float = 120.0,
    mapping: dict[str, str] | None = None,
    open_run: int | None = None,
    db: str | None = None,
    splash: QSplashScreen | None = None,
) -> int:
    """Open the main window with ``plan``; with ``screenshot_dir`` write one PNG per tab and return.
    ``splash``: shown since start-up began (app.ui.splash); it closes once the window is on screen.

    ``mapping`` places the plan's targets (Iometer names such as ``C:``) at files or devices.
    ``open_run`` opens that stored run of the results database ``db`` (None: the user's); with
    ``screenshot_dir``, the picture is of that run's view only.
    """
    prefs.apply_environment()
    app = application()
    crash.install(show_dialog=screenshot_dir is None)
    qt_messages.install()  # Qt's own warnings into the log file too
    if screenshot_dir is not None:
        # never read or write the user's settings while making screenshots
        tmp = tempfile.TemporaryDirectory(prefix="fiometer-settings-")
        prefs.use_settings_dir(tmp.name)
        # ... nor store screenshot runs in the user's results database
        prefs.app_settings().setValue("firstRun/seen", True)  # no welcome banner in pictures
        # ... nor store screenshot runs in the user's results database (a stored run is read where it is)
        shots_db = resolve_db_path(db) if open_run is not None else Path(tmp.name) / "screenshot-runs.db"
        win: MainWindow = HeadlessWindow(prefs.app_settings(), persist=False, db_path=shots_db)
        theme.apply_theme(app, theme.LIGHT)
    else:
        settings = prefs.app_settings()
        say(splash, "Opening the window\u2026")
        win = MainWindow(settings, db_path=db)
        theme.apply_theme(app, win.theme_mode)
        if plan:  # the window first: a problem with the plan is said in a box the splash must not cover
            show_window(win, splash)
            splash = None
    win.results_tab.apply_palette()
    if plan and not win.files.open_path(plan, ask_discard=False) and screenshot_dir is not None:
        win.close()
        return 2
    if mapping:
        placed = win.doc.place_targets(mapping)
        win.statusBar().showMessage(f"{placed} target(s) placed from --map", 8000)
    if open_run is not None:
        missing = _no_such_run(resolve_db_path(db), open_run)
        if missing:
            print(f"fiometer: {missing}", file=sys.stderr)
            win.close()
            return 2
        return _open_run(
            app, win, open_run, screenshot_dir, tmp if screenshot_dir is not None else None, splash
        )
    if screenshot_dir is not None:
        from app.ui.screenshots import NotWritten, capture

        win.run_control.run_options = run_options
        try:
            paths = capture(win, screenshot_dir, run_timeout if run_options is not None else None)
        except NotWritten:
            win.close()
            tmp.cleanup()
            return 2
        for p in paths:
            print(p)
        if run_options is not None:
            print(f"fiometer: run {win.controller.last_status or 'did not start'}", file=sys.stderr)
        win.close()
        tmp.cleanup()
        return 0
    show_window(win, splash)
    return app.exec()


def show_window(win: MainWindow, splash: QSplashScreen | None) -> None:
    """The window on screen; the splash closes once it is (QSplashScreen.finish waits for it)."""
    win.show()
    if splash is not None:
        splash.finish(win)


def _no_such_run(db: Path, run_id: int) -> str:
    """Why ``--open-run`` cannot show that run (no run of that id, an unreadable database), or ''."""
    from app.store import StoreError, open_store
    from app.store.queries import get_run

    try:
        with open_store(db) as store:
            get_run(store, run_id, result_levels=())
    except StoreError as e:  # RunNotFound included
        return str(e)
    return ""


def _open_run(
    app: QApplication,
    win: MainWindow,
    run_id: int,
    screenshot_dir: str | None,
    tmp: tempfile.TemporaryDirectory | None,
    splash: QSplashScreen | None = None,
) -> int:
    """Show the stored run's view; for a screenshot, wait until it is drawn, write DIR/run-ID.png, exit."""
    view = win.history.open_run(run_id)
    if screenshot_dir is None:
        show_window(win, splash)
        return app.exec()
    from app.ui.screenshots import SIZE, NotWritten, out_dir_of, save_png, settle

    win.show()
    win.resize(*SIZE)  # after the first show's fit to the screen: pictures have one size
    deadline = time.monotonic() + 120
    while view.data is None and time.monotonic() < deadline and win.history.workspace.indexOf(view) >= 0:
        settle(0.05)
    settle(0.2)
    if view.data is None:
        print(f"fiometer: run {run_id} could not be shown", file=sys.stderr)
        win.close()
        return 2
    try:
        path = out_dir_of(screenshot_dir) / f"run-{run_id}.png"
    except NotWritten:
        win.close()
        return 2
    if not save_png(win.grab(), path):
        win.close()
        return 2
    print(path)
    win.close()
    if tmp is not None:
        tmp.cleanup()
    return 0
