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

CANNOT_VERIFY = (
    "Fiometer cannot examine a plain fio --server's files, so any path there can be swapped for a link to "
    "a device or another file before fio opens it (even a test file this run created)"
)


def writes_there(jobs: Iterable[JobInfo], lays_out: bool) -> bool:
    """A step (or the run's set-up) writes on that host: a storage job writes, or a test file is laid out."""
    return lays_out or any(j.writes and not j.network for j in jobs)


def armed(name: str, host: str, allow: set[str]) -> bool:
    """The user armed this manager (by its name, its host:port, or its host alone) for unverified writes."""
    bare = host.rsplit(":", 1)[0].strip("[]") if host.count(":") == 1 or host.startswith("[") else host
    return bool({name, host, bare} & allow)


def refusal(name: str, host: str) -> str:
    """One line: what cannot be verified there, how to arm it, and the verifiable way."""
    bare = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return (
        f"manager {name!r} ({host}) is a plain fio --server and this run writes there: {CANNOT_VERIFY}; "
        f"arm that host with {OPTION} {shell_arg(name)}, or reach it as ssh://{bare}, where Fiometer checks and "
        "opens what fio writes"
    )


def note(name: str, host: str) -> str:
    """The warning for a plain fio server armed for unverified writes."""
    return f"manager {name!r} ({host}): writes armed without verification — {CANNOT_VERIFY}"
