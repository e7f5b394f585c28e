"""Help > User guide: the bundled guide (Markdown) in a window of its own; its contents links go to their
sections, links out of it open in the desktop's browser."""

from __future__ import annotations

import re

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QTextCursor
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from app.paths import user_guide


def slug(heading: str) -> str:
    """GitHub's anchor for a heading ("6. Command-line reference" -> "6-command-line-reference")."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


class GuideWindow(QDialog):
    def __init__(self, text: str, base: QUrl, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Fiometer user guide")
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)  # sections here, the rest in the desktop's browser (go_to)
        self.browser.anchorClicked.connect(self.go_to)
        self.browser.document().setBaseUrl(base)  # its pictures, relative to the guide
        self.browser.setMarkdown(text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        lay = QVBoxLayout(self)
        lay.addWidget(self.browser, 1)
        lay.addWidget(buttons)
        self.resize(860, 640)

    def go_to(self, url: QUrl) -> None:
        fragment = url.fragment()
        if fragment and (not url.path() or url.path().endswith("user-guide.md")):
            self.show_section(fragment)
        elif url.scheme() in ("http", "https", "mailto"):
            QDesktopServices.openUrl(url)

    def show_section(self, anchor: str) -> bool:
        """Scroll to the heading whose GitHub anchor is ``anchor`` (Qt's Markdown gives headings none)."""
        block = self.browser.document().begin()
        while block.isValid():
            if block.blockFormat().headingLevel() and slug(block.text()) == anchor:
                cursor = QTextCursor(block)
                self.browser.setTextCursor(cursor)
                bar = self.browser.verticalScrollBar()
                bar.setValue(
                    min(
                        bar.maximum(),
                        int(self.browser.document().documentLayout().blockBoundingRect(block).top()),
                    )
                )
                return True
            block = block.next()
        return False


def show_user_guide(parent: QWidget) -> GuideWindow | None:
    """Open the guide (not modal: it stays beside the window); a missing guide is said, not raised."""
    path = user_guide()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        parent.show_problem(  # type: ignore[attr-defined]
            "Cannot open the user guide",
            f"{path}: {e.strerror or e}. This build lacks its bundled guide; it is docs/user-guide.md "
            "in Fiometer's source.",
        )
        return None
    win = GuideWindow(text, QUrl.fromLocalFile(str(path)), parent)
    win.show()
    return win
