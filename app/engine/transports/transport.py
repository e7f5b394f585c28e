"""What a manager's transport yields, whatever carries it (a local fio child or a remote fio server).

A transport runs one fio job file for one manager and yields events until the run is over.
Everything above this interface (telemetry, runner, store, UI) is the same for local and remote.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

FioSide = tuple[float | None, float | None, bool, bool]
"""A server's state apart from its queued events: newest report's arrival (time.monotonic()), fio's clock in it
(s), whether its part is over, whether bytes wait unread on its socket."""


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


# The kinds of per-manager liveness notes (``Message.kind``), set by whoever says them (run.step_watch,
# transports.fioproto.client) and summarised per kind by run.live_notes: never guessed from the wording.
LATE = "late"  # a manager's numbers are late (no report for a while)
ARRIVING_AGAIN = "arriving again"  # ... and came again
SENT_NOTHING = "sent nothing"  # a server silent for a while (busy host, or frozen?), waited for
ANSWERING_AGAIN = "answering again"  # ... and answering again
UNREACHABLE = "unreachable"  # a silent server whose host does not answer either, waited for
BEHIND = "behind"  # reports arrive, but late on fio's own clock
LIVENESS_KINDS = (LATE, ARRIVING_AGAIN, SENT_NOTHING, ANSWERING_AGAIN, UNREACHABLE, BEHIND)


@dataclass
class Message:
    """Text from fio or about the transport, to show to the user. ``kind``: what sort of note it is where
    code acts on that (one of ``LIVENESS_KINDS``, or a load search's line, run.curve_runner.LOAD_SEARCH), None
    for any other message."""

    manager: str
    text: str
    level: str = "info"  # info | warning | error
    kind: str | None = None


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
    """Every transport. The liveness figures are None where the transport has none (a local fio's
    reports come through a pipe, read whole: nothing to count, nothing silent)."""

    name: str

    def start(self, job_text: str, *, status_interval: float = 1.0) -> None:
        """Send/launch the job. Raises TransportError with a plain message if it cannot start."""

    def events(self) -> Iterator[Event]:
        """Blocking iterator of events; ends after exactly one Finished."""

    def stop(self) -> None:
        """Graceful stop: fio ends its jobs and still reports final numbers."""

    def abort(self) -> None:
        """Hard stop: end now, final numbers may be lost."""

    @property
    def bytes_received(self) -> int | None:
        """Report bytes received so far (a slow link still delivering shows as progress); None: not counted."""

    @property
    def last_heard(self) -> float | None:
        """When (time.monotonic()) the manager last sent a byte of any kind; None: not known."""

    @property
    def job_started_at(self) -> float | None:
        """When (time.time()) fio says the job started, where it says so."""

    @property
    def fio_side(self) -> FioSide | None:
        """Where the server is apart from the events still queued (``report_at``, ``fio_clock_s``, ``ended``,
        ``unread``: see step_watch); None where the transport's events are its only word."""

    @property
    def dropped_note(self) -> str | None:
        """What the transport had to drop during the run (e.g. reports past a bound), for the user."""


@runtime_checkable
class Startable(Transport, Protocol):
    """A transport that loads its job first (``start`` returns once fio accepted it) and begins I/O on ``go``:
    a fio server. Managers are loaded in parallel, then all told to go at once (``Runner``)."""

    loaded_at: float | None  # time.monotonic() when fio accepted the job file

    def go(self) -> None:
        """Begin the loaded job (fio's RUN)."""


@runtime_checkable
class TakesDescriptors(Transport, Protocol):
    """A transport whose fio inherits open descriptors (a local fio: its job names them /proc/self/fd/N,
    ``engine.held_targets``), and the disks under them (whose statistics fio cannot find by such a name)."""

    pass_fds: tuple[int, ...]
    disks: tuple[str, ...]


@runtime_checkable
class PushesEvents(Transport, Protocol):
    """A transport whose events already arrive on a thread of its own (a remote manager read in a child
    process): it hands each one, with its manager's name, to ``put`` instead of being iterated by a thread
    of the runner's (one thread per manager woken for every event was a wave of 64 thread switches a
    second at 64 hosts). Events that came before keep their order; it ends after Finished."""

    def push_to(self, put: Callable[[tuple[str, Event]], None]) -> None: ...


class TransportError(Exception):
    """A manager could not be started or reached; str() is a message for the user."""
