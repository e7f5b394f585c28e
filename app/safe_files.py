"""Writing Fiometer's own output files without harming anything else.

Every file Fiometer writes (plans, ICF exports, job files, reports, exports, settings, the database)
goes through here, and the same rules hold for all of them, decided on what the name is (``lstat``),
never on its text:

- A regular file or a missing name: the content is written to a fresh temporary file in the same folder
  (created exclusively, so a link planted under the temporary name is never followed), then put in
  place. It only ever *renames over a regular file*; a new name is linked in without replacing anything
  (``link`` fails if something appeared meanwhile, and the name is checked again).
- A symbolic link is never written through (``-o /dev/stdout`` is the one kind of link that is
  followed: to a pipe, a terminal or ``/dev/null``, see below).
- ``/dev/null`` (also ``/dev/zero``, ``/dev/full``), a terminal or a pipe: written to in place, opened
  without creating or truncating anything, and the opened object checked (``fstat``) to be the one that
  was looked at. A pipe nobody reads is refused instead of waiting forever.
- Anything else (a block device, another character device, a socket, a folder) is refused in words.

Qt-free; the only OS-specific module for this concern.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)

# character devices that are safe to write to: /dev/null, /dev/zero, /dev/full (major 1), terminals
_MEMORY_SINKS = {(1, 3), (1, 5), (1, 7)}
_TTY_MAJORS = {4, 5, *range(136, 144)}
# Windows: names the Win32 API opens as devices in any folder ("NUL", "C:\\x\\com1.txt"); NUL and the
# console are sinks, the others (serial and printer ports) are refused. \\.\ names are devices too.
_WINDOWS_SINKS = {"NUL", "CON", "CONOUT$"}
_WINDOWS_DEVICES = {"PRN", "AUX", "CONIN$", *(f"{p}{n}" for p in ("COM", "LPT") for n in range(1, 10))}


class UnsafeOutput(OSError):
    """The output name is something Fiometer will not write to; str() says which, what it is and what
    to do (``filename`` and ``strerror`` too, for handlers that print those)."""

    def __init__(self, path: str | os.PathLike[str], detail: str):
        super().__init__(f"{path}: {detail}")
        self.filename = os.fspath(path)
        self.strerror = detail

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def _is_sink(st: os.stat_result) -> bool:
    """A pipe, a terminal or a memory sink: writing there destroys nothing."""
    if stat.S_ISFIFO(st.st_mode):
        return True
    if stat.S_ISCHR(st.st_mode) and hasattr(os, "major"):  # Windows: NUL and CON are told by name
        major, minor = os.major(st.st_rdev), os.minor(st.st_rdev)
        return (major, minor) in _MEMORY_SINKS or major in _TTY_MAJORS
    return False


def _what(st: os.stat_result) -> str:
    m = st.st_mode
    if stat.S_ISBLK(m):
        return "a block device (a disk)"
    if stat.S_ISCHR(m):
        if not hasattr(os, "major"):
            return "a character device"
        return f"a character device ({os.major(st.st_rdev)}:{os.minor(st.st_rdev)})"
    if stat.S_ISSOCK(m):
        return "a socket"
    if stat.S_ISFIFO(m):
        return "a pipe"
    if stat.S_ISDIR(m):
        return "a folder"
    return "not a regular file"


def _refuse(path: Path, what: str, todo: str) -> UnsafeOutput:
    return UnsafeOutput(path, f"is {what}; Fiometer did not write it. {todo}")


_ONLY = "Fiometer writes its files only as regular files (or to /dev/null, a terminal or a pipe); choose another name."


def _windows_device(name: str) -> str:
    """What a Windows name opens before any file system sees it: "sink" (NUL, the console, a named pipe:
    written in place), a device's description (refused), or "" for a file name. Decided on the name, as
    the Win32 API decides it (a DOS device name is a device in every folder and with any extension)."""
    text = name.replace("/", "\\")
    if text.startswith(("\\\\.\\", "\\\\?\\")):
        rest = text[4:]
        head = rest.split("\\", 1)[0].upper()
        drive = len(head) == 2 and head[1] == ":" or head.startswith("VOLUME{")
        if text[2] == "?" and (head == "UNC" or drive) and rest.rstrip("\\") != rest.split("\\", 1)[0]:
            return ""  # \\?\C:\long\path, \\?\UNC\srv\share\path, \\?\Volume{…}\path: files past 260
        if head == "PIPE" and "\\" in rest or head in _WINDOWS_SINKS:
            return "sink"
        return f"the Windows device {text} (a disk, a volume or a port)"
    last = text.rsplit("\\", 1)[-1].split(":", 1)[-1]
    base = last.split(".", 1)[0].rstrip(" ").upper()
    if base in _WINDOWS_SINKS and last.rstrip(" .").upper() == base:
        return "sink"
    if base in _WINDOWS_SINKS | _WINDOWS_DEVICES:
        # with an extension a device on Windows 10, a file on Windows 11: neither is what a user meant
        return f"the Windows device name {base} (a port or the console in any folder, whatever the extension)"
    return ""


def inspect(path: str | os.PathLike[str]) -> tuple[str, os.stat_result | None]:
    """What the name is now: ("missing", None), ("file", st) or ("sink", st); anything else raises
    UnsafeOutput, with what it is and what to do."""
    p = Path(path)
    if os.name == "nt":
        device = _windows_device(str(path))
        if device == "sink":
            return "sink", None
        if device:
            raise _refuse(p, device, _ONLY)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return "missing", None
    if stat.S_ISREG(st.st_mode):
        return "file", st
    if stat.S_ISLNK(st.st_mode):
        try:
            followed = os.stat(p)
        except OSError:
            followed = None
        if followed is not None and _is_sink(followed):
            return "sink", followed
        target = os.readlink(p)
        if target.startswith(("/proc/self/fd/", "fd/")) or str(p).startswith("/dev/fd/"):
            raise _refuse(
                p,
                f"a symbolic link (to {target}), here to a file",
                "Fiometer writes standard output only to a pipe or a terminal (add `| cat`), "
                "or give the file's own path.",
            )
        raise _refuse(
            p,
            f"a symbolic link (to {target})",
            "Fiometer never writes through a link; give the file's own path, or remove the link.",
        )
    if _is_sink(st):
        return "sink", st
    if stat.S_ISDIR(st.st_mode):
        raise UnsafeOutput(p, "cannot be written: Is a directory; give a file name inside it")
    raise _refuse(p, _what(st), _ONLY)


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _write_sink(path: Path, seen: os.stat_result | None, data: bytes | Iterable[bytes]) -> None:
    chunks = [data] if isinstance(data, bytes) else data
    if seen is None:  # a Windows device name
        with open(path, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
        return
    try:
        fd = os.open(path, os.O_WRONLY | _NOCTTY | _NONBLOCK | _CLOEXEC | _BINARY)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise _refuse(path, "a pipe nobody reads", "Start the reading program first.") from None
        raise
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino, now.st_rdev, stat.S_IFMT(now.st_mode)) != (
            seen.st_dev,
            seen.st_ino,
            seen.st_rdev,
            stat.S_IFMT(seen.st_mode),
        ) or not _is_sink(now):
            raise _refuse(path, "something else than a moment ago", "Nothing was written; try again.")
        if _NONBLOCK:
            import fcntl

            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_NONBLOCK)
        for chunk in chunks:
            _write_all(fd, chunk)
    finally:
        os.close(fd)


def _temp_beside(path: Path, mode: int) -> tuple[int, Path]:
    """A new, empty file of ours in the target's folder (mkstemp creates it exclusively: a link planted
    under its name makes it pick another name, never follow the link)."""
    fd, name = tempfile.mkstemp(
        dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.", suffix=".tmp"
    )
    with contextlib.suppress(OSError, AttributeError):
        os.fchmod(fd, mode)
    return fd, Path(name)


def _put_in_place(tmp: Path, path: Path) -> None:
    """Move our finished temporary file to ``path``: over a regular file only; a missing name is linked
    (never replacing what appeared meanwhile)."""
    for _ in range(3):
        kind, _st = inspect(path)
        if kind == "sink":
            raise _refuse(path, "a device or a pipe now", "Nothing was written; try again.")
        if kind == "file":
            os.replace(tmp, path)
            return
        try:
            os.link(tmp, path)
        except FileExistsError:
            continue  # something appeared under the name: look again
        except OSError:  # no hard links here (FAT, some network shares): a plain rename, just checked
            os.replace(tmp, path)
            return
        os.unlink(tmp)
        return
    raise _refuse(path, "changing under Fiometer's hands", "Nothing was written; try again.")


def write_file(
    path: str | os.PathLike[str], data: bytes | str, encoding: str = "utf-8", newline: str | None = None
) -> Path:
    """Write ``data`` to ``path`` under the rules above; text as ``Path.write_text`` would (``newline``
    None: the platform's line ends). Raises UnsafeOutput (an OSError) with words, or OSError."""
    p = Path(path)
    if isinstance(data, str):
        if newline is None and os.linesep != "\n":
            data = data.replace("\n", os.linesep)
        elif newline:
            data = data.replace("\n", newline)
        data = data.encode(encoding)
    return write_chunks(p, [data])


def write_chunks(path: str | os.PathLike[str], chunks: Iterable[bytes]) -> Path:
    """``write_file`` for content made piece by piece (a long export): each chunk is written as it comes,
    so the whole never sits in memory; the file appears at ``path`` only once every chunk is written."""
    p = Path(path)
    kind, st = inspect(p)
    if kind == "sink":
        _write_sink(p, st, chunks)
        return p
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask()
    fd, tmp = _temp_beside(p, mode)
    try:
        try:
            for chunk in chunks:
                _write_all(fd, chunk)
            os.fsync(fd)
        finally:
            os.close(fd)
        _put_in_place(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return p


@contextlib.contextmanager
def staged(path: str | os.PathLike[str]) -> Iterator[Path]:
    """For a library that insists on writing a named file itself (the PDF and XLSX writers, SQLite's
    backup): it writes the yielded temporary file, which then goes to ``path`` under the rules above
    when the block ends without an exception (and is removed otherwise)."""
    p = Path(path)
    kind, st = inspect(p)
    if kind == "sink":
        fd, name = tempfile.mkstemp(prefix="fiometer-", suffix=".tmp")
        tmp = Path(name)
    else:
        fd, tmp = _temp_beside(p, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask())
    os.close(fd)
    try:
        yield tmp
        if kind == "sink":
            _write_sink(p, st, tmp.read_bytes())
            tmp.unlink()
        else:
            _put_in_place(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def prepare_database(path: str | os.PathLike[str]) -> None:
    """Before SQLite opens ``path`` (it follows links and creates what is missing): the database and its
    journal, WAL and shared-memory companions must be regular files or missing; a missing database is
    created here, exclusively and without following a link."""
    p = Path(path)
    for name in (p, *(p.with_name(p.name + s) for s in ("-journal", "-wal", "-shm"))):
        kind, _st = inspect(name)
        if kind == "sink":
            raise _refuse(
                name, "a device or a pipe", "A results database must be a regular file; choose another."
            )
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666)
    except FileExistsError:
        return
    os.close(fd)


def create_exclusive(path: str | os.PathLike[str]) -> None:
    """A new empty file at ``path``: a regular file or a link already there is removed (a link itself,
    never what it points to), a device or a pipe is refused; never a link followed."""
    p = Path(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        st = None
    if st is not None:
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            raise _refuse(p, _what(st), _ONLY)
        p.unlink()
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666)
    os.close(fd)


def open_append(
    path: str | os.PathLike[str],
    encoding: str = "utf-8",
    errors: str | None = None,
    newline: str | None = None,
):
    """A log file opened for appending (created if missing) without following a link; it must be a
    regular file. Returns a text file object."""
    p = Path(path)
    inspect(p)
    fd = os.open(
        p, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _NOCTTY | _CLOEXEC, 0o666
    )
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(p, _what(st), "A log file must be a regular file.")
        if _NONBLOCK:
            import fcntl

            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_NONBLOCK)
        return os.fdopen(fd, "a", encoding=encoding, errors=errors, newline=newline)
    except BaseException:
        os.close(fd)
        raise


def check_appendable(path: str | os.PathLike[str]) -> None:
    """A log file about to be appended to: opened (created if missing) without following a link, and it
    must be a regular file."""
    open_append(path).close()
