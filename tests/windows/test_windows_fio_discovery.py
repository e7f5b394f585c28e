"""Finding fio on Windows as a user meets it: `doctor --set-fio` with a program that is not in PATH, the
first-run words, and a saved path that stops being fio. A `.cmd` stands in for fio (CreateProcess runs it as
it runs fio.exe), so these need no fio.exe; the real one is used where the test is about it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.platform_marks import windows_only
from tests.unit.test_fio_binary import fio_stand_in
from tests.windows.conftest import fiometer

pytestmark = windows_only("Windows' own discovery: %ProgramFiles%, PATH with .exe/.cmd, cmd.exe's quoting")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """This process's environment without fio anywhere: an empty PATH folder and no FIOMETER_FIO."""
    env = {k: v for k, v in os.environ.items() if k != "FIOMETER_FIO"}
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    system = os.environ.get("SYSTEMROOT", r"C:\windows")
    env.update(PATH=f"{empty};{system}\\system32;{system}", PROGRAMFILES=str(tmp_path / "pf"), **extra)
    return env


def test_set_fio_saves_a_program_outside_path_and_doctor_then_finds_it(tmp_path: Path) -> None:
    fake = fio_stand_in(tmp_path / "tools" / "fio", "fio-3.41")
    env = _env(tmp_path)
    saved = fiometer("--db", str(tmp_path / "r.db"), "doctor", "--set-fio", str(fake), env=env)
    assert saved.returncode == 0, saved.stderr
    assert f"fio 3.41 at {fake} saved in " in saved.stdout
    assert f"fio 3.41 found from your settings: {fake}" in saved.stdout
    again = fiometer("--db", str(tmp_path / "r.db"), "doctor", env=env)
    assert again.returncode == 0, again.stderr
    assert "\nfio: 3.41" in again.stdout
    cleared = fiometer("doctor", "--clear-fio", env=env)
    # then fio is looked for again: C:\Program Files\fio\fio.exe where the set-up installed it (Wine sets
    # ProgramFiles for every process itself, so it cannot be hidden from the child here), else not found
    assert "custom fio path removed" in cleared.stdout, cleared.stdout + cleared.stderr
    assert f"found from your settings: {fake}" not in cleared.stdout
    assert "apt-get" not in cleared.stdout


def test_set_fio_refuses_a_program_that_is_not_fio_and_saves_nothing(tmp_path: Path) -> None:
    env = _env(tmp_path)
    impostor = fio_stand_in(tmp_path / "fio", "hello")
    refused = fiometer("doctor", "--set-fio", str(impostor), env=env)
    assert refused.returncode == 2 and "not saved" in refused.stderr, refused.stderr
    missing = fiometer("doctor", "--set-fio", str(tmp_path / "nope.exe"), env=env)
    assert missing.returncode == 2 and "not saved" in missing.stderr, missing.stderr
    assert not (Path(env["FIOMETER_SETTINGS_DIR"]) / "settings.json").exists()


def test_fio_found_on_path_as_a_cmd_is_used_by_a_local_run_check(tmp_path: Path) -> None:
    """PATH lookups on Windows try PATHEXT's extensions: a fio.cmd on PATH is found as `fio`."""
    fake = fio_stand_in(tmp_path / "bin" / "fio", "fio-3.40")
    env = _env(tmp_path)
    env["PATH"] = f"{fake.parent};{env['PATH']}"
    shown = fiometer("doctor", env=env)
    assert shown.returncode == 0, shown.stderr
    assert "\nfio: 3.40" in shown.stdout and str(fake.parent).lower() in shown.stdout.lower()


@pytest.mark.parametrize("says", ["", "fio-", "Microsoft Windows [Version 10.0]"])
def test_a_saved_path_that_stopped_being_fio_is_named_with_what_to_do(tmp_path: Path, says: str) -> None:
    env = _env(tmp_path)
    fake = fio_stand_in(tmp_path / "fio", "fio-3.42")
    assert fiometer("doctor", "--set-fio", str(fake), env=env).returncode == 0
    fake.write_text(f"@echo {says}\n" if says else "@exit /b 0\n")
    shown = fiometer("doctor", env=env)
    assert shown.returncode == 1, shown.stdout + shown.stderr
    assert str(fake) in shown.stdout and "does not look like fio" in shown.stdout
    assert "--set-fio" in shown.stdout or "--clear-fio" in shown.stdout
