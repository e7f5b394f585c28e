"""What the screenshot scripts share: a private settings folder with the first-run banner seen, the
application in a chosen theme, waiting for Qt to paint, and the two-step plan that real runs record."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from PySide6.QtWidgets import QApplication  # noqa: E402

from app.model.plan import LOCAL, Plan, SpecLine, Target  # noqa: E402
from app.ui import screenshots, theme  # noqa: E402
from app.ui import settings as prefs  # noqa: E402
from app.ui.launch import application  # noqa: E402
from benchmarks.offscreen import use_screen  # noqa: E402
from tests.helpers import grid  # noqa: E402


def start_app(settings_dir: str | Path, mode: str = theme.LIGHT) -> QApplication:
    """The application with its settings in ``settings_dir`` (never the user's), the welcome already seen.
    Offscreen, on a 1920 x 1200 screen: the window fits itself to its screen, and offscreen's own is 800 x 800."""
    use_screen()
    prefs.use_settings_dir(settings_dir)
    prefs.app_settings().setValue("firstRun/seen", True)
    app = application()
    theme.apply_theme(app, mode)
    return app


def settle(seconds: float = 0.3) -> None:
    """Let Qt lay out and paint; a little longer than the app's own default, for whole windows."""
    screenshots.settle(seconds)


def two_spec_plan(tmp: Path, name: str) -> Plan:
    """One local manager, two workers on their own test files in ``tmp``, a 4 KiB random 70 % read step and
    a 64 KiB sequential read step at queue depth 4."""
    plan = grid(1, 2, 1, specs=("4K random 70% read", "64K sequential read"), qd=4)
    plan.specs[0].lines = [SpecLine(4096, 100, 70, 100, 0, 1, 4096, 0)]
    plan.specs[1].lines = [SpecLine(65536, 100, 100, 0, 0, 1, 65536, 0)]
    for m in plan.managers:
        m.host = LOCAL
        for i, w in enumerate(m.workers):
            w.targets = [Target(str(tmp / f"w{i + 1}.tst"))]
    plan.name = name
    return plan
