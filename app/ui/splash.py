"""The first thing `fiometer gui` shows: the application's icon and "Starting Fiometer…", on screen before
the main window's modules are imported and built (seconds on an idle machine, 14-22 s measured under load,
when the window was black or absent all that time: issue 38.7). Imports nothing of Fiometer's window."""

from __future__ import annotations

import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QSplashScreen

from app.paths import icons_dir
from app.ui import settings as prefs

SPLASH_SIZE = (420, 220)
_kept: list[QSplashScreen] = []  # the splash shown before the command was read (app.cli.early)


def application() -> QApplication:
    """The QApplication, created once, with Fiometer's names and icon."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(sys.argv[:1])
    app.setApplicationName(prefs.APPLICATION)
    app.setOrganizationName(prefs.ORGANIZATION)
    app.setApplicationDisplayName("Fiometer")
    icons = icons_dir()
    icon = QIcon()
    for size in (16, 32, 48, 64, 128, 256):
        if (icons / f"fiometer-{size}.png").is_file():
            icon.addFile(str(icons / f"fiometer-{size}.png"))
    if not icon.isNull():
        app.setWindowIcon(icon)
    return app


def splash_pixmap(dpr: float = 1.0) -> QPixmap:
    """The icon and the name on a plain light card (the same in either theme: the theme is not read yet)."""
    w, h = SPLASH_SIZE
    pm = QPixmap(round(w * dpr), round(h * dpr))
    pm.setDevicePixelRatio(dpr)
    pm.fill(QColor(246, 247, 249))
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(QColor(190, 196, 204))
    p.drawRect(0, 0, w - 1, h - 1)
    icon = icons_dir() / "fiometer-128.png"
    if icon.is_file():
        p.drawPixmap(28, (h - 112) // 2 - 12, 112, 112, QPixmap(str(icon)))
    title = QFont(p.font())
    title.setPointSizeF(title.pointSizeF() * 2.2)
    title.setBold(True)
    p.setFont(title)
    p.setPen(QColor(30, 34, 40))
    p.drawText(
        160, 70, w - 176, 50, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), "Fiometer"
    )
    p.end()
    return pm


def starting(app: QApplication | None = None) -> QSplashScreen:
    """Show the splash at once (the events it needs to be drawn are processed here)."""
    app = app or application()
    screen = app.primaryScreen()
    splash = QSplashScreen(splash_pixmap(screen.devicePixelRatio() if screen else 1.0))
    splash.setObjectName("fiometerSplash")
    say(splash, "Starting Fiometer\u2026")
    splash.show()
    app.processEvents()
    return splash


def say(splash: QSplashScreen | None, text: str) -> None:
    """What start-up is doing now, under the name (drawn at once)."""
    if splash is None:
        return
    splash.showMessage(
        text, int(Qt.AlignmentFlag.AlignBottom | Qt.AlignmentFlag.AlignHCenter), QColor(70, 76, 86)
    )
    app = QApplication.instance()
    if app is not None:
        app.processEvents()


def keep(splash: QSplashScreen) -> None:
    """Hold the splash shown before the command was read, for the window's start to take (``taken``)."""
    _kept[:] = [splash]


def taken() -> QSplashScreen | None:
    """The splash kept by ``keep``, once (None when there is none)."""
    return _kept.pop() if _kept else None
