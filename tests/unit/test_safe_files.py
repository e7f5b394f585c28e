"""app.safe_files: the rules every file Fiometer writes follows (no link followed, nothing but a regular
file renamed over, /dev/null / a pipe written in place, anything else refused in words)."""

from __future__ import annotations

import contextlib
import os
import re
import select
import stat
import threading
from pathlib import Path

import pytest

from app import safe_files
from app.safe_files import UnsafeOutput, create_exclusive, prepare_database, staged, write_file

root_only = pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="needs root (mknod)")
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file types")


def test_a_new_file_is_written_with_the_umask_mode(tmp_path: Path) -> None:
    out = write_file(tmp_path / "a.txt", "one\ntwo\n")
    assert out.read_text() == "one\ntwo\n"
    if os.name == "posix":  # Windows keeps no permission bits (only a read-only attribute)
        assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~safe_files._umask()
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]  # no temporary file left


def test_a_regular_file_is_replaced_and_its_other_links_keep_the_old_content(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    target.write_bytes(b"old")
    target.chmod(0o640)
    other = tmp_path / "hard-link"
    os.link(target, other)
    write_file(target, b"new")
    assert target.read_bytes() == b"new"
    assert other.read_bytes() == b"old"  # a rename never writes through a hard link
    if os.name == "posix":
        assert stat.S_IMODE(target.stat().st_mode) == 0o640


@posix_only
def test_a_link_planted_as_the_output_is_never_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    link = tmp_path / "report.html"
    link.symlink_to(victim)
    with pytest.raises(UnsafeOutput, match="symbolic link") as e:
        write_file(link, "<html>")
    assert str(e.value).startswith(f"{link}: ")
    assert victim.read_bytes() == b"precious" and link.is_symlink()
    dangling = tmp_path / "new.json"
    dangling.symlink_to(tmp_path / "would-be-created")
    with pytest.raises(UnsafeOutput):
        write_file(dangling, "{}")
    assert not (tmp_path / "would-be-created").exists()


@posix_only
def test_a_link_planted_under_a_temporary_name_is_not_followed(tmp_path: Path) -> None:
    """The old saves wrote NAME.tmp with a plain open: a link planted there was written through."""
    from app.model import planfile
    from app.model.plan import Plan

    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    (tmp_path / "p.json.tmp").symlink_to(victim)
    planfile.save(Plan(), tmp_path / "p.json")
    assert victim.read_bytes() == b"precious"
    assert planfile.load(tmp_path / "p.json") is not None


@posix_only
def test_the_final_step_looks_again_and_never_replaces_what_appeared(tmp_path: Path) -> None:
    """Between the first look and the rename a link appears under the name: refused, nothing written."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    target = tmp_path / "out.csv"
    tmp = tmp_path / ".out.csv.x.tmp"
    tmp.write_bytes(b"data")
    target.symlink_to(victim)
    with pytest.raises(UnsafeOutput):
        safe_files._put_in_place(tmp, target)
    assert target.is_symlink() and victim.read_bytes() == b"precious"


@root_only
@pytest.mark.parametrize(
    "kind, devnum, words",
    [
        (stat.S_IFBLK, (7, 250), "block device"),  # a loop device's number: never opened
        (stat.S_IFCHR, (1, 1), "character device (1:1)"),  # /dev/mem
    ],
)
def test_devices_that_hold_data_are_refused_in_words(
    tmp_path: Path, kind: int, devnum: tuple[int, int], words: str
) -> None:
    node = tmp_path / "node"
    os.mknod(node, kind | 0o600, os.makedev(*devnum))
    for write in (lambda: write_file(node, b"x"), lambda: staged(node).__enter__()):
        with pytest.raises(UnsafeOutput, match=re.escape(words)):
            write()
    st = os.lstat(node)
    assert stat.S_IFMT(st.st_mode) == kind and st.st_rdev == os.makedev(*devnum)
    assert [p.name for p in tmp_path.iterdir()] == ["node"]


@posix_only
def test_dev_null_stays_a_character_device(tmp_path: Path) -> None:
    before = os.stat("/dev/null")
    write_file("/dev/null", b"x" * 100000)
    with staged("/dev/null") as tmp:
        tmp.write_bytes(b"y")
    link = tmp_path / "to-null"
    link.symlink_to("/dev/null")
    write_file(link, "z")  # a link to /dev/null (as /dev/stdout may be) is written through
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert link.is_symlink()


@posix_only
def test_a_pipe_is_written_in_place_and_one_nobody_reads_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UnsafeOutput, match="nobody reads"):
        write_file(fifo, b"x")  # never waits for a reader
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is there: the writer may open
    got = bytearray()

    def read_all() -> None:  # Linux: poll waits for the first writer (no hang-up before one came)
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while len(got) < 300000 and poller.poll(30000):
            with contextlib.suppress(BlockingIOError):
                got.extend(os.read(fd, 65536))

    reader = threading.Thread(target=read_all)
    reader.start()
    try:
        write_file(fifo, b"a" * 300000)  # more than a pipe holds: a blocking write, as a shell pipe gets
    finally:
        reader.join(timeout=30)
        os.close(fd)
    assert bytes(got) == b"a" * 300000
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@posix_only
def test_staged_output_goes_in_place_only_when_the_block_succeeds(tmp_path: Path) -> None:
    target = tmp_path / "r.pdf"
    with staged(target) as tmp:
        tmp.write_bytes(b"%PDF")
    assert target.read_bytes() == b"%PDF"
    with pytest.raises(RuntimeError), staged(target) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("renderer failed")
    assert target.read_bytes() == b"%PDF"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.pdf"]


@posix_only
def test_the_database_and_its_companions_are_never_links(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    db = tmp_path / "results.db"
    (tmp_path / "results.db-wal").symlink_to(victim)
    with pytest.raises(UnsafeOutput, match="results.db-wal"):
        prepare_database(db)
    (tmp_path / "results.db-wal").unlink()
    prepare_database(db)
    assert db.is_file() and db.stat().st_size == 0
    copy = tmp_path / "copy.db"
    copy.symlink_to(victim)
    create_exclusive(copy)  # the link itself goes, never what it points to
    assert copy.is_file() and not copy.is_symlink() and victim.read_bytes() == b"precious"


@posix_only
def test_open_store_refuses_a_linked_database(tmp_path: Path) -> None:
    from app.store import StoreError, open_store

    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    db = tmp_path / "results.db"
    db.symlink_to(victim)
    with pytest.raises(StoreError, match="symbolic link"):
        open_store(db)
    assert victim.read_bytes() == b"precious"


@posix_only
def test_settings_are_saved_through_the_same_rules(tmp_path: Path) -> None:
    from app import user_settings

    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    path = tmp_path / "settings.json"
    path.symlink_to(victim)
    with pytest.raises(UnsafeOutput):
        user_settings.save(user_settings.UserSettings(fio_path="/x/fio"), path)
    assert victim.read_bytes() == b"precious"
    path.unlink()
    user_settings.save(user_settings.UserSettings(fio_path="/x/fio"), path)
    assert user_settings.load(path).fio_path == "/x/fio"


@posix_only
def test_the_log_is_never_appended_through_a_link_planted_after_the_check(tmp_path: Path) -> None:
    import logging

    from app import diagnostics

    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    handler = diagnostics._file_handler(tmp_path / "logs")  # checked (and created) now, opened at first use
    log_file = Path(handler.baseFilename)
    log_file.unlink()
    log_file.symlink_to(victim)
    old, logging.raiseExceptions = logging.raiseExceptions, False
    try:
        handler.emit(logging.LogRecord("fiometer", logging.INFO, __file__, 1, "hello", None, None))
    finally:
        logging.raiseExceptions = old
        handler.close()
    assert victim.read_bytes() == b"precious"
    log_file.unlink()
    handler = diagnostics._file_handler(tmp_path / "logs")
    handler.emit(logging.LogRecord("fiometer", logging.INFO, __file__, 1, "hello", None, None))
    handler.close()
    assert "hello" in log_file.read_text()


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("NUL", "sink"),
        ("C:\\results\\NUL", "sink"),
        ("CON", "sink"),
        ("\\\\.\\NUL", "sink"),
        ("\\\\.\\pipe\\fiometer-report", "sink"),
        ("nul.txt", "device"),
        ("D:\\out\\com1.csv", "device"),
        ("LPT9.html", "device"),
        ("aux ", "device"),
        ("\\\\.\\PhysicalDrive0", "device"),
        ("//./physicaldrive1", "device"),
        ("\\\\.\\C:", "device"),
        ("\\\\?\\GLOBALROOT\\Device\\Harddisk0\\Partition1", "device"),
        ("C:\\results\\report.pdf", "file"),
        ("C:\\results\\console.txt", "file"),
        ("\\\\?\\C:\\a\\very\\long\\path\\report.csv", "file"),
        ("\\\\?\\UNC\\server\\share\\report.csv", "file"),
        ("\\\\?\\Volume{0b1d}\\runs\\r.xlsx", "file"),
    ],
)
def test_windows_names_are_read_as_the_win32_api_reads_them(name: str, kind: str) -> None:
    """The Windows rule is a rule on names (the API opens NUL, COM1.csv, \\\\.\\X as devices before any
    file system looks), so it is checked here on every OS; tests/windows writes through it for real."""
    said = safe_files._windows_device(name)
    got = "sink" if said == "sink" else "device" if said else "file"
    assert got == kind, said
    if kind == "device":
        assert "Windows device" in said
