"""First-run facts and text, per OS, with fake fio installs (nothing depends on this machine's fio)."""

import json
from pathlib import Path

from app.first_run import WINGET, check_fio, first_run_text
from tests.platform_marks import posix_only
from tests.unit.test_fio_binary import fio_stand_in


def no_which(_name: str) -> None:
    return None


def version_of(mapping: dict[str, str]):
    return lambda path: mapping[path]


def test_windows_fio_in_program_files_before_a_restart(tmp_path):
    exe = tmp_path / "Program Files" / "fio" / "fio.exe"
    exe.parent.mkdir(parents=True)
    exe.write_bytes(b"MZ")
    st = check_fio(
        "Windows",
        setting=None,
        environ={"ProgramFiles": str(tmp_path / "Program Files")},
        which=no_which,
        version=version_of({str(exe): "3.42"}),
        settings_file=tmp_path / "s.json",
    )
    assert (st.found, st.path, st.version, st.source) == (True, str(exe), "3.42", "installer folder")
    text = first_run_text(st)
    assert text.startswith(
        f"fio 3.42 found in the fio installer's folder (not on this process's PATH yet): {exe}"
    )
    assert "Administrator" in text and "Consider upgrading" not in text
    assert str(tmp_path / "s.json") in text  # where the custom path would be saved


def test_windows_without_fio_says_winget_and_msi(tmp_path):
    st = check_fio(
        "Windows",
        setting=None,
        environ={"ProgramFiles": str(tmp_path / "pf")},
        which=no_which,
        settings_file=tmp_path / "s.json",
    )
    assert not st.found and st.path is None and st.version is None
    text = first_run_text(st)
    assert text.startswith("fio was not found.")
    assert WINGET in text and "x64.msi" in text and "github.com/axboe/fio/releases" in text
    assert "C:\\Program Files\\fio\\fio.exe" in text
    assert "apt-get" not in text
    assert str(tmp_path / "pf" / "fio" / "fio.exe") in text  # the details say where it looked


def test_old_windows_fio_gets_upgrade_advice():
    st = check_fio(
        "Windows",
        setting=None,
        environ={},
        which=lambda n: r"C:\tools\fio.exe",
        version=lambda p: "3.33",
        settings_file="s.json",
    )
    assert st.source == "PATH" and st.upgrade_advised
    assert f"Consider upgrading: {WINGET}" in first_run_text(st)


def test_linux_without_fio_says_apt_and_dnf(tmp_path):
    st = check_fio("Linux", setting=None, environ={}, which=no_which, settings_file=tmp_path / "s.json")
    text = first_run_text(st)
    assert not st.found
    assert "sudo apt-get install fio" in text and "sudo dnf install fio" in text
    assert "winget" not in text and "Program Files" not in text
    assert "root or membership of the 'disk' group" in text


@posix_only("a Linux fio path shown as this machine's path")
def test_linux_fio_on_path_is_not_advised_to_upgrade():
    st = check_fio(
        "Linux",
        setting=None,
        environ={},
        which=lambda n: "/usr/bin/fio",
        version=lambda p: "3.33",
        settings_file="s.json",
    )
    assert (st.found, st.source, st.upgrade_advised) == (True, "PATH", False)
    text = first_run_text(st)
    assert text.startswith("fio 3.33 found on PATH: /usr/bin/fio")
    assert "fio --server" in text and "8765" in text and "raw disks need root" in text


def test_custom_path_from_the_settings_file(tmp_path):
    fake = fio_stand_in(tmp_path / "bin" / "fio", "fio-3.41")
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"fio_path": str(fake)}))
    st = check_fio("Linux", environ={}, which=lambda n: "/usr/bin/fio", settings_file=settings)
    assert (st.found, st.path, st.version, st.source, st.setting) == (
        True,
        str(fake),
        "3.41",
        "settings",
        str(fake),
    )
    assert "found from your settings" in first_run_text(st)


def test_env_var_wins_and_is_named(tmp_path):
    fake = fio_stand_in(tmp_path / "fio", "fio-3.40")
    st = check_fio(
        "Linux", setting=None, environ={"FIOMETER_FIO": str(fake)}, which=no_which, settings_file="s"
    )
    assert st.source == "FIOMETER_FIO" and "from the FIOMETER_FIO variable" in first_run_text(st)


def test_broken_setting_is_reported_not_skipped(tmp_path):
    st = check_fio(
        "Linux",
        setting=str(tmp_path / "gone" / "fio"),
        environ={},
        which=lambda n: "/usr/bin/fio",
        settings_file="s",
    )
    assert not st.found
    assert "the fio path setting points to" in st.problem
    assert "Details: the fio path setting" in first_run_text(st)


def test_default_reads_the_real_settings_file_location(tmp_path):
    # tests/conftest.py redirects the settings folder; check_fio() must honour that
    from app import user_settings

    fake = fio_stand_in(tmp_path / "fio", "fio-3.38")
    user_settings.set_fio_path(fake)
    st = check_fio("Linux", environ={})
    assert st.settings_file == str(user_settings.settings_path())
    assert (st.version, st.source) == ("3.38", "settings")
    assert Path(st.path) == fake
