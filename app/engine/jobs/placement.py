"""The object fio will open for a target, found before anything runs, and what is known about it.

A target's path (``targets.resolve``) is only a spelling. On the machine running Fiometer the path is
made absolute (fio runs in its own working folder), every symlink is followed component by component,
and the object at the end is examined: block or character device (by file type, wherever the node
lives; then identified by its device number), regular file (size, identity, modification time), a
folder (refused) or nothing yet (its folder must exist: fio would create missing folders silently).
Paths through ``/proc`` are refused: there ``self``, ``fd/N`` and ``root`` name different objects in
fio's process. The real path is what goes into the job, so fio opens exactly what was examined.

On a remote manager nothing can be examined: the path is normalised by text alone, anything that could
be a device is one, and ``note`` says what could not be verified.
"""

from __future__ import annotations

import os
import platform
import posixpath
import stat
from collections.abc import Callable
from dataclasses import dataclass

from app.engine.devices import linux_devices, sector_sizes
from app.engine.jobs import geometry, windows_paths
from app.engine.jobs.targets import WINDOWS, TargetError, fio_path_problem, is_device_path, normalize_os

MAX_LINKS = 40  # as the kernel's ELOOP limit
_PROC_ROOTS = ("/proc", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr")


@dataclass(frozen=True)
class Placement:
    spelled: str  # as the plan or the mapping wrote it
    path: str  # what goes into filename=: absolute, normalised, links followed where they can be seen
    is_device: bool
    verified: bool  # False on remote managers: exists/size/identity/in_use below are unknown
    exists: bool = False
    size: int | None = None  # bytes of an existing regular file
    identity: tuple[int, int] | None = None  # (st_dev, st_ino) of an existing regular file
    mtime_ns: int | None = None
    ctime_ns: int | None = None  # an in-place rewrite cannot keep it (see safety.CreatedFiles)
    obj: tuple[str, int, int] | None = None  # what the object is: see object_id()
    in_use: tuple[str, ...] = ()  # of a device: "mounted at /data", "held by dm-0", ... (unknown counts)
    missing_folder: str | None = None  # the folder a new test file would need, when it does not exist
    note: str = ""  # what could not be verified
    host: str = ""  # where it was examined, when not on this machine (an ssh:// manager's host)
    marker: str | None = None  # Fiometer's marker on that host's file, as read there (``host`` set)
    sector: int | None = None  # Iometer's geometry of the object (``jobs.geometry``), None: not examined
    align: int | None = None
    geometry_source: str = ""
    backing: tuple[str, int, int] | None = None  # of a loop device (or a partition of one): what it writes to

    def names(self) -> set[str]:
        return {self.spelled, self.path}

    def geometry(self) -> geometry.Geometry | None:
        """Iometer's sector and "align 0" boundary of the object examined (None: nothing was examined)."""
        if self.sector is None or self.align is None:
            return None
        return geometry.Geometry(self.sector, self.align, self.geometry_source)


def _geometry_fields(g: geometry.Geometry) -> dict[str, object]:
    return {"sector": g.sector, "align": g.align, "geometry_source": g.source}


def _file_geometry(path: str, st_dev: int | None) -> dict[str, object]:
    """A (new or existing) test file's geometry on this machine: its file system's block, the logical
    sector of the device under that file system."""
    disk = sector_sizes.logical_sector((os.major(st_dev), os.minor(st_dev))) if st_dev is not None else None
    return _geometry_fields(
        geometry.of_file(normalize_os(platform.system()), sector_sizes.fs_block(path), disk)
    )


def object_id(st: os.stat_result) -> linux_devices.ObjectId | None:
    """The object a stat describes, independent of its name: ("block"|"char", major, minor) for a device,
    ("file", st_dev, st_ino) for a regular file, None for anything else."""
    if stat.S_ISBLK(st.st_mode) or stat.S_ISCHR(st.st_mode):
        return ("block" if stat.S_ISBLK(st.st_mode) else "char", os.major(st.st_rdev), os.minor(st.st_rdev))
    if stat.S_ISREG(st.st_mode):
        return ("file", st.st_dev, st.st_ino)
    return None


class PlacementError(TargetError):
    """The path cannot be used as a target; str() says why."""


def _via_proc(path: str) -> bool:
    return any(path == r or path.startswith(r + "/") for r in _PROC_ROOTS)


def follow(path: str) -> tuple[str, bool]:
    """(the path with every symlink followed, whether any step went through /proc).

    Like realpath, but '..' is applied after the link before it is followed, the kernel's way, and
    a missing component ends the following (the rest is joined as written)."""
    todo = [p for p in reversed(path.split("/")) if p]
    done, via_proc, links = "/", False, 0
    while todo:
        part = todo.pop()
        if part == ".":
            continue
        if part == "..":
            done = posixpath.dirname(done)
            continue
        nxt = posixpath.join(done, part)
        via_proc = via_proc or _via_proc(nxt)
        try:
            st = os.lstat(nxt)
        except OSError:  # nothing below a missing folder can be a link: the rest is plain text
            rest = posixpath.normpath(posixpath.join(nxt, *reversed(todo)))
            return rest, via_proc or _via_proc(rest)
        if stat.S_ISLNK(st.st_mode):
            links += 1
            if links > MAX_LINKS:
                raise PlacementError(f"{path!r}: too many symbolic links")
            target = os.readlink(nxt)
            if target.startswith("/"):
                done = "/"
            todo.extend(p for p in reversed(target.split("/")) if p)
            continue
        done = nxt
    return done, via_proc


def _check_text(spelled: str, path: str) -> None:
    problem = fio_path_problem(path)
    if problem:
        shown = f"{spelled!r} leads to {path!r}" if path != spelled else repr(path)
        raise PlacementError(f"{shown}: {problem}")


def place_local(
    spelled: str,
    name_says_device: bool = False,
    *,
    cwd: str | None = None,
    device_uses: Callable[[tuple[int, int]], list[str]] | None = None,
    backings: list[tuple[str, linux_devices.ObjectId]] | None = None,
) -> Placement:
    """Examine the target on this machine (POSIX). Raises PlacementError for unusable paths. ``backings``:
    the loop devices' backing objects when the caller already read them (``linux_devices.loop_backings``)."""
    if device_uses is None:

        def device_uses(dev: tuple[int, int]) -> list[str]:
            return linux_devices.device_uses(dev, backings=backings)

    if os.name == "nt":  # pragma: no cover - exercised on Windows only
        return _place_local_windows(spelled, cwd)
    absolute = spelled if spelled.startswith("/") else posixpath.join(cwd or os.getcwd(), spelled)
    real, via_proc = follow(absolute)
    if via_proc or _via_proc(real):
        raise PlacementError(
            f"{spelled!r} goes through /proc, where 'self', 'fd/N' and 'root' name other "
            "objects in fio's process than in Fiometer's; give the device or file itself"
        )
    _check_text(spelled, real)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        if real.startswith("/dev/") or name_says_device:
            raise PlacementError(
                f"{spelled!r}: {real} does not exist; fio would create a plain file in its "
                "place (check the device name)"
            ) from None
        folder = posixpath.dirname(real)
        if os.path.isdir(folder):
            return Placement(
                spelled,
                real,
                False,
                True,
                **_file_geometry(folder, os.stat(folder).st_dev),  # type: ignore[arg-type]
            )
        if os.path.lexists(folder):
            raise PlacementError(f"{spelled!r}: {folder} is not a folder") from None
        return Placement(spelled, real, False, True, missing_folder=folder)
    except NotADirectoryError:
        raise PlacementError(f"{spelled!r}: a part of {real} is a file, not a folder") from None
    except OSError as e:
        raise PlacementError(f"{spelled!r}: Fiometer cannot examine {real} ({e.strerror})") from e
    mode = st.st_mode
    if stat.S_ISBLK(mode):
        dev = (os.major(st.st_rdev), os.minor(st.st_rdev))
        uses = (
            device_uses(dev)
            if platform.system() == "Linux"
            else [f"Fiometer cannot tell what uses devices on {platform.system()}"]
        )
        sector = sector_sizes.logical_sector(dev)
        return Placement(
            spelled,
            real,
            True,
            True,
            exists=True,
            in_use=tuple(uses),
            obj=object_id(st),
            backing=linux_devices.loop_backing(dev, backings) if platform.system() == "Linux" else None,
            **_geometry_fields(geometry.of_device(sector)),  # type: ignore[arg-type]
        )
    if stat.S_ISCHR(mode):
        return Placement(
            spelled,
            real,
            True,
            True,
            exists=True,
            obj=object_id(st),
            in_use=("a character device: Fiometer cannot tell what uses it",),
            **_geometry_fields(geometry.of_device(None)),  # type: ignore[arg-type]
        )
    if stat.S_ISDIR(mode):
        raise PlacementError(
            f"{spelled!r}: {real} is a folder; give a test file inside it, e.g. "
            f"{posixpath.join(real, 'iobw.tst')}"
        )
    if not stat.S_ISREG(mode):
        raise PlacementError(f"{spelled!r}: {real} is neither a file nor a device (a pipe or socket)")
    uses = linux_devices.file_uses(st, backings) if platform.system() == "Linux" else []
    return Placement(
        spelled,
        real,
        False,
        True,
        exists=True,
        size=st.st_size,
        identity=(st.st_dev, st.st_ino),
        mtime_ns=st.st_mtime_ns,
        ctime_ns=st.st_ctime_ns,
        obj=object_id(st),
        in_use=tuple(uses),
        **_file_geometry(real, st.st_dev),  # type: ignore[arg-type]
    )


def _place_local_windows(
    spelled: str, cwd: str | None = None
) -> Placement:  # pragma: no cover - Windows only
    if windows_paths.is_device(spelled):
        return Placement(
            spelled,
            windows_paths.normalise(spelled),
            True,
            True,
            exists=True,
            note="Windows blocks writes to mounted volumes itself; Fiometer cannot list them here",
        )
    whole = os.path.join(cwd or os.getcwd(), spelled)
    problem = windows_paths.ansi_problem(whole)
    if problem:  # before realpath, which fails on a path too long for Windows (WinError 234)
        raise PlacementError(f"{spelled!r}: {problem}")
    try:
        path = os.path.realpath(windows_paths.normalise(os.path.abspath(whole)))
    except (ValueError, OSError) as e:
        raise PlacementError(f"{spelled!r}: Fiometer cannot resolve this path on Windows ({e})") from e
    _check_text(spelled, path)
    problem = windows_paths.ansi_problem(path)
    if problem:
        raise PlacementError(f"{spelled!r} leads to {path!r}: {problem}")
    if os.path.isdir(path):
        raise PlacementError(f"{spelled!r}: {path} is a folder; give a test file inside it")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        folder = os.path.dirname(path)
        return Placement(
            spelled,
            path,
            False,
            True,
            missing_folder=None if os.path.isdir(folder) else folder,
            **_windows_file_geometry(path),  # type: ignore[arg-type]
        )
    except OSError as e:
        raise PlacementError(f"{spelled!r}: Fiometer cannot examine {path} ({e.strerror})") from e
    return Placement(
        spelled,
        path,
        False,
        True,
        exists=True,
        size=st.st_size,
        identity=(st.st_dev, st.st_ino),
        mtime_ns=st.st_mtime_ns,
        ctime_ns=st.st_ctime_ns,
        obj=object_id(st),
        **_windows_file_geometry(path),  # type: ignore[arg-type]
    )


def _windows_file_geometry(path: str) -> dict[str, object]:  # pragma: no cover - Windows only
    return _geometry_fields(geometry.of_file(WINDOWS, None, sector_sizes.windows_bytes_per_sector(path)))


def place_remote(
    spelled: str, name_says_device: bool, os_name: str, manager: str = "", checked_there: bool = False
) -> Placement:
    """Normalise by text alone for a manager Fiometer cannot look at from here. ``checked_there``: an
    ``ssh://`` manager, whose targets are examined on its host (``remote.hold``). Raises
    PlacementError."""
    where = f"manager {manager!r}" if manager else "a remote manager"
    if normalize_os(os_name) == WINDOWS:
        try:
            path = windows_paths.normalise(spelled)
        except ValueError as e:
            raise PlacementError(f"{spelled!r} on {where}: {e}") from e
        device = name_says_device or windows_paths.is_device(path)
    else:
        if not spelled.startswith("/"):
            raise PlacementError(
                f"{spelled!r} on {where}: not an absolute path; the fio server's working "
                "folder is unknown, so give the full path"
            )
        parts = [p for p in spelled.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise PlacementError(
                f"{spelled!r} on {where}: contains '..', which Fiometer cannot resolve "
                "without looking at that machine (a link may sit before it)"
            )
        path = "/" + "/".join(parts)
        if _via_proc(path):
            raise PlacementError(
                f"{spelled!r} on {where}: goes through /proc or /dev/fd, where names "
                "depend on the process; give the device or file itself"
            )
        device = name_says_device or path.startswith("/dev/")
    _check_text(spelled, path)
    return Placement(
        spelled, path, device, False, note="" if checked_there else plain_note(where, path, device)
    )


def plain_note(where: str, path: str, device: bool) -> str:
    """What a plain fio server leaves unverified about one target, in one line (``guards.unverified``)."""
    what = (
        "whether it is mounted or in use (only fio's own mount check applies)"
        if device
        else "whether it is a link to a device, and whether it is swapped for another object before fio "
        "opens it (only Fiometer's marker, read through fio, is checked)"
    )
    return (
        f"{where} is a plain fio --server: Fiometer cannot verify {path} there: {what}; reach the host as "
        "ssh:// to have it checked"
    )


def placer(
    local: bool, os_name: str, manager: str = "", checked_there: bool = False
) -> Callable[[str], Placement]:
    """The placement rule for one manager: examine locally, or normalise for a remote machine."""
    if local:
        return lambda path: place_local(path, is_device_path(path))
    return lambda path: place_remote(path, is_device_path(path), os_name, manager, checked_there)
