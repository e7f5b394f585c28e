"""Look and size: theme, the window's geometry and splitters remembered between sessions, and keeping
the window on a screen that shows it whole."""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication
from PySide6.QtWidgets import QApplication, QMainWindow, QMenu, QSplitter, QToolBar

from app.ui import theme
from app.ui.charts.chart_grid import ChartGrid
from app.ui.run.results_tab import ResultsTab

FRAME_GUESS = 40  # title bar height before the window manager has framed the window
THEME_DELAY_MS = 30  # the menu closes and what it covered is painted before the theme changes
SMALLEST = (760, 480)  # the window's own minimum: below its parts' wishes, so it never grows by itself


class WindowLook:
    """The window's theme (View > Theme), its size on the screen and the layout it remembers."""

    def __init__(
        self,
        window: QMainWindow,
        settings: QSettings | None,
        persist: bool,
        splitter: QSplitter,
        results_tab: ResultsTab,
    ):
        """``persist``: remember the theme and the layout in ``settings`` (never without settings)."""
        self.window = window
        self.settings = settings
        self.persist = persist and settings is not None
        self.splitter = splitter
        self.results_tab = results_tab
        self.theme_mode = str(settings.value("view/theme", theme.SYSTEM)) if settings else theme.SYSTEM
        self.theme_actions: dict[str, QAction] = {}
        self.toolbar: QToolBar | None = None  # set once the actions are built
        self._toolbar_text_width: int | None = None

    def make_theme_menu(self) -> QMenu:
        menu = QMenu("&Theme", self.window)
        self.theme_actions = {}
        group = QActionGroup(self.window)  # one choice at a time: radio items
        group.setExclusive(True)
        for mode, title in (
            (theme.SYSTEM, "Follow the system"),
            (theme.LIGHT, "Light"),
            (theme.DARK, "Dark"),
        ):
            a = QAction(title, self.window, checkable=True)
            a.setChecked(mode == self.theme_mode)
            group.addAction(a)
            # after the menu has closed and the window under it is painted again: re-styling every widget
            # takes a moment, which the menu would otherwise stay painted through
            a.triggered.connect(
                lambda _c=False, m=mode: QTimer.singleShot(THEME_DELAY_MS, lambda: self.set_theme(m))
            )
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
            for charts in self.window.findChildren(ChartGrid):
                charts.apply_palette(app.palette())
        self.results_tab.apply_palette()
        if self.persist and self.settings is not None:
            self.settings.setValue("view/theme", mode)

    def fit_toolbar(self) -> None:
        """Text beside the icons where the window is wide enough for all of them; icons only (with their
        tooltips) where it is not, so Start and Stop never go behind the toolbar's » overflow."""
        bar = self.toolbar
        if bar is None:
            return
        if self._toolbar_text_width is None:
            bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            self._toolbar_text_width = bar.sizeHint().width()
        style = (
            Qt.ToolButtonStyle.ToolButtonTextBesideIcon
            if self.window.width() >= self._toolbar_text_width
            else Qt.ToolButtonStyle.ToolButtonIconOnly
        )
        if bar.toolButtonStyle() != style:
            bar.setToolButtonStyle(style)

    def follow_system_scheme(self, _scheme: object = None) -> None:
        """The desktop's colour scheme changed (QStyleHints.colorSchemeChanged): follow it when asked to."""
        if self.theme_mode == theme.SYSTEM:
            self.set_theme(theme.SYSTEM)

    def fit_to_screen(self) -> None:
        """The whole window, frame, status bar and Messages included, on the screen it opens on: no larger
        than the available area (taskbars excluded) and no part of it off-screen."""
        win = self.window
        screen = win.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return
        avail = screen.availableGeometry()
        frame = win.frameGeometry()
        extra_w = max(frame.width() - win.width(), 0)
        extra_h = max(frame.height() - win.height(), 0) or FRAME_GUESS
        w = min(win.width(), avail.width() - extra_w)
        h = min(win.height(), avail.height() - extra_h)
        if (w, h) != (win.width(), win.height()):
            win.resize(w, h)
        x = min(max(frame.x(), avail.x()), avail.right() + 1 - (w + extra_w))
        y = min(max(frame.y(), avail.y()), avail.bottom() + 1 - (h + extra_h))
        if (x, y) != (frame.x(), frame.y()):
            win.move(x, y)

    def restore_layout(self) -> None:
        if self.settings is None:
            return
        geo = self.settings.value("window/geometry")
        if geo is not None:
            self.window.restoreGeometry(geo)
        state = self.settings.value("window/state")
        if state is not None:
            self.window.restoreState(state)
        split = self.settings.value("window/splitter")
        if split is not None:
            self.splitter.restoreState(split)
        results = self.settings.value("window/results_splitter")
        if results is not None:
            self.results_tab.splitter.restoreState(results)

    def save_layout(self) -> None:
        if not self.persist or self.settings is None:
            return
        self.settings.setValue("window/geometry", self.window.saveGeometry())
        self.settings.setValue("window/state", self.window.saveState())
        self.settings.setValue("window/splitter", self.splitter.saveState())
        self.settings.setValue("window/results_splitter", self.results_tab.splitter.saveState())
        self.settings.sync()
