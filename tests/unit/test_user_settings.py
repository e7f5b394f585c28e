"""The settings file: where it lives per OS, reading, writing, and the custom fio path reaching the engine."""

import json
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest

from app import user_settings as us
from app.engine.run.managers import ManagerError, local_endpoint
from app.user_settings import UserSettings, config_dir_for, settings_path_for
from tests.unit.test_fio_binary import fio_stand_in, make_exe


def test_linux_uses_xdg_config_home():
    env = {"XDG_CONFIG_HOME": "/home/ann/.cfg"}
    assert settings_path_for("Linux", env, "/home/ann") == PurePosixPath(
        "/home/ann/.cfg/fiometer/settings.json"
    )


@pytest.mark.parametrize("xdg", [None, "", "relative/dir"])
def test_linux_falls_back_to_dot_config(xdg):
    env = {} if xdg is None else {"XDG_CONFIG_HOME": xdg}
    assert settings_path_for("Linux", env, "/home/ann") == PurePosixPath(
        "/home/ann/.config/fiometer/settings.json"
    )


def test_windows_uses_appdata():
    env = {"APPDATA": r"C:\Users\Ann\AppData\Roaming", "XDG_CONFIG_HOME": "/ignored"}
    path = settings_path_for("Windows", env, r"C:\Users\Ann")
    assert path == PureWindowsPath(r"C:\Users\Ann\AppData\Roaming\Fiometer\settings.json")
    assert str(path) == r"C:\Users\Ann\AppData\Roaming\Fiometer\settings.json"


def test_windows_without_appdata_uses_the_profile():
    assert settings_path_for("Windows", {}, r"C:\Users\Ann") == PureWindowsPath(
        r"C:\Users\Ann\AppData\Roaming\Fiometer\settings.json"
    )


def test_macos_and_override():
    assert config_dir_for("Darwin", {}, "/Users/ann") == PurePosixPath(
        "/Users/ann/Library/Application Support/Fiometer"
    )
    assert settings_path_for("Linux", {us.ENV_DIR: "/tmp/x"}, "/home/ann") == PurePosixPath(
        "/tmp/x/settings.json"
    )
    assert settings_path_for(
        "Windows", {us.ENV_DIR: r"D:\cfg", "APPDATA": r"C:\A"}, r"C:\U"
    ) == PureWindowsPath(r"D:\cfg\settings.json")


def test_suite_never_touches_the_real_settings(tmp_path_factory):
    # tests/conftest.py points every test at a temporary folder
    assert str(us.settings_path()).startswith(str(tmp_path_factory.getbasetemp()))


def test_missing_file_reads_as_defaults(tmp_path):
    assert us.load(tmp_path / "nope.json") == UserSettings()


def test_round_trip_keeps_unknown_keys(tmp_path):
    path = tmp_path / "sub" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"future_option": 3}))
    us.save(UserSettings(fio_path="/opt/fio/bin/fio"), path)
    assert json.loads(path.read_text()) == {"fio_path": "/opt/fio/bin/fio", "future_option": 3}
    assert us.load(path).fio_path == "/opt/fio/bin/fio"
    us.set_fio_path(None, path)
    assert us.load(path).fio_path is None
    assert json.loads(path.read_text())["future_option"] == 3


@pytest.mark.parametrize(
    "text, words",
    [
        ("{not json", "cannot read"),
        ("[1, 2]", "not a JSON object"),
        ('{"fio_path": 42}', "must be a string"),
    ],
)
def test_damaged_file_gives_defaults_and_says_why(tmp_path, text, words):
    path = tmp_path / "settings.json"
    path.write_text(text)
    loaded = us.load(path)
    assert loaded.fio_path is None
    assert words in loaded.problem and str(path) in loaded.problem


def test_saved_fio_path_is_used_by_local_managers(tmp_path, monkeypatch):
    monkeypatch.delenv("FIOMETER_FIO", raising=False)
    fake = fio_stand_in(tmp_path / "custom" / "fio", "fio-3.99")
    us.set_fio_path(fake)
    ep = local_endpoint("local")
    assert ep.fio_version == "3.99"
    # an explicit path (e.g. `fiometer run --fio`) still wins over the setting
    other = fio_stand_in(tmp_path / "other" / "fio", "fio-3.41")
    assert local_endpoint("local", str(other)).fio_version == "3.41"


def test_a_saved_path_that_is_not_fio_is_a_manager_error(tmp_path, monkeypatch):
    monkeypatch.delenv("FIOMETER_FIO", raising=False)
    us.set_fio_path(fio_stand_in(tmp_path / "fio", "hello"))
    with pytest.raises(ManagerError, match="does not look like fio"):
        local_endpoint("local")
    us.set_fio_path(tmp_path / "missing")
    with pytest.raises(ManagerError, match="fio path setting"):
        local_endpoint("local")


def test_find_fio_defaults_to_the_saved_path_and_none_ignores_it(tmp_path, monkeypatch):
    from app.engine.transports.fio_binary import find_fio

    monkeypatch.delenv("FIOMETER_FIO", raising=False)
    fake = make_exe(tmp_path / "custom" / "fio")
    us.set_fio_path(fake)
    assert find_fio(which=lambda n: "/usr/bin/fio") == fake  # e.g. the GUI's Topology asking for fio
    assert find_fio(None, which=lambda n: "/usr/bin/fio") == Path("/usr/bin/fio")


def test_protocols_remembered_from_many_threads_are_all_kept(tmp_path):
    """build_endpoints probes managers at once: each new server's protocol is read, changed and saved from its
    own thread, and none may overwrite another's."""
    import threading

    path = tmp_path / "settings.json"
    servers = [f"127.0.0.{i}:8765" for i in range(2, 26)]
    go = threading.Barrier(len(servers))

    def remember(where: str) -> None:
        go.wait()
        us.remember_protocol(where, 97, path)

    threads = [threading.Thread(target=remember, args=(where,)) for where in servers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert us.load(path).fio_protocols == dict.fromkeys(servers, 97)
