"""`fiometer gui --screenshot DIR`: show each tab and write one PNG per tab (works offscreen)."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QApplication

from app.ui.main_window import TAB_NAMES, MainWindow

SIZE = (1280, 800)


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def settle(seconds: float = 0.05) -> None:
    """Let Qt lay out and paint (and queued signals arrive) before grabbing."""
    end = time.monotonic() + seconds
    while True:
        QApplication.processEvents()
        if time.monotonic() >= end:
            return
        time.sleep(0.01)


def wait_for_run(win: MainWindow, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while win.controller.running and time.monotonic() < end:
        settle(0.05)
    if win.controller.running:
        win.controller.abort()
        end = time.monotonic() + 15
        while win.controller.running and time.monotonic() < end:
            settle(0.05)
    return not win.controller.running


class NotWritten(Exception):
    """A picture could not be written; its path and why were already printed."""


def save_png(pixmap: QPixmap, path: Path) -> bool:
    """A picture written under app.safe_files' rules (never through a link planted in the folder)."""
    from app.safe_files import staged

    try:
        with staged(path) as tmp:
            if not pixmap.save(str(tmp), "PNG"):
                raise OSError(f"cannot write {path}")
    except OSError as e:
        print(f"fiometer: {e}", file=sys.stderr)
        print(f"fiometer: remove {path} or choose another folder for --screenshot", file=sys.stderr)
        return False
    return True


def out_dir_of(out_dir: str | Path) -> Path:
    """The screenshot folder, made if missing; NotWritten (said why) where it cannot be."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        print(f"fiometer: cannot make the screenshot folder {out}: {e.strerror or e}", file=sys.stderr)
        raise NotWritten(str(out)) from e
    return out


def capture(win: MainWindow, out_dir: str | Path, run_timeout: float | None = None) -> list[Path]:
    """Grab every tab; with ``run_timeout`` run the plan first (win.run_control.run_options) for real numbers.
    NotWritten at the first picture that cannot be written (the ones before it stay)."""
    out = out_dir_of(out_dir)
    win.show()
    win.resize(*SIZE)  # after the first show, which fits the window to the screen: pictures have one size
    settle(0.2)
    if run_timeout is not None and win.run_control.start_run():
        wait_for_run(win, run_timeout)
        settle(0.3)
    written = []
    for i, name in enumerate(TAB_NAMES):
        win.tabs.setCurrentIndex(i)
        if win.tabs.currentWidget() is win.results_tab:
            win.results_tab.redraw(force=True)
        settle(0.15)
        path = out / f"{i + 1:02d}-{slug(name)}.png"
        if not save_png(win.grab(), path):
            raise NotWritten(str(path))
        written.append(path)
    return written
