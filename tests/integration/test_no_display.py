"""Without a display: `fiometer` and `fiometer gui` say so in one line instead of Qt aborting the process, and
`gui --screenshot` never waits on a question (it works offscreen and drops its own changes on closing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.paths import example_plan

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="X11/Wayland only")


def fiometer(*args: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {
        k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    environ.update(FIOMETER_SETTINGS_DIR=str(tmp_path / "settings"), HOME=str(tmp_path / "home"), **env)
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=150,
    )


@pytest.mark.parametrize(
    "args", [(), ("gui",), ("gui", str(example_plan()))], ids=["bare", "gui", "gui-plan"]
)
def test_no_display_is_one_line_pointing_to_the_command_line(tmp_path, args):
    out = fiometer(*args, tmp_path=tmp_path)
    assert out.returncode == 2, out.stderr  # Qt's own abort would be -6 (rc 134 from a shell)
    assert out.stdout == ""
    (line,) = out.stderr.splitlines()
    assert line.startswith("fiometer: no display to open the window on")
    assert "fiometer run PLAN" in line and "--help" in line
    assert "platform plugin" not in out.stderr and "Reinstalling" not in out.stderr


def test_a_chosen_qt_platform_is_respected(tmp_path):
    """QT_QPA_PLATFORM set is the user's choice: no refusal (here an invalid one, so Qt's own error shows)."""
    out = fiometer("gui", tmp_path=tmp_path, QT_QPA_PLATFORM="no-such-platform")
    assert "no display to open the window on" not in out.stderr
    assert out.returncode != 0 and "no-such-platform" in out.stderr


def test_screenshot_without_a_display_works_offscreen_and_a_map_does_not_hang_it(tmp_path):
    """--map changes the plan; closing must not wait on the "Unsaved changes" box (it used to hang)."""
    shots = tmp_path / "shots"
    out = fiometer(
        "gui",
        str(example_plan()),
        "--screenshot",
        str(shots),
        "--map",
        f"C:={tmp_path / 'x.tst'}",
        tmp_path=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert len(list(shots.glob("*.png"))) == 5  # one per tab (main_window.TAB_NAMES)
    assert not (tmp_path / "x.tst").exists()  # pictures only: nothing ran, nothing was saved
