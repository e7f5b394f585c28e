"""Windows acceptance tests: the real Windows fio (fio.exe, cross-built by packaging/wine/setup.sh).

They run under `bash bootstrap.sh test-windows`: the Windows side under Windows Python in Wine, the
Linux side (Linux Fiometer driving a Windows `fio --server`) with the Linux virtualenv, told where the
Wine prefix is by FIOMETER_WINEPREFIX. Without that set-up (a default Linux run) they skip and say so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.platform_marks import ON_WINDOWS

ENV_PREFIX = "FIOMETER_WINEPREFIX"  # Linux side: the Wine prefix holding C:\Program Files\fio\fio.exe
ENV_LINUX_SERVER = "FIOMETER_TEST_LINUX_FIO_SERVER"  # Windows side: host:port of a Linux fio --server
ROOT = Path(__file__).resolve().parents[2]
SETUP = "run `bash bootstrap.sh test-windows`, which sets Wine up and runs these"


def fiometer(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """`fiometer ARGS` in a child of this Python (Windows Python under Wine, or the Linux virtualenv)."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.PIPE,
        env=env,
    )


@pytest.fixture
def windows_fio() -> Path:
    """fio.exe where the Windows installer puts it (Windows side only)."""
    if not ON_WINDOWS:
        pytest.skip(f"Windows Python only; {SETUP}")
    path = Path(os.environ.get("PROGRAMFILES", r"C:\Program Files")) / "fio" / "fio.exe"
    if not path.is_file():
        pytest.skip(
            f"no {path}: the Wine set-up built no fio.exe (no fio source; see bootstrap-windows' message)"
        )
    return path


@pytest.fixture
def wine_fio() -> tuple[list[str], dict[str, str]]:
    """The command that runs the Windows fio.exe under Wine, and its environment (Linux side only)."""
    prefix = os.environ.get(ENV_PREFIX)
    if ON_WINDOWS:
        pytest.skip("the Linux side of the Windows tests")
    if not prefix or shutil.which("wine") is None:
        pytest.skip(f"the Wine set-up is absent ({ENV_PREFIX} unset or no wine); {SETUP}")
    exe = Path(prefix) / "drive_c" / "Program Files" / "fio" / "fio.exe"
    if not exe.is_file():
        pytest.skip(f"no {exe}: the Wine set-up built no fio.exe (no fio source)")
    env = dict(os.environ, WINEPREFIX=prefix, WINEDEBUG="-all")
    return ["wine", r"C:\Program Files\fio\fio.exe"], env
