"""Issue 28 point 2: a theme switch repaints every widget, tables included, in both directions; the theme
items are radio items (one choice at a time) and the switch waits for the menu to close."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QAbstractItemView, QApplication, QStyleFactory, QTableWidget, QTreeWidget

from app.ui import theme
from app.ui.main_window import MainWindow
from tests.gui.history_support import before_after_store


def contrast(a: QColor, b: QColor) -> int:
    return abs(a.lightness() - b.lightness())


def unreadable_cells(view: QAbstractItemView) -> list[str]:
    """Cells whose text colour (their own, or the view's) is too close to their background."""
    pal = view.palette()
    out = []
    items = []
    if isinstance(view, QTableWidget):
        items = [(view.item(r, c), 0) for r in range(view.rowCount()) for c in range(view.columnCount())]
    elif isinstance(view, QTreeWidget):
        stack = [view.topLevelItem(i) for i in range(view.topLevelItemCount())]
        while stack:
            it = stack.pop()
            items.append((it, 0))
            stack += [it.child(i) for i in range(it.childCount())]
    for it, col in items:
        if it is None or not it.text(col) if isinstance(view, QTreeWidget) else it is None or not it.text():
            continue
        fg = (
            it.data(col, Qt.ItemDataRole.ForegroundRole)
            if isinstance(view, QTreeWidget)
            else it.data(Qt.ItemDataRole.ForegroundRole)
        )
        bg = (
            it.data(col, Qt.ItemDataRole.BackgroundRole)
            if isinstance(view, QTreeWidget)
            else it.data(Qt.ItemDataRole.BackgroundRole)
        )
        fg = (
            QColor(fg.color() if hasattr(fg, "color") else fg)
            if fg is not None
            else pal.color(QPalette.ColorRole.Text)
        )
        bg = (
            QColor(bg.color() if hasattr(bg, "color") else bg)
            if bg is not None
            else pal.color(QPalette.ColorRole.Base)
        )
        if contrast(fg, bg) < 90:
            text = it.text(col) if isinstance(view, QTreeWidget) else it.text()
            out.append(f"{type(view).__name__} {text!r}: {fg.name()} on {bg.name()}")
    return out


def switch(window: MainWindow, qtbot, mode: str) -> None:
    action = window.theme_actions[mode]
    action.trigger()  # as from the menu: applied once the menu has closed
    qtbot.waitUntil(lambda: window.theme_mode == mode, timeout=5000)
    qtbot.wait(20)
    assert action.isChecked() and [a.isChecked() for a in window.theme_actions.values()].count(True) == 1


@pytest.mark.parametrize(
    "order", [(theme.LIGHT, theme.DARK), (theme.DARK, theme.LIGHT)], ids=["light-to-dark", "dark-to-light"]
)
def test_every_table_follows_a_theme_switch(window: MainWindow, qtbot, order: tuple[str, str]) -> None:
    ids = before_after_store(Path(os.environ["FIOMETER_DB"]))
    ui = window.history
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.show_history()
    run = ui.open_run(ids[0])
    qtbot.waitUntil(lambda: run.data is not None, timeout=10000)
    window.show_tab(window.results_tab)
    first, second = order
    switch(window, qtbot, first)
    switch(window, qtbot, second)
    app = QApplication.instance()
    want = app.palette()
    views = window.findChildren(QAbstractItemView)
    assert window.results_tab.table in views and run.table in views
    problems = [p for v in views for p in unreadable_cells(v)]
    assert problems == []
    # every widget took the new palette (none kept the old theme's text or window colour)
    stale = [
        type(w).__name__
        for w in window.findChildren(QAbstractItemView) + [window.results_tab, run]
        for role in (QPalette.ColorRole.Text, QPalette.ColorRole.Base, QPalette.ColorRole.Window)
        if w.palette().color(role) != want.color(w.palette().currentColorGroup(), role)
    ]
    assert stale == []
    assert window.results_tab.table.item(0, 0).data(Qt.ItemDataRole.ForegroundRole) is None


def test_theme_items_are_radio_items(window: MainWindow) -> None:
    actions = list(window.theme_actions.values())
    group = actions[0].actionGroup()
    assert group is not None and group.isExclusive() and all(a.actionGroup() is group for a in actions)


def luminance(c: QColor) -> float:
    """WCAG's relative luminance."""

    def lin(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF())


def icon_contrast(icon, background: QColor) -> float:
    """The contrast ratio of an icon's drawn pixels (their mean colour) against the toolbar's background."""
    img = icon.pixmap(24, 24).toImage()
    px = [img.pixelColor(x, y) for x in range(img.width()) for y in range(img.height())]
    drawn = [c for c in px if c.alpha() > 200]
    assert len(drawn) > 40, "the icon draws next to nothing"
    mean = QColor(
        round(sum(c.red() for c in drawn) / len(drawn)),
        round(sum(c.green() for c in drawn) / len(drawn)),
        round(sum(c.blue() for c in drawn) / len(drawn)),
    )
    a, b = sorted((luminance(mean), luminance(background)), reverse=True)
    return (a + 0.05) / (b + 0.05)


@pytest.mark.parametrize("mode", [theme.LIGHT, theme.DARK])
def test_start_and_stop_read_on_the_toolbar_in_either_theme(window: MainWindow, mode) -> None:
    """Issue 38.7: the style's black media icons vanished on the dark toolbar; Start and Stop keep a contrast
    of 3:1 at least (WCAG's for graphics) against it, light and dark. The icons are drawn in fixed colours,
    so each theme's toolbar colour is taken from its palette, without switching the whole application (a
    switch re-polishes every widget of the session: test_every_table_follows_a_theme_switch does that)."""
    palette = theme.dark_palette() if mode == theme.DARK else QStyleFactory.create("Fusion").standardPalette()
    bg = palette.color(QPalette.ColorRole.Window)
    for key in ("start", "stop"):
        ratio = icon_contrast(window.action_map[key].icon(), bg)
        assert ratio >= 3.0, f"{mode} {key}: contrast {ratio:.2f}"
