"""A manager's row in the Topology holds its name and its muted detail lines apart, in any font.

Windows' dialog font (MS Shell Dlg, 8.25 pt) has 2 px of leading: stacked by ``height()`` its lines touched
and the next row overlapped them (seen in the installed window under Wine); they are stacked by
``lineSpacing()``."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics

from app.ui.main_window import MainWindow
from app.ui.plan.topology import DETAIL_ROLE


def _font_with_leading() -> QFont | None:
    for family in QFontDatabase.families():
        font = QFont(family, 9)
        if QFontMetrics(font).leading() > 0:
            return font
    return None


def test_manager_rows_are_as_tall_as_their_lines_at_the_fonts_line_spacing(window: MainWindow) -> None:
    font = _font_with_leading()
    if font is None:
        pytest.skip("no installed font has leading (line spacing above its height) to show the difference")
    tree = window.topology
    tree.setFont(font)
    manager = tree.topLevelItem(0).child(0)
    lines = manager.data(0, DETAIL_ROLE).split("\n")
    assert lines and lines[0]
    fm = QFontMetrics(font)
    rect = tree.visualItemRect(manager)
    assert rect.height() >= (1 + len(lines)) * fm.lineSpacing(), (rect.height(), fm.lineSpacing(), lines)
