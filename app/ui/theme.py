"""Light and dark palettes; "system" follows the desktop's colour scheme (Qt 6.5+ style hints)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

SYSTEM = "system"
LIGHT = "light"
DARK = "dark"
MODES = (SYSTEM, LIGHT, DARK)


def dark_palette() -> QPalette:
    p = QPalette()
    window, base, text = QColor(45, 45, 48), QColor(30, 30, 32), QColor(230, 230, 230)
    roles = {
        QPalette.ColorRole.Window: window,
        QPalette.ColorRole.WindowText: text,
        QPalette.ColorRole.Base: base,
        QPalette.ColorRole.AlternateBase: QColor(40, 40, 43),
        QPalette.ColorRole.ToolTipBase: QColor(60, 60, 64),
        QPalette.ColorRole.ToolTipText: text,
        QPalette.ColorRole.PlaceholderText: QColor(150, 150, 150),
        QPalette.ColorRole.Text: text,
        QPalette.ColorRole.Button: window,
        QPalette.ColorRole.ButtonText: text,
        QPalette.ColorRole.BrightText: QColor(255, 80, 80),
        QPalette.ColorRole.Link: QColor(100, 170, 255),
        QPalette.ColorRole.Highlight: QColor(52, 120, 200),
        QPalette.ColorRole.HighlightedText: QColor(255, 255, 255),
        QPalette.ColorRole.Mid: QColor(70, 70, 74),
        QPalette.ColorRole.Dark: QColor(25, 25, 27),
        QPalette.ColorRole.Light: QColor(80, 80, 84),
    }
    for role, color in roles.items():
        p.setColor(role, color)
    muted = QColor(130, 130, 130)
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, muted)
    return p


def system_is_dark() -> bool:
    hints = QGuiApplication.styleHints()
    return hints.colorScheme() == Qt.ColorScheme.Dark


# Fusion draws no visible focus on push buttons: a ring in the highlight colour, for keyboard users.
FOCUS_RING = (
    "QPushButton:focus { border: 2px solid palette(highlight); border-radius: 3px; "
    "background: palette(button); padding: 3px 9px; }"
)


def apply_theme(app: QApplication, mode: str) -> bool:
    """Apply ``mode``; returns True when the result is dark."""
    if app.style().name().lower() != "fusion":
        app.setStyle("Fusion")  # the same look on every platform, and it honours custom palettes
    dark = mode == DARK or (mode == SYSTEM and system_is_dark())
    app.setPalette(dark_palette() if dark else app.style().standardPalette())
    # Set again even when present: with an application style sheet, Qt passes a new palette on to the
    # widgets only when they are polished again (a switch at run time left them in the old colours).
    app.setStyleSheet(app.styleSheet() if FOCUS_RING in app.styleSheet() else app.styleSheet() + FOCUS_RING)
    return dark
