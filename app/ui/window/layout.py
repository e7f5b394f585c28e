"""Look and size: theme, the window's geometry and splitters remembered between sessions, and keeping
the window on a screen that shows it whole."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMainWindow, QMenu

from app.ui import theme


class LayoutMixin(QMainWindow):
    theme_actions: dict[str, QAction]

    def _make_theme_menu(self) -> QMenu:
        menu = QMenu("&Theme", self)
        self.theme_actions = {}
        for mode, title in ((theme.SYSTEM, "Follow the system"), (theme.LIGHT, "Light"), (theme.DARK, "Dark")):
            a = QAction(title, self, checkable=True)
            a.setChecked(mode == self.theme_mode)
            a.triggered.connect(lambda _c=False, m=mode: self.set_theme(m))
            menu.addAction(a)
            self.theme_actions[mode] = a
        return menu

    def set_theme(self, mode: str) -> None:
        self.theme_mode = mode
        for m, a in self.theme_actions.items():
            a.setChecked(m == mode)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            theme.apply_theme(app, mode)
        self.results_tab.apply_palette()
        if self.persist:
            self.settings.setValue("view/theme", mode)

    def follow_system_scheme(self) -> None:
        if self.theme_mode == theme.SYSTEM:
            self.set_theme(theme.SYSTEM)

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

