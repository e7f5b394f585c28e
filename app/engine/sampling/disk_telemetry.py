"""Disk statistics per interval: fio's cumulative per-disk counters -> one window per report and disk.

fio 3.33 refreshes its disk counters every 250 ms on the same helper thread (and tick) as its status
reports, so each interval report carries the disk's counters up to that report: locally in the JSON
document's ``disk_util``, remotely as one DU message per disk after the report's TS/GS messages. The
final report repeats the last refreshed counters (the helper thread has stopped): such a report gives
no new window.

The window differs by source:

- a ``fio --server`` DU carries the disk's own clock (``msec``) and busy time (``io_ticks``), kept by
  :mod:`app.engine.transports.fioproto.decoder`: windows and utilisation are exact;
- a local fio's JSON has only the utilisation as a cumulative percentage (io_ticks / msec). The clock
  is taken from the report times (fio's ``timestamp_ms``): the disk's first report is counted from the manager's previous
  report in the step (its first: one status interval), which is when fio started counting when its
  jobs start at once (measured: msec = 996 ms at the first 1 s report). Busy time is fio's
  percentage of that clock. ``estimated`` marks these figures.

A manager whose reports carry no disks (fio has no disk statistics on Windows or macOS; a file on tmpfs
or a network file system has no block device; the null engine does no I/O) gets the reason instead,
from the :class:`DiskContext` the runner worked out before the step, or a general one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from app.engine.devices.disks import disk_of
from app.engine.jobs.jobfile import JobInfo
from app.engine.jobs.targets import LINUX, normalize_os
from app.engine.transports.transport import Snapshot
from app.model.disk_metrics import DiskCounts

NO_DISKS_REASON = (
    "fio reported no disk statistics for these targets: fio keeps them on Linux only, for targets "
    "on a block device (not tmpfs or a network file system), and the null engine does no disk I/O"
)


@dataclass(frozen=True)
class DiskSample:
    """One disk of one manager at one report. ``interval`` is the window since the previous report
    (None when fio did not refresh the disk's counters since), ``whole`` the step so far."""

    disk: str
    interval: DiskCounts | None
    whole: DiskCounts
    targets: tuple[tuple[str, str], ...] = ()  # (worker key, target name) on this disk, where known
    estimated: bool = False  # window and busy time from report times (a local fio), not the disk's clock


@dataclass(frozen=True)
class ManagerDisks:
    """The disks of one manager at one report. ``reason`` says why fio reports no disk for the targets in
    ``unwatched`` (all of the manager's when it reports no disk at all and they are not known)."""

    manager: str
    disks: tuple[DiskSample, ...] = ()
    reason: str | None = None
    unwatched: tuple[tuple[str, str], ...] = ()  # (worker key, target name)

    def interval_util(self) -> float | None:
        """The busiest disk's utilisation in this window (what a manager's samples store)."""
        utils = [u for d in self.disks if d.interval is not None and (u := d.interval.util_pct) is not None]
        return max(utils) if utils else None


@dataclass(frozen=True)
class DiskContext:
    """What is known before a step: the targets on each disk (managers on this machine) and the targets
    fio will report no disk for, with the reason."""

    targets: Mapping[str, Mapping[str, tuple[tuple[str, str], ...]]] = field(default_factory=dict)
    reasons: Mapping[str, str] = field(default_factory=dict)
    unwatched: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    no_storage: frozenset[str] = frozenset()  # managers with network workers only: no disk to speak of


def step_disk_context(
    jobs: Iterable[JobInfo], os_names: Mapping[str, str], local: Iterable[str], engine: str | None = None
) -> DiskContext:
    """From a step's jobs: the disk of each target on local Linux managers (the name fio's statistics
    use), and the targets where fio will report none, with the reason."""
    local = set(local)
    by_manager: dict[str, list[JobInfo]] = {}
    for j in jobs:
        by_manager.setdefault(j.manager, []).append(j)
    targets: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {}
    reasons: dict[str, str] = {}
    unwatched: dict[str, tuple[tuple[str, str], ...]] = {}
    seen: dict[str, str | None] = {}  # path -> disk (many jobs can share a target)
    network_only: set[str] = set()
    for mgr, js in by_manager.items():
        storage = [j for j in js if not j.network]
        every = tuple(dict.fromkeys((j.worker_key, j.target_name) for j in storage))
        os_name = os_names.get(mgr, "")
        if not storage:
            network_only.add(mgr)
            continue
        if engine == "null":
            reasons[mgr], unwatched[mgr] = (
                "the null engine does no disk I/O, so fio reports no disk statistics",
                every,
            )
        elif os_name and normalize_os(os_name) != LINUX:
            reasons[mgr], unwatched[mgr] = (
                f"fio keeps disk statistics on Linux only; {mgr} runs {os_name}",
                every,
            )
        elif mgr in local:
            on: dict[str, dict[tuple[str, str], None]] = {}
            off: dict[tuple[str, str], None] = {}
            for j in storage:
                disk = seen[j.path] if j.path in seen else seen.setdefault(j.path, disk_of(j.path))
                if disk:
                    on.setdefault(disk, {})[(j.worker_key, j.target_name)] = None
                else:
                    off[(j.worker_key, j.target_name)] = None
            targets[mgr] = {d: tuple(ts) for d, ts in on.items()}
            if off:
                unwatched[mgr] = tuple(off)
                reasons[mgr] = (
                    "not on a block device fio can watch (e.g. a file on tmpfs), so fio reports no disk "
                    "statistics for it"
                )
    return DiskContext(targets, reasons, unwatched, frozenset(network_only))


class DiskTracker:
    """All managers of one step: cumulative disk reports in, per-report windows out (module doc)."""

    def __init__(self, context: DiskContext | None = None, interval: float = 1.0) -> None:
        self.context = context or DiskContext()
        self._interval_ms = interval * 1000.0
        self._base: dict[
            tuple[str, str], tuple[DiskCounts, DiskCounts, float]
        ] = {}  # whole, counters, fio's util
        self._start: dict[tuple[str, str], float] = {}  # local: when the disk's clock began (report time)
        self._prev_t: dict[str, float] = {}  # each manager's previous report time

    def update(self, snap: Snapshot) -> ManagerDisks:
        mgr = snap.manager
        now = snap.fio_ms / 1000.0 if snap.fio_ms else snap.received  # fio's own clock where it gives one
        prev_t = self._prev_t.get(mgr)
        self._prev_t[mgr] = now
        on = self.context.targets.get(mgr, {})
        out: list[DiskSample] = []
        for entry in snap.disk_util:
            if not isinstance(entry, dict) or "name" not in entry:
                continue
            name = str(entry["name"])
            util = float(entry.get("util") or 0.0)
            exact = "msec" in entry and "io_ticks" in entry
            if exact:
                whole = DiskCounts.from_fio(entry, float(entry["msec"]), float(entry["io_ticks"]))
            else:
                window = self._clock_ms(mgr, name, snap, now, prev_t)
                whole = DiskCounts.from_fio(entry, window, util * window / 100.0)
            counters = DiskCounts.from_fio(entry, 0.0)  # the counters alone, to see whether any moved
            base = self._base.get((mgr, name))
            interval: DiskCounts | None
            if base is None:
                interval = whole
            elif base[0].window_ms >= whole.window_ms or (
                not exact and (base[1], base[2]) == (counters, util)
            ):
                interval = None  # not refreshed since the previous report (fio's final report repeats it)
                whole = base[0]
            else:
                interval = whole.minus(base[0])
            if interval is not None:
                self._base[(mgr, name)] = (whole, counters, util)
            out.append(DiskSample(name, interval, whole, on.get(name, ()), not exact))
        reason = self.context.reasons.get(mgr)
        if not out and reason is None and mgr not in self.context.no_storage:
            reason = NO_DISKS_REASON
        return ManagerDisks(mgr, tuple(out), reason, self.context.unwatched.get(mgr, ()))

    def _clock_ms(self, mgr: str, name: str, snap: Snapshot, now: float, prev_t: float | None) -> float:
        start = self._start.get((mgr, name))
        if start is None:
            first_ms = (now - prev_t) * 1000.0 if prev_t is not None else self._interval_ms
            runtime = max(
                (float(j.get("job_runtime") or 0) for j in snap.jobs if isinstance(j, dict)), default=0.0
            )
            start = self._start[(mgr, name)] = now - max(first_ms, runtime) / 1000.0
        return (now - start) * 1000.0
