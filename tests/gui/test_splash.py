"""Issue 38.7: `fiometer gui` shows a splash at once (a black or absent window for 14-22 s was seen under
load), before the window's modules are read, and it closes once the window is on screen."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QColor

from app.cli.early import wants_window
from app.ui.splash import SPLASH_SIZE, starting

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
from app.cli import main  # the `fiometer` entry point: the command modules are read later
from app.cli.early import early_splash
from app.ui.splash import taken
shown = early_splash(["gui"])
splash = taken()
assert shown and splash is not None and taken() is None
heavy = sorted(m for m in ("app.ui.main_window", "pyqtgraph", "app.engine.run.runner", "app.store",
                           "app.cli.entry", "app.cli.report_commands")
               if m in sys.modules)
print(splash.isVisible(), heavy)
"""


def test_the_splash_is_on_screen_before_the_windows_modules_are_read(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "FIOMETER_SETTINGS_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "True []"


@pytest.mark.parametrize(
    ("args", "window"),
    [
        ([], True),
        (["gui"], True),
        (["gui", "plan.icf"], True),
        (["--db", "r.db", "gui", "p.icf"], True),
        (["--db", "r.db"], True),
        (["gui", "p.icf", "--screenshot", "out"], False),
        (["gui", "--screenshot=out"], False),
        (["gui", "--help"], False),
        (["--version"], False),
        (["--smoke"], False),
        (["run", "p.icf"], False),
        (["--db", "gui", "run", "p.icf"], False),  # a database named gui
        (["report", "1", "--html", "gui"], False),
    ],
)
def test_the_splash_comes_early_only_for_commands_that_open_the_window(args: list[str], window: bool) -> None:
    assert wants_window(args) is window


def test_gui_starts_with_the_splash_and_closes_it_once_the_window_shows(qtbot, tmp_path: Path) -> None:
    from app.cli.system_commands import cmd_gui  # noqa: F401  (starts the splash first: see there)
    from app.ui.launch import show_window
    from app.ui.main_window import MainWindow
    from app.ui.settings import app_settings

    splash = starting()
    assert splash.isVisible() and "Starting Fiometer" in splash.message()
    img = splash.pixmap().toImage()
    assert (img.width(), img.height()) == tuple(round(v * img.devicePixelRatio()) for v in SPLASH_SIZE)
    assert img.pixelColor(img.width() // 2, 4) == QColor(246, 247, 249)  # drawn, not black
    splash.grab().save(str(tmp_path / "splash.png"))
    win = MainWindow(app_settings())
    win.close_question = lambda: "discard"  # type: ignore[method-assign]
    qtbot.addWidget(win)
    assert splash.isVisible()  # all the time the window is being made
    show_window(win, splash)
    qtbot.waitUntil(lambda: not splash.isVisible())
    assert win.isVisible()
