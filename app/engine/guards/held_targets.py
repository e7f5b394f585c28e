"""What fio opens is what was checked: Fiometer opens each local target itself and fio gets that very object.

At the start of every step (Linux, local manager, a real ioengine) each target is placed again
(``placement.place_local``: links followed, file type, device numbers, what uses it) and must still be the
object the run was checked and armed for. Fiometer then opens it without following a link at its last
component (``O_NOFOLLOW``; a new test file with ``O_CREAT|O_EXCL``, which refuses a planted link), compares
the open object (``fstat``: file type, device and inode, or device number) with what was decided, and
writes ``filename=/proc/self/fd/N`` into the job: fio inherits descriptor N and opens the object behind it,
whatever the path names by then. A renamed, replaced or re-linked path cannot redirect fio any more.

A block device written without the second override is opened with ``O_EXCL``: the kernel refuses it
(``EBUSY``) while the device is mounted in any mount namespace, an active swap area, or held by
device-mapper, md, btrfs or a loop device; and while Fiometer holds it, nobody can mount it.

fio lays a test file out again by deleting and recreating its name, which a descriptor cannot do (fio
would fail with "unlink: Operation not permitted"); so Fiometer lays new or too small test files out
itself, after checking the file system has room for them (``layout``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.engine.devices import linux_devices
from app.engine.devices.linux_devices import ObjectId
from app.engine.jobs.placement import Placement, PlacementError, object_id, place_local
from app.engine.jobs.targets import fio_filename

if TYPE_CHECKING:  # not imported at run time: this module also runs on ssh:// hosts (remote.hold)
    from app.engine.jobs.jobfile import JobFile, JobInfo

CHUNK = 1 << 20
EBUSY_WORDS = (
    "the kernel refuses to open it exclusively (EBUSY): it is mounted (perhaps only in another mount "
    "namespace), an active swap area, or held by device-mapper, md, btrfs or a loop device"
)


class HoldRefused(Exception):
    """A target is not (any more) what was checked or armed, or cannot be laid out; str() says which and what
    to do. Nothing was written."""


@dataclass
class Arming:
    """What the user armed, by object: path -> the object armed for writing; paths armed twice (in use)."""

    objects: dict[str, ObjectId | None] = field(default_factory=dict)
    in_use: set[str] = field(default_factory=set)


@dataclass
class Held:
    """The descriptors of one manager's targets for one step, and the job text that names them."""

    text: str
    fds: dict[str, int] = field(default_factory=dict)  # path -> descriptor fio inherits
    files: dict[str, int] = field(default_factory=dict)  # Fiometer's test files among them (adopted after)
    laid_out: list[str] = field(default_factory=list)
    writing: set[str] = field(default_factory=set)  # paths checked and opened for writing

    def close(self) -> None:
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()
        self.files.clear()


Owns = Callable[[str, os.stat_result, int], bool]  # (path, fstat of the open file, its descriptor)


def fio_name(fd: int) -> str:
    return f"/proc/self/fd/{fd}"


def hold(
    jf: JobFile,
    arming: Arming,
    owns: Owns,
    *,
    cancelled: Callable[[], bool] = lambda: False,
    say: Callable[[str], None] = lambda text: None,
    others: list[Held] | None = None,
) -> Held:
    """Open, verify and (for test files) lay out every target of ``jf``; the returned job text gives fio
    the descriptors. ``others``: what other local managers of the step already hold (a target they share
    is not opened again — a written device is held exclusively — but shared through a duplicate).
    Raises HoldRefused (nothing held, nothing written, a file created here removed)."""
    held = Held(jf.text)
    shared = {
        path: (fd, path in h.files, path in h.writing) for h in others or [] for path, fd in h.fds.items()
    }
    by_path: dict[str, list[JobInfo]] = {}
    for job in jf.jobs:
        if not job.network and job.placement is not None and job.placement.verified:
            by_path.setdefault(job.path, []).append(job)
    created: list[tuple[str, int]] = []
    backings = linux_devices.loop_backings() if by_path else []  # once per step, for every target
    try:
        for path, jobs in by_path.items():
            writes = any(j.writes for j in jobs)
            if path in shared and (
                shared[path][2] or not writes
            ):  # checked (and opened) for this use already
                fd, own, made = os.dup(shared[path][0]), shared[path][1], False
            else:
                fd, own, made = _open_checked(path, jobs, arming, owns, backings)
                if not jobs[0].is_device:
                    _lock(fd, path, made)
            held.fds[path] = fd
            if writes:
                held.writing.add(path)
            if made:
                created.append((path, fd))
            if own or made:
                held.files[path] = fd
            need = max(j.offset + (j.size or 0) for j in jobs)
            if not jobs[0].is_device and os.fstat(fd).st_size < need:
                say(f"laying out the test file {path} ({_size(need)})")
                layout(path, fd, need, cancelled)
                held.laid_out.append(path)
            held.text = _name_in_text(held.text, path, fd, len(jobs))
    except BaseException:
        for path, fd in created:
            _remove_created(path, fd)
        held.close()
        raise
    return held


