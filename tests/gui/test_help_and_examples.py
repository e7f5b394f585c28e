"""Issue 28 point 4: File > Examples has the bundled VMware .icf; Help > User guide opens the bundled guide."""

from __future__ import annotations

import contextlib
import io

from PySide6.QtCore import QUrl

from app.ui.help_view import GuideWindow
from app.ui.main_window import MainWindow


def test_examples_menu_opens_the_bundled_vmware_icf(window: MainWindow, dialogs, qtbot) -> None:
    items = [a for a in window.files.examples_menu.actions() if "VMware" in a.text()]
    assert len(items) == 1
    items[0].trigger()
    assert [s.name for s in window.doc.plan.specs] == [
        "Max Throughput-100%Read",
        "RealLife-60%Rand-65%Read",
        "Max Throughput-50%Read",
        "Random-8k-70%Read",
    ]
    assert (
        dialogs.problems == [] and window.doc.path is None
    )  # a plan to save elsewhere, not the bundled file
    assert window.files.recent_menu.actions() == [] or all(
        "vmware" not in a.text().lower() for a in window.files.recent_menu.actions()
    )


def test_help_user_guide_opens_the_bundled_guide(window: MainWindow, qtbot) -> None:
    help_menu = window.menus["help"]
    guide = next(a for a in help_menu.actions() if a.text() == "&User guide")
    guide.trigger()
    shown = [w for w in window.findChildren(GuideWindow) if w.isVisible()]
    assert len(shown) == 1
    text = shown[0].browser.toPlainText()
    assert "Fiometer user guide" in text and "Command-line reference" in text
    shown[0].close()


def test_the_guides_contents_links_go_to_their_sections(window: MainWindow, qtbot) -> None:
    window.user_guide()
    guide = window._guide
    qtbot.waitExposed(guide)
    bar = guide.browser.verticalScrollBar()
    assert bar.value() == 0
    guide.browser.anchorClicked.emit(QUrl("#6-command-line-reference"))
    assert bar.value() > 0
    assert guide.browser.textCursor().block().text() == "6. Command-line reference"
    guide.close()


def test_help_opens_the_log_folder_or_says_it_is_not_there_yet(
    window: MainWindow, qtbot, tmp_path, monkeypatch
) -> None:
    from PySide6.QtGui import QDesktopServices
    from PySide6.QtWidgets import QMessageBox

    from app import diagnostics
    from app.cli.system_commands import cmd_logs

    folder = tmp_path / "logs"
    monkeypatch.setenv("FIOMETER_LOG_DIR", str(folder))
    monkeypatch.setattr(diagnostics, "_handler", None)  # the folder the environment names, as a fresh program
    opened: list[QUrl] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url) or True)
    said: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda _parent, _title, text: said.append(text))
    item = next(a for a in window.menus["help"].actions() if a.text() == "Open &log folder")

    item.trigger()  # nothing logged yet: said, not created
    assert opened == [] and len(said) == 1 and str(folder) in said[0] and not folder.exists()

    folder.mkdir()
    item.trigger()
    assert len(opened) == 1 and opened[0].isLocalFile() and opened[0].toLocalFile() == str(folder)
    assert len(said) == 1
    # the same folder `fiometer doctor --logs` prints
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cmd_logs()
    assert f"Log folder: {folder}\n" in out.getvalue()


def test_save_as_of_a_bundled_example_starts_in_the_users_documents(
    window: MainWindow, qtbot, tmp_path, monkeypatch
) -> None:
    """Issue 38.7: Save As (and Export as .icf) of a bundled example do not offer Fiometer's install folder."""
    from pathlib import Path

    from PySide6.QtWidgets import QFileDialog

    from app.model import planfile
    from app.model.examples import EXAMPLES
    from app.paths import resources_dir
    from app.ui.window.files import user_documents

    asked: list[str] = []

    def save_dialog(_parent, _title, start, _filter):
        asked.append(start)
        return "", ""  # cancelled

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
    window.files.open_bundled_icf()
    window.files.save_as()
    window.files.export_icf()
    docs = user_documents()
    assert [Path(a) for a in asked] == [
        docs / "vmware-unofficial-storage-performance.fiometer.json",
        docs / "vmware-unofficial-storage-performance.icf",
    ]
    assert not any(Path(a).resolve().is_relative_to(resources_dir().resolve()) for a in asked)

    asked.clear()
    window.files.open_example(EXAMPLES[0].key)  # a bundled plan, opened from no file
    window.files.save_as()
    assert Path(asked[0]).parent == docs and asked[0].endswith(".fiometer.json")

    asked.clear()  # a plan of the user's own: beside it, as before
    mine = tmp_path / "mine.fiometer.json"
    planfile.save(window.doc.plan, mine)
    window.files.open_path(mine)
    window.files.save_as()
    window.files.export_icf()
    assert [Path(a) for a in asked] == [mine, tmp_path / "mine.icf"]
