"""Qt's own messages reach Fiometer's log (issue 41.5): the window's process routes them to the ``app.ui.qt``
logger at Qt's level, and they still reach stderr as before. In a process of its own: the handler is
process-wide, and pytest-qt's capture of the suite's Qt messages must stay as it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import logging, sys
log = logging.getLogger("app")
handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
log.addHandler(handler); log.setLevel(logging.DEBUG)
from PySide6.QtCore import qInfo, qWarning, qCritical
from app.ui import qt_messages
qt_messages.install()
qt_messages.install()  # once per process: a second call adds nothing
qWarning("a warning from Qt")
qInfo("some news from Qt")
qCritical("a critical word from Qt")
"""


def test_qt_messages_are_logged_at_their_level_and_still_printed():
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "WARNING app.ui.qt: a warning from Qt",
        "INFO app.ui.qt: some news from Qt",
        "ERROR app.ui.qt: a critical word from Qt",
    ]
    printed = done.stderr.splitlines()
    assert [
        printed.count(t) for t in ("a warning from Qt", "some news from Qt", "a critical word from Qt")
    ] == [1, 1, 1]
