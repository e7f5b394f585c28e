"""Help > About / doctor versions: Fiometer, Python, fio, and Qt only when it can be imported."""

import platform
import subprocess
import sys

from app import __version__
from app.about import about_text, qt_versions, version_line, versions
from tests.helpers import BLOCK_QT


def test_versions_in_order_with_qt():
    import PySide6
    from PySide6 import QtCore

    v = versions(fio=lambda: "3.33")
    assert list(v)[:3] == ["Fiometer", "Python", "fio"]
    assert v["Fiometer"] == __version__ and v["Python"] == platform.python_version() and v["fio"] == "3.33"
    assert v["Qt"] == QtCore.qVersion() and v["PySide6"] == PySide6.__version__


def test_about_text_lines():
    text = about_text(fio=lambda: "not found")
    lines = text.splitlines()
    assert lines[0] == f"Fiometer {__version__}"
    assert f"Python: {platform.python_version()}" in lines
    assert "fio: not found" in lines
    assert any(ln.startswith("Qt: 6.") for ln in lines)
    assert any(ln.startswith("OS: ") for ln in lines)
    assert "GPLv2" in text and "does not bundle it" in text
    assert version_line(fio=lambda: "3.42").startswith(
        f"Fiometer {__version__}, Python {platform.python_version()}, fio 3.42, Qt "
    )


def test_without_qt_there_are_no_qt_versions_and_nothing_breaks():
    code = BLOCK_QT + (
        "import app.about, app.first_run, app.user_settings, app.smoke\n"
        "from app.about import versions, qt_versions\n"
        "assert qt_versions() == {}, qt_versions()\n"
        "print(','.join(versions(fio=lambda: 'x')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Fiometer,Python,fio"


def test_qt_versions_includes_pyqtgraph():
    import pyqtgraph

    assert qt_versions()["pyqtgraph"] == pyqtgraph.__version__