def _open_checked(
    path: str, jobs: list[JobInfo], arming: Arming, owns: Owns, backings: list[tuple[str, ObjectId]]
) -> tuple[int, bool, bool]:
    """(descriptor, Fiometer's own file, created now) for one target; raises HoldRefused."""
    writes = any(j.writes for j in jobs)
    where = f"target {jobs[0].target_name!r} ({path})"
    again = "; nothing was written. Start the run again to have it checked (and asked) anew"
    now = _placed_as_checked(path, jobs, writes, arming, backings, where, again)
    if now.is_device:
        return _open_device(path, now, writes, arming, where, again), False, False
    if not now.exists:
        return _create_test_file(path, where, again), False, True
    need = max(j.offset + (j.size or 0) for j in jobs)
    return (*_open_test_file(path, now, writes, need, arming, owns, where, again), False)


def _placed_as_checked(
    path: str,
    jobs: list[JobInfo],
    writes: bool,
    arming: Arming,
    backings: list[tuple[str, ObjectId]],
    where: str,
    again: str,
) -> Placement:
    """The target placed again now; raises HoldRefused unless it is still what was checked (and armed)."""
    checked = jobs[0].placement
    assert checked is not None
    try:
        now = place_local(path, jobs[0].is_device, backings=backings)
    except PlacementError as e:
        raise HoldRefused(f"{where}: {e}{again}") from e
    if now.path != path:
        raise HoldRefused(f"{where} now leads to {now.path}{again}")
    if now.is_device != checked.is_device or (checked.exists and now.obj != checked.obj):
        raise HoldRefused(
            f"{where} changed since it was checked: it was {_what(checked.obj)}, it is now "
            f"{_what(now.obj)}{again}"
        )
    if now.backing != checked.backing:  # a loop device bound again, to another file or device
        raise HoldRefused(
            f"{where} changed since it was checked: it was a loop device over {_over(checked.backing)}, it "
            f"is now over {_over(now.backing)}{again}"
        )
    need = max(j.offset + (j.size or 0) for j in jobs)
    lays_out = not now.is_device and now.exists and (now.size or 0) < need  # a layout writes it too
    if (writes or lays_out) and now.in_use and path not in arming.in_use:
        raise HoldRefused(f"{where} is in use now ({'; '.join(now.in_use)}){again}")
    return now


