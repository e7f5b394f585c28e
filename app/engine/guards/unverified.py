"""Plain ``fio --server`` managers: writes there are armed per host, because nothing there can be verified.

Fiometer can only send jobs to a plain fio server: it cannot look at the host's files, so any path there
can be replaced by a link to a device (or by another file) between any check through fio and fio's own
open, even a test file this run has just created. A step that writes there (or a test file Fiometer
would lay out there) is refused unless the user armed that host for unverified writes
(``--allow-unverified-writes NAME``, NAME the manager's name or its host; in the window, a checkbox per
manager at Start). Reads stay free. An ``ssh://`` manager is the verifiable way: there Fiometer checks
and opens each target on the host itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.engine.guards.arming_hint import shell_arg
from app.engine.jobs.jobfile import JobInfo

OPTION = "--allow-unverified-writes"

SWAPPED = (
    "any path there can be swapped for a link to a device or another file before fio opens it (even a test "
    "file this run created)"
)
CANNOT_VERIFY = f"Fiometer cannot examine a plain fio --server's files, so {SWAPPED}"


def writes_there(jobs: Iterable[JobInfo], lays_out: bool) -> bool:
    """A step (or the run's set-up) writes on that host: a storage job writes, or a test file is laid out."""
    return lays_out or any(j.writes and not j.network for j in jobs)


def bare_host(host: str) -> str:
    """The host alone: ``ssh://user@h:22``, ``h:8765`` and ``[::1]:8765`` without scheme, user and port."""
    h = host.removeprefix("ssh://").rsplit("@", 1)[-1]
    if h.startswith("["):
        return h[1:].split("]", 1)[0]
    return h.rsplit(":", 1)[0] if h.count(":") == 1 else h


def armed(name: str, host: str, allow: set[str]) -> bool:
    """The user armed this manager (by its name, its host:port, or its host alone) for unverified writes."""
    return bool({name, host, bare_host(host)} & allow)


def _ssh(host: str) -> bool:
    return host.startswith("ssh://")


def refusal(name: str, host: str, why: str = "") -> str:
    """One line: what cannot be verified there, how to arm it, and the verifiable way. ``why``: an ssh://
    manager's reason its checks could not run on its host."""
    arm = f"arm that host with {OPTION} {shell_arg(name)}"
    if _ssh(host):
        return (
            f"manager {name!r} ({host}): Fiometer's checks could not run on that host "
            f"({why or 'they need python3 there'}) and this run writes there: without them Fiometer cannot "
            f"examine that host's files, so {SWAPPED}; {arm}, or let the checks run there (python3 3.9 or "
            "later on a Linux host)"
        )
    return (
        f"manager {name!r} ({host}) is a plain fio --server and this run writes there: {CANNOT_VERIFY}; "
        f"{arm}, or reach it as ssh://{bare_host(host)}, where Fiometer checks and opens what fio writes"
    )


def note(name: str, host: str) -> str:
    """The warning for a host armed for unverified writes (a plain fio server, or an ssh:// host whose
    checks could not run)."""
    if _ssh(host):
        return f"manager {name!r} ({host}): writes armed without verification — Fiometer cannot examine that host's files, so {SWAPPED}"
    return f"manager {name!r} ({host}): writes armed without verification — {CANNOT_VERIFY}"
