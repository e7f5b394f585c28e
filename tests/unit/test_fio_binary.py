import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.engine.transports.fio_binary import (
    ENV_VAR,
    FioNotFound,
    find_fio,
    fio_version,
    install_hint,
    no_window_flags,
    parse_version,
    platform_candidates,
)
from tests.platform_marks import posix_only


def make_exe(path: Path, text: str = "#!/bin/sh\necho fio-3.33\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def fio_stand_in(path: Path, says: str) -> Path:
    """A program standing in for fio that prints ``says``: a shell script on POSIX, a ``.cmd`` beside
    ``path`` on Windows (CreateProcess runs a .cmd as it runs fio.exe). Returns the program's path."""
    if sys.platform == "win32":
        return make_exe(path.with_suffix(".cmd"), f"@echo {says}\n")
    return make_exe(path, f"#!/bin/sh\necho {says}\n")


def no_which(_name: str) -> None:
    return None


def test_env_var_wins_over_setting_and_path(tmp_path):
    env_fio = make_exe(tmp_path / "env" / "fio")
    setting = make_exe(tmp_path / "setting" / "fio")
    found = find_fio(
        setting, environ={ENV_VAR: str(env_fio)}, os_name="Linux", which=lambda n: "/usr/bin/fio"
    )
    assert found == env_fio


def test_setting_wins_over_path(tmp_path):
    setting = make_exe(tmp_path / "setting" / "fio")
    assert find_fio(setting, environ={}, os_name="Linux", which=lambda n: "/usr/bin/fio") == setting


def test_path_is_used_without_env_or_setting():
    assert find_fio(None, environ={}, os_name="Linux", which=lambda n: "/opt/x/fio") == Path("/opt/x/fio")


@posix_only("execute permission bits (on Windows any existing file may be run)")
def test_explicit_location_that_is_not_executable_is_an_error(tmp_path):
    with pytest.raises(FioNotFound, match=ENV_VAR):
        find_fio(
            None,
            environ={ENV_VAR: str(tmp_path / "missing")},
            os_name="Linux",
            which=lambda n: "/usr/bin/fio",
        )
    plain = tmp_path / "fio"
    plain.write_text("not executable")
    with pytest.raises(FioNotFound, match="fio path setting"):
        find_fio(plain, environ={}, os_name="Linux", which=lambda n: "/usr/bin/fio")


def test_windows_program_files_locations(tmp_path):
    pf, pf86 = tmp_path / "Program Files", tmp_path / "Program Files (x86)"
    environ = {"ProgramFiles": str(pf), "ProgramFiles(x86)": str(pf86)}
    assert platform_candidates("Windows", environ) == [pf / "fio" / "fio.exe", pf86 / "fio" / "fio.exe"]
    assert platform_candidates("Linux", environ) == []
    (pf86 / "fio").mkdir(parents=True)
    (pf86 / "fio" / "fio.exe").write_bytes(b"MZ")  # no x bit needed on Windows
    assert find_fio(None, environ=environ, os_name="Windows", which=no_which) == pf86 / "fio" / "fio.exe"
    (pf / "fio").mkdir(parents=True)
    (pf / "fio" / "fio.exe").write_bytes(b"MZ")
    assert find_fio(None, environ=environ, os_name="Windows", which=no_which) == pf / "fio" / "fio.exe"


def test_not_found_on_windows_says_how_to_install(tmp_path):
    environ = {"ProgramFiles": str(tmp_path / "pf")}
    with pytest.raises(FioNotFound) as e:
        find_fio(None, environ=environ, os_name="Windows", which=no_which)
    msg = str(e.value)
    assert "winget install fio.fio" in msg
    assert "github.com/axboe/fio/releases" in msg
    assert "C:\\Program Files\\fio" in msg
    assert str(tmp_path / "pf" / "fio" / "fio.exe") in msg  # says where it looked


def test_not_found_on_linux_says_how_to_install():
    with pytest.raises(FioNotFound) as e:
        find_fio(None, environ={}, os_name="Linux", which=no_which)
    assert "apt-get install fio" in str(e.value) and "dnf install fio" in str(e.value)
    assert "apt-get" not in install_hint("Windows")


def test_parse_version():
    assert parse_version("fio-3.33\n") == "3.33"
    assert parse_version("fio-3.36-12-gabcdef0") == "3.36"
    assert parse_version("fio-3.1.2") == "3.1.2"
    assert parse_version("hello") is None


def test_no_window_flag_only_on_windows():
    assert no_window_flags("Windows") == 0x08000000
    assert no_window_flags("Linux") == 0


@pytest.mark.fio
@posix_only("the distribution's fio on PATH")
def test_version_of_the_installed_fio():
    """Whatever the distribution ships (Debian 12: 3.33, Debian 13: 3.39): the number fio's own banner
    gives, read here without Fiometer's parser."""
    fio = shutil.which("fio")
    assert fio, "fio is expected on this machine (bootstrap.sh installs it)"
    banner = subprocess.run([fio, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert banner.startswith("fio-"), banner
    assert fio_version(fio) == banner.removeprefix("fio-").split("-")[0]


def test_version_of_something_that_is_not_fio(tmp_path):
    impostor = fio_stand_in(tmp_path / "fio", "hello")
    with pytest.raises(FioNotFound, match="does not look like fio"):
        fio_version(impostor)
    with pytest.raises(FioNotFound, match="cannot run"):
        fio_version(tmp_path / "nope")


def test_env_var_is_read_from_the_real_environment(tmp_path, monkeypatch):
    env_fio = make_exe(tmp_path / "fio")
    monkeypatch.setenv(ENV_VAR, os.fspath(env_fio))
    assert find_fio() == env_fio
