"""The default database location per OS, and what overrides it."""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath

import pytest

from app.store.db_location import default_db_path_for, resolve_db_path
from tests.platform_marks import posix_only


@pytest.mark.parametrize(
    ("system", "env", "home", "expected"),
    [
        (
            "Linux",
            {"XDG_DATA_HOME": "/data/ann"},
            "/home/ann",
            PurePosixPath("/data/ann/fiometer/fiometer.db"),
        ),
        ("Linux", {}, "/home/ann", PurePosixPath("/home/ann/.local/share/fiometer/fiometer.db")),
        (
            "Linux",
            {"XDG_DATA_HOME": "rel/dir"},
            "/home/ann",
            PurePosixPath("/home/ann/.local/share/fiometer/fiometer.db"),
        ),
        ("FreeBSD", {}, "/home/ann", PurePosixPath("/home/ann/.local/share/fiometer/fiometer.db")),
        (
            "Windows",
            {"LOCALAPPDATA": r"C:\Users\ann\AppData\Local"},
            r"C:\Users\ann",
            PureWindowsPath(r"C:\Users\ann\AppData\Local\Fiometer\fiometer.db"),
        ),
        ("Windows", {}, r"C:\Users\ann", PureWindowsPath(r"C:\Users\ann\AppData\Local\Fiometer\fiometer.db")),
        (
            "Darwin",
            {"XDG_DATA_HOME": "/ignored"},
            "/Users/ann",
            PurePosixPath("/Users/ann/Library/Application Support/Fiometer/fiometer.db"),
        ),
    ],
)
def test_default_path_per_os(system, env, home, expected):
    got = default_db_path_for(system, env, home)
    assert got == expected and type(got) is type(expected)


@posix_only("XDG_DATA_HOME must be an absolute POSIX path")
def test_explicit_path_beats_environment_beats_default(monkeypatch, tmp_path):
    monkeypatch.setenv("FIOMETER_DB", str(tmp_path / "env.db"))
    assert resolve_db_path(tmp_path / "mine.db") == tmp_path / "mine.db"
    assert resolve_db_path() == tmp_path / "env.db"
    monkeypatch.delenv("FIOMETER_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr("platform.system", lambda: "Linux")
    assert resolve_db_path() == tmp_path / "xdg" / "fiometer" / "fiometer.db"
