"""Iometer target names -> fio names, per manager OS (the Windows branch is checked here too)."""

import pytest

from app.engine.jobs.targets import TargetError, fio_filename, resolve
from app.model.plan import Target


@pytest.mark.parametrize("name", ["C:", 'C: "SYSTEM"', "C:local", "c:"])
def test_windows_volume_gets_iobw_tst_at_the_root(name):
    r = resolve(Target(name), "Windows")
    assert (r.path, r.is_device, r.sector_size) == ("C:\\iobw.tst", False, 512)
    assert fio_filename(r.path) == "C\\:\\iobw.tst"


@pytest.mark.parametrize("name", ["PHYSICALDRIVE:1", '1: "( INTEL SSDPE2ME016T4 8DV10160"'])
def test_windows_physical_disk(name):
    r = resolve(Target(name), "windows")
    assert (r.path, r.is_device) == ("\\\\.\\PhysicalDrive1", True)
    assert fio_filename(r.path) == "\\\\.\\PhysicalDrive1"


def test_linux_names():
    assert resolve(Target("sdb"), "Linux").path == "/dev/sdb"
    assert resolve(Target("nvme0n1p2"), "Linux").is_device
    mount = resolve(Target("/mnt/data [xfs]"), "Linux")
    assert (mount.path, mount.is_device, mount.sector_size) == ("/mnt/data/iobw.tst", False, 4096)
    assert resolve(Target("/ [ext4]"), "Linux").path == "/iobw.tst"


def test_windows_names_on_linux_need_a_map_and_say_so():
    with pytest.raises(TargetError, match=r"Windows drive.*--map 'C:=/path/to/iobw.tst'"):
        resolve(Target("C:"), "Linux")
    with pytest.raises(TargetError, match="Windows physical disk 1"):
        resolve(Target("PHYSICALDRIVE:1"), "Linux")
    with pytest.raises(TargetError, match="Linux disk"):
        resolve(Target("sdb"), "Windows")


def test_map_matches_like_iometer_and_the_sector_follows_the_path_not_the_name():
    r = resolve(Target('C: "DATA"'), "Linux", {"C:": "/tmp/x.tst"})
    assert (r.path, r.is_device, r.sector_size) == ("/tmp/x.tst", False, 4096)  # a Linux file, until examined
    assert resolve(Target("/mnt/data [ext4]"), "Linux", {"/mnt/data [ext4]": "/dev/loop3"}).sector_size == 512
    assert resolve(Target("sdb"), "Linux", {"SDB": "/dev/loop3"}).is_device


def test_unknown_names_are_refused_with_a_hint():
    with pytest.raises(TargetError, match="not a drive, disk or path"):
        resolve(Target("TEST: Synthetic Disk"), "Linux")
    with pytest.raises(TargetError, match="network target"):
        resolve(Target("127.0.0.1", kind="network"), "Linux")


def test_colons_are_escaped_on_every_os():
    assert fio_filename("/tmp/a:b") == "/tmp/a\\:b"


@pytest.mark.parametrize("name", ["\\\\.\\PhysicalDrive0", "\\\\?\\GLOBALROOT\\Device\\Harddisk0\\DR0"])
def test_a_windows_raw_disk_on_a_linux_manager_is_named_as_such(name):
    with pytest.raises(TargetError, match="Windows raw disk or device name.*map it"):
        resolve(Target(name), "Linux")
    with pytest.raises(TargetError, match="Windows raw disk"):  # mapped to one, too
        resolve(Target("C:"), "Linux", {"C:": name})
    assert resolve(Target(name), "Windows").is_device


def test_what_fio_exe_cannot_open_as_written_is_named():
    """Issue 36.5: fio.exe reads its job file and opens files in the ANSI code page, at most MAX_PATH."""
    from app.engine.jobs import windows_paths

    cp1252 = lambda s: s.encode("cp1252")  # noqa: E731 - a Western European Windows
    assert windows_paths.ansi_problem("C:\\Tests\\Prüfung 1\\iobw.tst", cp1252) is None
    assert "ANSI code page" in (windows_paths.ansi_problem("C:\\Тест\\iobw.tst", cp1252) or "")
    long = "C:\\" + "d" * 304 + "\\iobw.tst"
    assert "316 characters" in (windows_paths.ansi_problem(long, cp1252) or "")
    assert windows_paths.job_encoding("Windows") == "mbcs" and windows_paths.job_encoding("Linux") == "utf-8"
