"""Where the GUI remembers things (window layout, last files, theme, the user's spec library).

Always an INI file in the user's config folder, so tests and the screenshot command can point
Qt at a temporary folder (``use_settings_dir`` or ``$FIOMETER_SETTINGS_DIR``) and never touch
the user's own settings.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings

ORGANIZATION = "Fiometer"
APPLICATION = "Fiometer"
ENV_DIR = "FIOMETER_SETTINGS_DIR"
MAX_RECENT = 8


def use_settings_dir(path: str | os.PathLike[str]) -> None:
    """Keep every QSettings of this process under ``path`` (tests, screenshots)."""
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(path))


def apply_environment() -> None:
    folder = os.environ.get(ENV_DIR)
    if folder:
        use_settings_dir(folder)


def app_settings() -> QSettings:
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)


def recent_files(settings: QSettings) -> list[str]:
    value = settings.value("files/recent", [])
    if isinstance(value, str):  # QSettings gives a bare string for a one-item list in INI files
        value = [value]
    return [str(v) for v in (value or []) if v]


def add_recent_file(settings: QSettings, path: str | os.PathLike[str]) -> list[str]:
    p = str(Path(path).resolve())
    files = [p, *[f for f in recent_files(settings) if f != p]][:MAX_RECENT]
    settings.setValue("files/recent", files)
    return files
