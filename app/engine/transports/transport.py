"""What a manager's transport yields, whatever carries it (a local fio child or a remote fio server).

A transport runs one fio job file for one manager and yields events until the run is over.
Everything above this interface (telemetry, runner, store, UI) is the same for local and remote.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class Snapshot:
    """One cumulative statistics report from fio for every job of the run, in fio's JSON job shape.

    ``jobs`` items are fio JSON ``jobs[i]`` objects (jobname, read/write with io_bytes, total_ios,
    runtime, lat_ns{N,mean,max}, clat_ns/lat_ns bins for json+, usr_cpu, sys_cpu, error, total_err).
    Values are cumulative since the job started (reset once when ramp_time ends).
    """

    manager: str
    received: float  # time.monotonic() when it arrived
    jobs: list[dict[str, Any]]
    disk_util: list[dict[str, Any]] = field(default_factory=list)
    final: bool = False  # the last report of the run (fio's end-of-run numbers)
    raw: str | None = None  # the document as fio sent it (kept for the final snapshot)
    fio_ms: float | None = None  # fio's own clock at the report (a local fio's timestamp_ms), where given


@dataclass
class Message:
    """Text from fio or about the transport, to show to the user."""

    manager: str
    text: str
    level: str = "info"  # info | warning | error


@dataclass
class Finished:
    """The run is over for this manager. ``ok`` is False when fio failed, was killed or went silent."""

    manager: str
    ok: bool
    reason: str = ""  # plain words for the user when not ok
    returncode: int | None = None
    stopped: bool = False  # ended by Stop (graceful) rather than by reaching its run time


Event = Snapshot | Message | Finished


class Transport(Protocol):
    name: str

    def start(self, job_text: str, *, status_interval: float = 1.0) -> None:
        """Send/launch the job. Raises TransportError with a plain message if it cannot start."""

    def events(self) -> Iterator[Event]:
        """Blocking iterator of events; ends after exactly one Finished."""

    def stop(self) -> None:
        """Graceful stop: fio ends its jobs and still reports final numbers."""

    def abort(self) -> None:
        """Hard stop: end now, final numbers may be lost."""


class TransportError(Exception):
    """A manager could not be started or reached; str() is a message for the user."""
