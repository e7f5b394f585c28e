"""Finding the fio executable and asking its version.

Search order: ``$FIOMETER_FIO``, the path from the settings, ``fio`` on PATH, then on Windows the
MSI's install folders (``%ProgramFiles%\\fio\\fio.exe``, ``%ProgramFiles(x86)%\\fio\\fio.exe``),
which matter because the MSI's PATH change is invisible to processes started before the install.
OS-specific parts take the OS name (``platform.system()`` spelling) so every branch is testable here.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from enum import Enum
from pathlib import Path
from typing import Literal

ENV_VAR = "FIOMETER_FIO"
_VERSION_RE = re.compile(r"fio-(\d+\.\d+(?:\.\d+)?)")
_CREATE_NO_WINDOW = 0x08000000  # subprocess.CREATE_NO_WINDOW, which exists only on Windows builds


class _Setting(Enum):
    SAVED = "saved"


SAVED = _Setting.SAVED  # find_fio's default: the custom path saved in the user's settings (app.user_settings)


class FioNotFound(Exception):
    """fio is missing or unusable; str() says what was tried and how to install it on this OS."""


def install_hint(os_name: str | None = None) -> str:
    """How to get fio, in words for the user of ``os_name`` (``platform.system()`` spelling)."""
    os_name = os_name or platform.system()
    if os_name == "Windows":
        return (
            "Install fio for Windows: the official MSI from https://github.com/axboe/fio/releases "
            "or `winget install fio.fio`. It installs to C:\\Program Files\\fio\\fio.exe; restart "
            f"Fiometer afterwards, or set the fio path in the settings or the {ENV_VAR} variable."
        )
    if os_name == "Darwin":
        return f"Install fio with `brew install fio`, or set the fio path in the settings or {ENV_VAR}."
    return (
        "Install fio: Debian/Ubuntu `sudo apt-get install fio`, Fedora/RHEL `sudo dnf install fio`; "
        f"or set the fio path in the settings or the {ENV_VAR} variable."
    )


def platform_candidates(os_name: str, environ: Mapping[str, str]) -> list[Path]:
    """Places the platform's official installer puts fio, after PATH was searched."""
    if os_name != "Windows":
        return []
    out = []
    for var in ("ProgramFiles", "ProgramFiles(x86)"):
        base = environ.get(var)
        if base:
            out.append(Path(base) / "fio" / "fio.exe")
    return out


def _is_executable(path: Path, os_name: str) -> bool:
    if not path.is_file():
        return False
    return os_name == "Windows" or os.access(path, os.X_OK)


def find_fio(
    setting: str | os.PathLike[str] | None | Literal[_Setting.SAVED] = SAVED,
    *,
    environ: Mapping[str, str] | None = None,
    os_name: str | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> Path:
    """Return the fio executable to use, or raise FioNotFound.

    An explicitly given location ($FIOMETER_FIO, then the setting) that is not an executable
    file is an error rather than silently skipped: the user asked for that one. ``setting`` defaults
    to the path saved in the user's settings file; pass None to ignore that file.
    """
    if setting is SAVED:
        from app.user_settings import saved_fio_path

        setting = saved_fio_path()
    environ = os.environ if environ is None else environ
    os_name = os_name or platform.system()
    explicit = [(f"{ENV_VAR}", environ.get(ENV_VAR)), ("the fio path setting", setting)]
    for origin, value in explicit:
        if value:
            path = Path(value)
            if _is_executable(path, os_name):
                return path
            raise FioNotFound(
                f"{origin} points to {path}, which is not an executable file. " + install_hint(os_name)
            )
    found = which("fio")
    if found:
        return Path(found)
    tried = ["fio on PATH"]
    for path in platform_candidates(os_name, environ):
        if _is_executable(path, os_name):
            return path
        tried.append(str(path))
    raise FioNotFound(f"fio was not found (looked for {', '.join(tried)}). " + install_hint(os_name))


def no_window_flags(os_name: str) -> int:
    """creationflags for short helper runs: no console window flashing up on Windows."""
    return _CREATE_NO_WINDOW if os_name == "Windows" else 0


def parse_version(text: str) -> str | None:
    """'fio-3.33' -> '3.33' (also 'fio-3.36-12-gabc' -> '3.36'); None if it is not fio's banner."""
    m = _VERSION_RE.search(text)
    return m.group(1) if m else None


def fio_version(path: str | os.PathLike[str], *, timeout: float = 10.0) -> str:
    """The version fio reports for ``fio --version``, e.g. '3.33'. Raises FioNotFound if not fio."""
    try:
        out = subprocess.run(
            [os.fspath(path), "--version"],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            creationflags=no_window_flags(platform.system()),
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise FioNotFound(f"cannot run {path} --version ({e}). " + install_hint()) from e
    version = parse_version(out.stdout) or parse_version(out.stderr)
    if version is None:
        shown = (out.stdout or out.stderr).strip()[:80]
        raise FioNotFound(f"{path} does not look like fio: --version printed {shown!r}. " + install_hint())
    return version
