"""app.engine.devices.windows_disks (the Windows API steps, with the API replaced) and disks.disk_of's dispatch.

The real Windows calls run under Windows Python (`bash bootstrap.sh test-windows`):
test_disk_of_under_windows_never_raises."""

from __future__ import annotations

import os
import struct
import sys

import pytest

from app.engine.devices import disks, windows_disks
from app.engine.devices.windows_disks import disk_of, parse_device_number, volume_device


class FakeApi:
    """The three answers Windows gives, recorded per question."""

    def __init__(self, roots: dict[str, str], guids: dict[str, str], numbers: dict[str, bytes]) -> None:
        self.roots, self.guids, self.numbers = roots, guids, numbers
        self.opened: list[str] = []

    def volume_path(self, path: str) -> str | None:
        return next((r for p, r in self.roots.items() if path.lower().startswith(p.lower())), None)

    def volume_guid(self, mount_point: str) -> str | None:
        return self.guids.get(mount_point)

    def device_number(self, device: str) -> bytes | None:
        self.opened.append(device)
        return self.numbers.get(device)


def _number(disk: int, partition: int = 1, device_type: int = 7) -> bytes:
    return struct.pack("<III", device_type, disk, partition)


def test_a_file_on_a_drive_letter_is_on_the_disk_windows_names() -> None:
    api = FakeApi({"D:\\": "D:\\"}, {}, {"\\\\.\\D:": _number(2)})
    assert disk_of("D:\\bench\\iobw.tst", api) == "PhysicalDrive2"
    assert api.opened == ["\\\\.\\D:"]  # the volume, not its root folder (no trailing backslash)


def test_a_folder_mount_is_opened_by_its_volume_name() -> None:
    guid = "\\\\?\\Volume{0a1b2c3d-0000-0000-0000-100000000000}\\"
    api = FakeApi(
        {"C:\\mnt\\fast": "C:\\mnt\\fast\\"}, {"C:\\mnt\\fast\\": guid}, {guid.rstrip("\\"): _number(3)}
    )
    assert disk_of("C:\\mnt\\fast\\t.tst", api) == "PhysicalDrive3"


def test_a_physical_drive_is_itself_without_asking() -> None:
    api = FakeApi({}, {}, {})
    assert disk_of("\\\\.\\PhysicalDrive1", api) == "PhysicalDrive1"
    assert disk_of("\\\\.\\physicaldrive07", api) == "PhysicalDrive7"
    assert api.opened == []


@pytest.mark.parametrize(
    ("path", "api", "why"),
    [
        ("E:\\t.tst", FakeApi({}, {}, {}), "no volume (a share or a missing drive)"),
        (
            "E:\\t.tst",
            FakeApi({"E:\\": "E:\\"}, {}, {}),
            "the volume does not answer (Wine, a spanned volume)",
        ),
        ("E:\\t.tst", FakeApi({"E:\\": "E:\\"}, {}, {"\\\\.\\E:": b"\x07\x00"}), "a short answer"),
        ("E:\\t.tst", FakeApi({"E:\\": "E:\\"}, {}, {"\\\\.\\E:": _number(0xFFFFFFFF)}), "no disk number"),
        ("C:\\m\\t", FakeApi({"C:\\m": "C:\\m\\"}, {}, {}), "a folder mount without a volume name"),
    ],
)
def test_unknown_is_none_never_a_guess(path: str, api: FakeApi, why: str) -> None:
    assert disk_of(path, api) is None, why


def test_volume_device_and_parse() -> None:
    assert volume_device("c:\\", None) == "\\\\.\\C:"
    assert volume_device("C:", None) == "\\\\.\\C:"
    assert volume_device("C:\\mnt\\x\\", "\\\\?\\Volume{x}\\") == "\\\\?\\Volume{x}"
    assert volume_device("\\\\server\\share\\", None) is None
    assert parse_device_number(_number(5)) == 5
    assert parse_device_number(None) is None


def test_disks_disk_of_dispatches_by_os(tmp_path, monkeypatch) -> None:
    asked: list[str] = []
    monkeypatch.setattr(windows_disks, "disk_of", lambda p: asked.append(p) or "PhysicalDrive0")
    assert disks.disk_of("C:\\t.tst", os_name="Windows") == "PhysicalDrive0"
    assert asked == ["C:\\t.tst"]
    assert disks.disk_of(str(tmp_path), os_name="Darwin") is None


def test_linux_branch_without_device_numbers_is_none(tmp_path, monkeypatch) -> None:
    """Windows Python has no os.major: the Linux branch must not be reached there, and must not crash."""
    monkeypatch.delattr(os, "major", raising=False)
    assert disks.disk_of(str(tmp_path), os_name="Linux") is None


def test_disk_of_under_windows_never_raises(tmp_path) -> None:
    """The real Windows API where there is one (Windows, or Wine under test-windows); elsewhere None."""
    got = windows_disks.disk_of(str(tmp_path / "iobw.tst"))
    if sys.platform != "win32":
        assert got is None
    else:
        assert got is None or got.startswith("PhysicalDrive")
        assert disks.disk_of(str(tmp_path / "iobw.tst")) == got
