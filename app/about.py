"""Versions for Help > About, `fiometer doctor` and the smoke check. Qt-free: Qt's versions are
added only when PySide6 can be imported (it is not imported otherwise)."""

from __future__ import annotations

import importlib.util
import platform
import sys
from collections.abc import Callable

from app import __version__
from app.engine.transports.fio_binary import FioNotFound, find_fio, fio_version

FIO_NOTE = "fio is a separate program (GPLv2, by Jens Axboe and contributors); Fiometer runs it, it does not bundle it."


def _local_fio_version() -> str:
    try:
        return fio_version(find_fio())  # $FIOMETER_FIO, the saved path, PATH, the installer's folders
    except FioNotFound:
        return "not found"


def qt_available() -> bool:
    """Whether PySide6 is installed (found without importing it)."""
    try:
        return importlib.util.find_spec("PySide6") is not None
    except (ImportError, ValueError):
        return False


def qt_versions() -> dict[str, str]:
    """{'Qt': ..., 'PySide6': ..., 'pyqtgraph': ...} when PySide6 is importable, else {}."""
    if not qt_available():
        return {}
    try:
        import PySide6
        from PySide6 import QtCore
    except ImportError:
        return {}
    out = {"Qt": QtCore.qVersion(), "PySide6": PySide6.__version__}
    try:
        import pyqtgraph

        out["pyqtgraph"] = pyqtgraph.__version__
    except ImportError:
        pass
    return out


def versions(fio: Callable[[], str] = _local_fio_version) -> dict[str, str]:
    """Ordered name -> version: Fiometer, Python, fio (or 'not found'), then Qt's when importable."""
    out = {
        "Fiometer": __version__,
        "Python": platform.python_version(),
        "fio": fio(),
    }
    out.update(qt_versions())
    return out


def os_description() -> str:
    frozen = " (packaged build)" if getattr(sys, "frozen", False) else ""
    return f"{platform.system()} {platform.release()} {platform.machine()}{frozen}"


def about_text(fio: Callable[[], str] = _local_fio_version, db_path: str | None = None) -> str:
    """Plain text for Help > About: one 'Name version' per line, the OS, the results database in use
    (when given) and the fio licence note."""
    lines = [f"Fiometer {__version__}", "An Iometer-compatible storage benchmark on fio.", ""]
    lines += [f"{name}: {ver}" for name, ver in versions(fio).items() if name != "Fiometer"]
    lines += [f"OS: {os_description()}"]
    if db_path:
        lines += [f"Results database: {db_path}"]
    lines += ["", FIO_NOTE]
    return "\n".join(lines)


def version_line(fio: Callable[[], str] = _local_fio_version) -> str:
    """One line: 'Fiometer 0.1.0, Python 3.11.7, fio 3.33, Qt 6.11.3, PySide6 6.11.3, pyqtgraph 0.14.0'."""
    return ", ".join(f"{k} {v}" for k, v in versions(fio).items())
