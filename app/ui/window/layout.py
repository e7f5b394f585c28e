"""Look and size: theme, the window's geometry and splitters remembered between sessions, and keeping
the window on a screen that shows it whole."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication, QResizeEvent
from PySide6.QtWidgets import QApplication, QMainWindow, QMenu

from app.ui import theme
from app.ui.run.charts import ChartGrid

FRAME_GUESS = 40  # title bar height before the window manager has framed the window
THEME_DELAY_MS = 30  # the menu closes and what it covered is painted before the theme changes
SMALLEST = (760, 480)  # the window's own minimum: below its parts' wishes, so it never grows by itself


class LayoutMixin(QMainWindow):
    theme_actions: dict[str, QAction]

    def _make_theme_menu(self) -> QMenu:
        menu = QMenu("&Theme", self)
        self.theme_actions = {}
        group = QActionGroup(self)  # one choice at a time: radio items
        group.setExclusive(True)
        for mode, title in ((theme.SYSTEM, "Follow the system"), (theme.LIGHT, "Light"), (theme.DARK, "Dark")):
            a = QAction(title, self, checkable=True)
            a.setChecked(mode == self.theme_mode)
            group.addAction(a)
            # after the menu has closed and the window under it is painted again: re-styling every widget
            # takes a moment, which the menu would otherwise stay painted through
            a.triggered.connect(lambda _c=False, m=mode: QTimer.singleShot(THEME_DELAY_MS, lambda: self.set_theme(m)))
            menu.addAction(a)
            self.theme_actions[mode] = a
        return menu

    def set_theme(self, mode: str) -> None:
        self.theme_mode = mode
        for m, a in self.theme_actions.items():
            a.setChecked(m == mode)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
            try:
                theme.apply_theme(app, mode)
            finally:
                QApplication.restoreOverrideCursor()
            # every chart, shown or not: live, stored runs, comparisons (with the application's style sheet,
            # Qt does not tell widgets that the palette changed)
            for charts in self.findChildren(ChartGrid):
                charts.apply_palette(app.palette())
        self.results_tab.apply_palette()
        if self.persist:
            self.settings.setValue("view/theme", mode)

    def fit_toolbar(self) -> None:
        """Text beside the icons where the window is wide enough for all of them; icons only (with their
        tooltips) where it is not, so Start and Stop never go behind the toolbar's » overflow."""
        bar = getattr(self, "toolbar", None)
        if bar is None:
            return
        if not hasattr(self, "_toolbar_text_width"):
            bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            self._toolbar_text_width = bar.sizeHint().width()
        style = (Qt.ToolButtonStyle.ToolButtonTextBesideIcon if self.width() >= self._toolbar_text_width
                 else Qt.ToolButtonStyle.ToolButtonIconOnly)
        if bar.toolButtonStyle() != style:
            bar.setToolButtonStyle(style)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self.fit_toolbar()

    def follow_system_scheme(self, _scheme: object = None) -> None:
        """The desktop's colour scheme changed (QStyleHints.colorSchemeChanged): follow it when asked to."""
        if self.theme_mode == theme.SYSTEM:
            self.set_theme(theme.SYSTEM)

    def fit_to_screen(self) -> None:
        """The whole window, frame, status bar and Messages included, on the screen it opens on: no larger
        than the available area (taskbars excluded) and no part of it off-screen."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return
        avail = screen.availableGeometry()
        frame = self.frameGeometry()
        extra_w = max(frame.width() - self.width(), 0)
        extra_h = max(frame.height() - self.height(), 0) or FRAME_GUESS
        w = min(self.width(), avail.width() - extra_w)
        h = min(self.height(), avail.height() - extra_h)
        if (w, h) != (self.width(), self.height()):
            self.resize(w, h)
        x = min(max(frame.x(), avail.x()), avail.right() + 1 - (w + extra_w))
        y = min(max(frame.y(), avail.y()), avail.bottom() + 1 - (h + extra_h))
        if (x, y) != (frame.x(), frame.y()):
            self.move(x, y)

    def _restore_layout(self) -> None:
        if self.settings is None:
            return
        geo = self.settings.value("window/geometry")
        if geo is not None:
            self.restoreGeometry(geo)
        state = self.settings.value("window/state")
        if state is not None:
            self.restoreState(state)
        split = self.settings.value("window/splitter")
        if split is not None:
            self.splitter.restoreState(split)
        results = self.settings.value("window/results_splitter")
        if results is not None:
            self.results_tab.splitter.restoreState(results)

    def _save_layout(self) -> None:
        if not self.persist:
            return
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("window/splitter", self.splitter.saveState())
        self.settings.setValue("window/results_splitter", self.results_tab.splitter.saveState())
        self.settings.sync()

