"""Fiometer's own small settings file (Qt-free): the path of the fio executable, fio servers' protocols.

Linux/BSD: ``$XDG_CONFIG_HOME/fiometer/settings.json`` (``~/.config`` when unset or relative);
Windows: ``%APPDATA%\\Fiometer\\settings.json``; macOS: ``~/Library/Application Support/Fiometer``.
``$FIOMETER_SETTINGS_DIR`` (also honoured by the GUI's QSettings) moves it, for tests and the
smoke check. The GUI keeps its window layout in Qt's own INI file; this file holds what the engine
and the CLI need too, so neither has to import Qt to read it.

A damaged file is never fatal: it reads as the defaults and ``load`` says why in ``problem``.
"""

from __future__ import annotations

import json
import os
import platform
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

FILENAME = "settings.json"
ENV_DIR = "FIOMETER_SETTINGS_DIR"


@dataclass
class UserSettings:
    fio_path: str | None = None  # None: search PATH and the installer's folders
    fio_protocols: dict[str, int] = field(default_factory=dict)  # "host:port" -> fio server protocol
    problem: str | None = field(default=None, compare=False)  # why the file could not be read, if so


def config_dir_for(system: str, env: Mapping[str, str], home: str) -> PurePath:
    """The folder for the settings file on ``system`` (a ``platform.system()`` value)."""
    if env.get(ENV_DIR):
        override = env[ENV_DIR]
        return PureWindowsPath(override) if system == "Windows" else PurePosixPath(override)
    if system == "Windows":
        base = env.get("APPDATA") or str(PureWindowsPath(home, "AppData", "Roaming"))
        return PureWindowsPath(base, "Fiometer")
    if system == "Darwin":
        return PurePosixPath(home, "Library", "Application Support", "Fiometer")
    xdg = env.get("XDG_CONFIG_HOME", "")
    base = xdg if xdg.startswith("/") else str(PurePosixPath(home, ".config"))  # spec: ignore relative
    return PurePosixPath(base, "fiometer")


def settings_path_for(system: str, env: Mapping[str, str], home: str) -> PurePath:
    return config_dir_for(system, env, home) / FILENAME


def settings_path() -> Path:
    """This machine's settings file (it need not exist)."""
    return Path(settings_path_for(platform.system(), os.environ, str(Path.home())))


def load(path: str | os.PathLike[str] | None = None) -> UserSettings:
    p = Path(path) if path is not None else settings_path()
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return UserSettings()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        return UserSettings(problem=f"{p}: cannot read the settings ({e}); using the defaults")
    if not isinstance(data, dict):
        return UserSettings(problem=f"{p}: not a JSON object; using the defaults")
    known = {f.name for f in fields(UserSettings)} - {"problem"}
    values = {k: v for k, v in data.items() if k in known}
    fio = values.get("fio_path")
    if fio is not None and not isinstance(fio, str):
        return UserSettings(problem=f"{p}: fio_path must be a string; ignored")
    protocols = values.get("fio_protocols")
    if not isinstance(protocols, dict):
        protocols = {}
    protocols = {str(k): v for k, v in protocols.items() if isinstance(v, int) and not isinstance(v, bool)}
    return UserSettings(fio_path=fio or None, fio_protocols=protocols)


def save(settings: UserSettings, path: str | os.PathLike[str] | None = None) -> Path:
    """Write the settings atomically (keys this version does not know are kept)."""
    p = Path(path) if path is not None else settings_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    try:
        existing = json.loads(p.read_text(encoding="utf-8"))
        if not isinstance(existing, dict):
            existing = {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        existing = {}
    values = asdict(settings)
    values.pop("problem")
    if not values["fio_protocols"] and "fio_protocols" not in existing:
        values.pop("fio_protocols")
    existing.update(values)
    from app.safe_files import write_file

    write_file(p, json.dumps(existing, indent=2, sort_keys=True) + "\n")
    return p


def set_fio_path(value: str | os.PathLike[str] | None, path: str | os.PathLike[str] | None = None) -> Path:
    """Remember a custom fio executable (None or '' forgets it: search again)."""
    current = load(path)
    current.fio_path = os.fspath(value) if value else None
    return save(current, path)


_protocols_lock = threading.Lock()  # servers probed at once (build_endpoints) each read, change and save


def remember_protocol(where: str, protocol: int, path: str | os.PathLike[str] | None = None) -> None:
    """Keep the protocol version a fio server ("host:port") speaks, so the next run needs no extra
    connection to find it out. Best effort: a settings file that cannot be written is no error."""
    try:
        with _protocols_lock:
            current = load(path)
            if current.problem is None and current.fio_protocols.get(where) != protocol:
                current.fio_protocols[where] = protocol
                save(current, path)
    except OSError:
        pass


def forget_protocol(where: str, path: str | os.PathLike[str] | None = None) -> None:
    with _protocols_lock:
        current = load(path)
        if current.problem is None and current.fio_protocols.pop(where, None) is not None:
            save(current, path)


def saved_protocol(where: str) -> int | None:
    return load().fio_protocols.get(where)


def saved_fio_path() -> str | None:
    """The custom fio path from the settings file, or None."""
    return load().fio_path