def _open_device(path: str, now: Placement, writes: bool, arming: Arming, where: str, again: str) -> int:
    """A device, opened exclusively when written (unless armed while in use) and verified to be the one placed."""
    if writes and arming.objects.get(path) != now.obj:
        raise HoldRefused(f"{where}: {_what(now.obj)} was not armed for writing{again}")
    flags = (os.O_RDWR if writes else os.O_RDONLY) | os.O_NOFOLLOW | os.O_CLOEXEC
    if writes and path not in arming.in_use:
        flags |= os.O_EXCL
    try:
        fd = os.open(path, flags)
    except OSError as e:
        words = f"{where}: {EBUSY_WORDS}" if e.errno == errno.EBUSY else _open_failed(where, path, e)
        raise HoldRefused(words + again) from e
    try:
        _verify(fd, now.obj, where, again)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _create_test_file(path: str, where: str, again: str) -> int:
    """A new test file, created here (never one that appeared meanwhile)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise HoldRefused(f"{where}: Fiometer cannot create the test file ({e.strerror}){again}") from e
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:  # pragma: no cover - O_EXCL makes a new file
        os.close(fd)
        raise HoldRefused(f"{where}: the new test file is not a plain file{again}")
    return fd


def _open_test_file(
    path: str, now: Placement, writes: bool, need: int, arming: Arming, owns: Owns, where: str, again: str
) -> tuple[int, bool]:
    """(descriptor, Fiometer's own file) of an existing test file: written (or laid out to ``need`` bytes)
    only if Fiometer left it there or the user armed it."""
    try:
        fd = os.open(
            path,
            (os.O_RDWR if writes or (now.size or 0) < need else os.O_RDONLY) | os.O_NOFOLLOW | os.O_CLOEXEC,
        )
    except OSError as e:
        raise HoldRefused(_open_failed(where, path, e) + again) from e
    try:
        st = _verify(fd, now.obj, where, again)
        swap = linux_devices.swap_files().get((st.st_dev, st.st_ino)) if writes else None
        if swap is not None:
            raise HoldRefused(
                f"{where}: {path} is an active swap file (swapon, listed in /proc/swaps as {swap}); the "
                f"kernel refuses writes to it, and your system pages to it: run `swapoff {swap}` first, "
                f"or choose another test file{again}"
            )
        own = owns(path, st, fd)
        if (writes or st.st_size < need) and not own and arming.objects.get(path) != now.obj:
            raise HoldRefused(
                f"{where}: the file exists and is not the one Fiometer left there or the one you "
                f"armed (it changed since: size, times or marker){again}"
            )
    except BaseException:
        os.close(fd)
        raise
    return fd, own


def _lock(fd: int, path: str, made: bool) -> None:
    """Hold a test file for this run alone (an exclusive flock, released with the descriptor): a second run
    started on the same file (another Fiometer, or a second window) would mix its I/O into this one's."""
    import fcntl  # POSIX: held targets are (Windows has none); the runner imports this module everywhere

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        if made:
            _remove_created(path, fd)
        os.close(fd)
        if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise HoldRefused(f"{path}: Fiometer could not lock its test file ({e.strerror})") from e
        raise HoldRefused(
            f"{path} is in use by another run now (another Fiometer on this machine holds it); their "
            "results would mix: wait for that run to end, or give this one its own test file"
        ) from e


def _open_failed(where: str, path: str, e: OSError) -> str:
    if e.errno == errno.ELOOP:
        return f"{where} became a symbolic link while Fiometer opened it"
    return f"{where}: cannot open target {path}: {e.strerror}"


def _verify(fd: int, obj: ObjectId | None, where: str, again: str) -> os.stat_result:
    st = os.fstat(fd)
    if object_id(st) != obj:
        raise HoldRefused(
            f"{where}: what Fiometer opened is {_what(object_id(st))}, not the {_what(obj)} it checked{again}"
        )
    return st


def device_words(dev: int) -> str:
    """A file's ``st_dev`` as a user reads it: "device 8:1" on POSIX, "volume 0x1a2b3c4d" on Windows (there it is
    the volume's serial number, and ``os`` has no ``major``)."""
    if hasattr(os, "major"):
        return f"device {os.major(dev)}:{os.minor(dev)}"
    return f"volume {dev:#x}"


def _what(obj: ObjectId | None) -> str:
    if obj is None:
        return "nothing (no file yet)"
    kind, a, b = obj
    if kind == "file":
        return f"a file ({device_words(a)}, inode {b})"
    return f"a {kind} device {a}:{b}"


def _over(backing: ObjectId | None) -> str:
    if backing is None:
        return "nothing (not bound)"
    return "an object Fiometer cannot read" if backing[0] == "unknown" else _what(backing)


describe_object = _what  # "a file (device 8:1, inode 12)", "a block device 7:3"


def _name_in_text(text: str, path: str, fd: int, jobs: int) -> str:
    """Point every ``filename=`` line of ``path`` at the descriptor."""
    line = f"filename={fio_filename(path)}"
    lines = text.split("\n")
    hits = [i for i, s in enumerate(lines) if s == line]
    if len(hits) != jobs:  # pragma: no cover - the job text is Fiometer's own
        raise HoldRefused(f"internal: {len(hits)} filename lines for {path}, {jobs} jobs")
    for i in hits:
        lines[i] = f"filename={fio_name(fd)}"
    return "\n".join(lines)


def free_bytes(fd: int) -> int:
    st = os.fstatvfs(fd)
    return st.f_bavail * st.f_frsize


def layout(path: str, fd: int, need: int, cancelled: Callable[[], bool] = lambda: False) -> None:
    """Write the test file out to ``need`` bytes, as fio would (from empty, one random buffer repeated),
    after checking the file system has room. Raises HoldRefused."""
    st = os.fstat(fd)
    room = free_bytes(fd) + st.st_blocks * 512  # what truncating it frees counts
    if need > room:
        raise HoldRefused(
            f"the test file {path} needs {_size(need)} but its file system has {_size(room)} free"
            f"{' (counting the file itself)' if st.st_blocks else ''}; make the test file "
            "smaller (the worker's maximum disk size, or --file-size), free space there, or place "
            "the test file on another file system. Nothing was written"
        )
    block = os.urandom(min(CHUNK, need) or 1)
    try:
        os.ftruncate(fd, 0)
        done = 0
        while done < need:
            if cancelled():
                raise HoldRefused(f"the layout of {path} was stopped")
            done += os.pwrite(fd, block[: need - done], done)
        os.fsync(fd)
    except OSError as e:
        raise HoldRefused(
            f"laying out the test file {path} ({_size(need)}) failed: {e.strerror}; free space "
            "there or make the test file smaller"
        ) from e


def _remove_created(path: str, fd: int) -> None:
    """Remove a test file created by this step, only while its name still leads to it."""
    with contextlib.suppress(OSError):
        st, mine = os.lstat(path), os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino):
            os.unlink(path)


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit} ({n} bytes)"
    return f"{n} bytes"
