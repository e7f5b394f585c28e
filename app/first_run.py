"""First run: is fio there (where, which version), and if not, how to get it on this OS. Qt-free.

The GUI shows ``first_run_text(check_fio())`` on its first-run screen (and whenever fio is missing);
``fiometer doctor`` prints the same. ``check_fio`` takes the OS, environment, ``which`` and the
version probe as parameters so every OS's branch is testable anywhere.
"""

from __future__ import annotations

import os
import platform
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from app import user_settings
from app.engine.transports.fio_binary import ENV_VAR, FioNotFound, find_fio, fio_version, install_hint

# fio 3.40 fixed pread/pwrite offsets (psync) and poll() revents on Windows
# (docs/reference/fio.md, "fio on Windows").
WINDOWS_RECOMMENDED = (3, 40)
WINGET = "winget install fio.fio"
FIO_RELEASES = "https://github.com/axboe/fio/releases"

_UNSET = object()


@dataclass(frozen=True)
class FioStatus:
    """What the first-run screen needs to know about the local fio."""

    os_name: str  # platform.system() spelling
    found: bool
    path: str | None  # the executable Fiometer will run
    version: str | None  # e.g. "3.33"
    source: str | None  # "FIOMETER_FIO" | "settings" | "PATH" | "installer folder"
    problem: str | None  # why fio cannot be used (already includes the install hint)
    install_hint: str  # how to install fio on this OS (always filled)
    setting: str | None  # the custom fio path from the settings, if any
    settings_file: str  # where that setting lives

    @property
    def upgrade_advised(self) -> bool:
        return (
            self.os_name == "Windows"
            and self.version is not None
            and _version_tuple(self.version) < WINDOWS_RECOMMENDED
        )


def _version_tuple(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in version.split(".")[:2])
    except ValueError:
        return (0,)


def check_fio(
    os_name: str | None = None,
    *,
    setting: str | None | object = _UNSET,
    environ: Mapping[str, str] | None = None,
    which: Callable[[str], str | None] = shutil.which,
    version: Callable[[str], str] = fio_version,
    settings_file: str | os.PathLike[str] | None = None,
) -> FioStatus:
    """Find fio the way a run will (``$FIOMETER_FIO``, the setting, PATH, the installer's folders)."""
    os_name = os_name or platform.system()
    environ = os.environ if environ is None else environ
    file = Path(settings_file) if settings_file is not None else user_settings.settings_path()
    if setting is _UNSET:
        setting = user_settings.load(file).fio_path
    assert setting is None or isinstance(setting, str)
    common = dict(
        os_name=os_name, install_hint=install_hint(os_name), setting=setting, settings_file=str(file)
    )
    try:
        path = find_fio(setting, environ=environ, os_name=os_name, which=which)
        ver = version(str(path))
    except FioNotFound as e:
        return FioStatus(found=False, path=None, version=None, source=None, problem=str(e), **common)
    if environ.get(ENV_VAR):
        source = ENV_VAR
    elif setting:
        source = "settings"
    elif which("fio"):
        source = "PATH"
    else:
        source = "installer folder"
    return FioStatus(found=True, path=str(path), version=ver, source=source, problem=None, **common)


_SOURCE_WORDS = {
    ENV_VAR: f"from the {ENV_VAR} variable",
    "settings": "from your settings",
    "PATH": "on PATH",
    "installer folder": "in the fio installer's folder (not on this process's PATH yet)",
}


def first_run_text(status: FioStatus, gui: bool = False) -> str:
    """The first-run text (plain text, paragraphs separated by blank lines); ``gui``: in the window's words
    (menus instead of Fiometer command lines), for its Details…."""
    paras: list[str] = []
    if status.found:
        paras.append(
            f"fio {status.version} found {_SOURCE_WORDS.get(status.source or '', '')}: {status.path}"
        )
        if status.upgrade_advised:
            paras.append(
                f"fio {status.version} predates 3.40, which fixed two Windows bugs (psync offsets, a "
                f"hang with several connections). Consider upgrading: {WINGET}"
            )
        paras.append(_next_steps(status.os_name, gui))
    else:
        paras.append(
            "fio was not found. Fiometer runs every test with fio, a separate free program (GPLv2) "
            "that is not bundled with Fiometer."
        )
        paras.append(_install_steps(status.os_name))
        if status.problem:
            paras.append(f"Details: {status.problem}")
    how = "" if gui else " with `fiometer doctor --set-fio PATH`,"
    paras.append(
        f"To use another fio executable, set its path in the settings (stored in {status.settings_file}),"
        f"{how} or in the {ENV_VAR} environment variable."
    )
    return "\n\n".join(paras)


def first_run_line(status: FioStatus) -> str:
    """One line for the window's notice; the rest is ``first_run_text(status, gui=True)``."""
    if not status.found:
        return "fio was not found: Fiometer runs every test with fio, a free program installed separately."
    line = f"Welcome to Fiometer. fio {status.version} found: {status.path}."
    if status.upgrade_advised:
        line += f" fio {status.version} predates 3.40 (two Windows bugs fixed): consider upgrading."
    return line + " Open a plan or File > Examples, place its targets, press Start (F5)."


def _install_steps(os_name: str) -> str:
    if os_name == "Windows":
        return (
            "Install fio for Windows:\n"
            f"  - in a terminal: {WINGET}\n"
            f"  - or the official installer (fio-<version>-x64.msi) from {FIO_RELEASES}\n"
            "It installs to C:\\Program Files\\fio\\fio.exe, which Fiometer finds even before you restart. "
            "Raw-disk tests need Fiometer to run as Administrator."
        )
    if os_name == "Darwin":
        return "Install fio with Homebrew: brew install fio"
    return (
        "Install fio from your distribution:\n"
        "  - Debian/Ubuntu: sudo apt-get install fio\n"
        "  - Fedora/RHEL: sudo dnf install fio\n"
        "  - Arch: sudo pacman -S fio\n"
        "Raw-disk tests need root or membership of the 'disk' group."
    )


def _next_steps(os_name: str, gui: bool = False) -> str:
    admin = "Administrator" if os_name == "Windows" else "root"
    if gui:
        return (
            "Next: File > Open an Iometer .icf or File > Examples, choose targets in Disk Targets (a test file "
            f"is safest; raw disks need {admin}) and press Start. Other hosts join as managers (Edit > Add "
            "manager) when they run fio --server (port 8765)."
        )
    return (
        "Next: open an Iometer .icf or a bundled example (`fiometer examples --save DIR` writes them as plan "
        "files), pick a target — a test file is safest; raw disks need " + admin + " — and press Start. "
        "Other hosts join as managers when they run `fio --server` (port 8765)."
    )
