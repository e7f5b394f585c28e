"""Help > User guide: the bundled guide (Markdown) in a window of its own, searchable links included."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from app.paths import user_guide


class GuideWindow(QDialog):
    def __init__(self, text: str, base: QUrl, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Fiometer user guide")
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)  # links out of the guide open in the desktop's browser
        self.browser.document().setBaseUrl(base)  # its pictures and sections, relative to the guide
        self.browser.setMarkdown(text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        lay = QVBoxLayout(self)
        lay.addWidget(self.browser, 1)
        lay.addWidget(buttons)
        self.resize(860, 640)


def show_user_guide(parent: QWidget) -> GuideWindow | None:
    """Open the guide (not modal: it stays beside the window); a missing guide is said, not raised."""
    path = user_guide()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        parent.show_problem("Cannot open the user guide",  # type: ignore[attr-defined]
                            f"{path}: {e.strerror or e}. This build lacks its bundled guide; it is docs/user-guide.md "
                            "in Fiometer's source.")
        return None
    win = GuideWindow(text, QUrl.fromLocalFile(str(path)), parent)
    win.show()
    return win
