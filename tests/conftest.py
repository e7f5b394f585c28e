"""Suite-wide: no test reads or writes the developer's own Fiometer settings file, results database or log."""

import sqlite3
import sys
import traceback
import warnings

import pytest

from app import diagnostics
from app.store.db_location import ENV_OVERRIDE as ENV_DB
from app.user_settings import ENV_DIR


@pytest.fixture(autouse=True)
def _private_settings_and_database(tmp_path_factory, monkeypatch):
    monkeypatch.setenv(ENV_DIR, str(tmp_path_factory.mktemp("settings")))
    monkeypatch.setenv(ENV_DB, str(tmp_path_factory.mktemp("data") / "fiometer.db"))
    monkeypatch.setenv(diagnostics.ENV_DIR, str(tmp_path_factory.mktemp("log")))


_qt_app = None


def pytest_collection_finish(session: pytest.Session) -> None:
    """When GUI tests are in the session, their QApplication exists before any other test runs: a report
    drawn in-process (an integration test) would otherwise create a bare QGuiApplication first, and
    widgets cannot be made in that."""
    global _qt_app
    if any("gui" in item.path.parts for item in session.items):
        from PySide6.QtWidgets import QApplication

        _qt_app = QApplication.instance() or QApplication(["pytest-qt-qapp"])


def pytest_configure(config: pytest.Config) -> None:
    """Under Wine (`bash bootstrap.sh test-windows`), Qt warns once per process that Wine 8 lacks per-monitor
    DPI awareness v2, and, on a real display, once per window that it lacks EnableNonClientDpiScaling, and
    where Wine's window manager makes a dialog taller than its minimum (the geometry Qt asked for is refused
    with "Unable to set geometry"): Wine limits (docs/user-guide.md §10), not faults of the test."""
    from tests.platform_marks import under_wine

    if under_wine():
        for wine_lacks in (
            "^QtWindows::DpiAwareness::PerMonitorVersion2 is not supported",
            r"^EnableNonClientDpiScaling\(\) failed for HWND .*\(Call not implemented\.\)$",
            r"^QWindowsWindow::setGeometry: Unable to set geometry ",
        ):
            config.addinivalue_line("qt_log_ignore", wine_lacks)


class _WarnsUnclosed(sqlite3.Connection):
    """Python 3.13's sqlite3 warns "unclosed database" (a ResourceWarning, an error in this suite: every
    warning is) when a connection is collected without close(); Python 3.11's does not. This gives 3.11
    the same check, so a connection left open fails on both."""

    _closed_here = False

    def close(self) -> None:
        self._closed_here = True
        super().close()

    def __del__(self) -> None:
        if not self._closed_here:
            self._closed_here = True
            opened = "".join(traceback.format_list(getattr(self, "opened_at", [])))
            warnings.warn(f"unclosed database, opened at:\n{opened}", ResourceWarning, stacklevel=2)


if sys.version_info < (3, 13):
    _plain_connect = sqlite3.connect

    def _connect(*args, **kwargs):
        kwargs.setdefault("factory", _WarnsUnclosed)
        conn = _plain_connect(*args, **kwargs)
        conn.opened_at = traceback.extract_stack(limit=6)[:-1]
        return conn

    sqlite3.connect = _connect
