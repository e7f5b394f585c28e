"""A device's purge before a PTS run: guarded and explicit, its method and outcome kept with the run.

Only a raw block device that is armed for writes (``--allow-write``) and that nothing uses (not mounted,
partitioned, swap, held by LVM/md/dm, the backing of a loop device, or of unknown use) is ever purged; a file,
a file system or a device in use is refused, whatever the arming (a purge is not a benchmark write: the
second override, ``--allow-write-mounted``, does not arm it). Methods are what the host can do: ``blkdiscard``
(discard every block), ``blkdiscard-secure`` (the secure discard, where the device has one), or ``none``,
recorded as "none: not purged"."""

from __future__ import annotations

import logging
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from app.engine.jobs.placement import PlacementError, place_local

log = logging.getLogger(__name__)

NONE, BLKDISCARD, BLKDISCARD_SECURE = "none", "blkdiscard", "blkdiscard-secure"
METHODS = (NONE, BLKDISCARD, BLKDISCARD_SECURE)
COMMANDS = {BLKDISCARD: ["blkdiscard"], BLKDISCARD_SECURE: ["blkdiscard", "--secure"]}
DONE, NOT_PURGED, FAILED = "purged", "none: not purged", "failed"
TIMEOUT_S = 6 * 3600.0  # a secure erase of a large device takes long; a hung one is ended


class PurgeRefused(Exception):
    """The purge may not run on this target; str() says why and what to do."""


@dataclass(frozen=True)
class PurgeResult:
    method: str
    outcome: str  # purged | none: not purged | failed
    detail: str = ""  # the command's own words on failure
    command: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.outcome != FAILED

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def sentence(self) -> str:
        if self.method == NONE:
            return "Purge: none: not purged (the device was not purged before the test)"
        took = f" in {self.seconds:.1f} s" if self.seconds else ""
        detail = f": {self.detail}" if self.detail else ""
        return f"Purge: {self.command} {self.outcome}{took}{detail}"


def check_purge(path: str, method: str, armed: set[str]) -> None:
    """Raise PurgeRefused unless ``method`` may run on ``path`` (see the module's rule). ``armed``: the names
    and paths armed for writes."""
    if method not in METHODS:
        raise PurgeRefused(f"--purge {method!r}: choose one of {', '.join(METHODS)}")
    if method == NONE:
        return
    try:
        placed = place_local(path, name_says_device=True)
    except PlacementError as e:
        raise PurgeRefused(f"cannot purge {path}: {e}") from e
    if not placed.is_device:
        raise PurgeRefused(
            f"cannot purge {path}: it is not a raw block device (a purge is never run on a file or a file "
            "system); give the device itself, or --purge none"
        )
    if placed.in_use:
        raise PurgeRefused(
            f"cannot purge {placed.path}: it is in use ({'; '.join(placed.in_use)}); a purge is never run on a "
            "device in use, armed or not. Unmount or release it, or give --purge none"
        )
    if not (placed.names() & armed):
        raise PurgeRefused(
            f"cannot purge {placed.path}: it is not armed for writes; a purge destroys every byte on it. "
            f"Arm it with --allow-write {placed.path}"
        )
    if shutil.which(COMMANDS[method][0]) is None:
        raise PurgeRefused(f"cannot purge with {method}: {COMMANDS[method][0]} is not installed on this host")


def purge(
    path: str, method: str, run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run
) -> PurgeResult:
    """Run the purge (check_purge first). A failed command is a result, not an exception."""
    if method == NONE:
        return PurgeResult(NONE, NOT_PURGED)
    argv = [*COMMANDS[method], path]
    command = " ".join(argv)
    began = time.monotonic()
    try:
        done = run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        log.warning("purge %s failed: %s", command, e)
        return PurgeResult(method, FAILED, str(e), command, time.monotonic() - began)
    took = time.monotonic() - began
    if done.returncode != 0:
        words = (done.stderr or done.stdout or "").strip().splitlines()
        detail = words[-1] if words else f"exit code {done.returncode}"
        log.warning("purge %s failed (exit %d): %s", command, done.returncode, detail)
        return PurgeResult(method, FAILED, detail, command, took)
    log.info("purge %s done in %.1f s", command, took)
    return PurgeResult(method, DONE, "", command, took)
