"""app.safe_files on Windows, for real: what Fiometer's own outputs (reports, exports, plans, screenshots)
do when their name is a Windows device, a pipe, a link or a junction. The POSIX cases (FIFOs, device
nodes) are in tests/unit/test_safe_files.py."""

from __future__ import annotations

import os
import threading
import uuid
from pathlib import Path

import pytest

from app.safe_files import UnsafeOutput, staged, write_file
from tests.platform_marks import under_wine, windows_only, wine_limit

pytestmark = windows_only("Win32 device names, named pipes, junctions")


@pytest.mark.parametrize("name", ["NUL", "nul", "\\\\.\\NUL"])
def test_nul_is_written_in_place_and_nothing_appears(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert write_file(name, b"report\n") == Path(name)
    with staged(tmp_path / name) as tmp:
        tmp.write_bytes(b"pdf")
    assert sorted(os.listdir(tmp_path)) == []


@pytest.mark.parametrize("name", ["COM1", "com1.csv", "LPT1.html", "nul.txt", "aux .pdf"])
def test_a_dos_device_name_in_a_folder_is_refused_in_words(tmp_path: Path, name: str) -> None:
    with pytest.raises(UnsafeOutput, match="Windows device name") as e:
        write_file(tmp_path / name, b"x")
    assert "choose another name" in str(e.value)
    with pytest.raises(UnsafeOutput), staged(tmp_path / name):
        pass
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", [r"\\.\PhysicalDrive0", r"\\.\C:", r"\\?\GLOBALROOT\Device\Harddisk0\DR0"])
def test_a_raw_disk_or_volume_as_an_output_is_refused_before_it_is_opened(name: str) -> None:
    with pytest.raises(UnsafeOutput, match="Windows device") as e:
        write_file(name, b"\0" * 512)
    assert "did not write" in str(e.value)


def test_a_named_pipe_is_written_in_place(tmp_path: Path) -> None:
    from multiprocessing.connection import Listener

    address = rf"\\.\pipe\fiometer-test-{uuid.uuid4().hex}"
    got: list[bytes] = []
    with Listener(address, family="AF_PIPE") as listener:

        def read() -> None:
            with listener.accept() as conn:
                got.append(conn.recv_bytes())

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        body = b"rows\n"  # AF_PIPE is a message pipe: one write is one message
        write_file(address, body)
        reader.join(20)
    assert got == [body]


def test_a_pipe_nobody_serves_is_an_error_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        write_file(rf"\\.\pipe\fiometer-nobody-{uuid.uuid4().hex}", b"x")


@wine_limit("directory junctions (CreateJunction fails with ERROR_NOT_SUPPORTED)")
def test_a_junction_as_the_output_is_a_folder_and_is_refused(tmp_path: Path) -> None:
    import _winapi

    inside = tmp_path / "elsewhere"
    inside.mkdir()
    junction = tmp_path / "report.html"
    _winapi.CreateJunction(str(inside), str(junction))
    with pytest.raises(UnsafeOutput, match="directory|folder|link"):
        write_file(junction, b"<html>")
    assert os.listdir(inside) == []


def test_a_symbolic_link_as_the_output_is_never_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"keep me")
    link = tmp_path / "report.csv"
    try:
        link.symlink_to(victim)
    except OSError as e:  # Windows lets only administrators or Developer Mode make symlinks
        pytest.skip(f"this Windows user may not create symbolic links ({e})")
    if under_wine():  # Wine's lstat does not report the link: the rename replaces the link, not the file
        write_file(link, b"written")
        assert victim.read_bytes() == b"keep me"
        pytest.skip(
            "Wine cannot show the refusal of a symbolic link (its lstat reports a regular file); "
            "the file behind the link was kept"
        )
    with pytest.raises(UnsafeOutput, match="symbolic link"):
        write_file(link, b"overwritten")
    assert victim.read_bytes() == b"keep me"


def test_a_path_past_260_characters_is_written_whole(tmp_path: Path) -> None:
    deep = Path("\\\\?\\" + str(tmp_path)) / ("d" * 120) / ("e" * 120)
    os.makedirs(deep)
    out = deep / "report-with-a-long-name.csv"
    assert len(str(out)) > 260
    write_file(out, b"a,b\n")
    assert out.read_bytes() == b"a,b\n"
    assert [p.name for p in deep.iterdir()] == [out.name]  # no temporary file left beside it
