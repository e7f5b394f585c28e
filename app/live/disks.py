"""Live disk statistics for the Results Display (Qt-free): one row per manager and disk.

Fed with the same sample batches as :class:`~app.live.data.LiveResults` (the disks ride on each
manager's sample, :class:`~app.engine.sampling.disk_telemetry.ManagerDisks`). Like the other live numbers, a
point is made every ``update_seconds`` of fio time: LAST_UPDATE joins the disk's windows since the
previous point, WHOLE_TEST is the step so far. A disk shared by several targets is one row per manager.
Targets fio reports no disk for (tmpfs, the null engine, Windows) are one row per manager without a
disk, carrying the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from app.model.disk_metrics import DiskCounts

WHOLE = "WHOLE_TEST"  # the same kinds as live_data's
LAST = "LAST_UPDATE"

RowKey = tuple[str, str | None]  # (manager, disk); disk None: the manager's targets fio reports no disk for


@dataclass
class DiskRow:
    manager: str
    disk: str | None
    targets: tuple[tuple[str, str], ...] = ()  # (worker key, target name); empty where not known (remote)
    latest: dict[str, DiskCounts] = field(default_factory=dict)  # kind -> counts of the latest point
    pending: DiskCounts | None = None  # LAST_UPDATE window being collected
    estimated: bool = False
    reason: str | None = None

    def shows_worker(self, worker: str) -> bool:
        """Whether a worker's view shows this row: a disk of its targets, or a disk (or reason) of its
        manager where the targets on each disk are not known."""
        return not self.targets or any(w == worker for w, _ in self.targets)


class LiveDisks:
    def __init__(self) -> None:
        self.rows: dict[RowKey, DiskRow] = {}
        self.revision = 0
        self._stale: set[RowKey] = set()  # rows of the previous step, dropped as their manager reports

    def clear(self) -> None:
        self.rows.clear()
        self._stale.clear()
        self.revision += 1

    def start_step(self) -> None:
        """A new step runs a new fio: its disks replace the previous step's, manager by manager."""
        self._stale = set(self.rows)
        for row in self.rows.values():
            row.pending = None

    def add(self, samples: Sequence[object], update_seconds: int) -> None:
        """One batch of telemetry samples. The manager's sample is near the end (only ALL follows)."""
        for smp in reversed(samples):
            level = smp.level
            if level == "manager":
                disks = getattr(smp, "disks", None)  # stored samples (History) have none
                if disks is not None:
                    self._manager(disks, smp.final, update_seconds)
            elif level != "all":
                return

    def _manager(self, md: object, final: bool, update_seconds: int) -> None:
        mgr = md.manager
        stale = [k for k in self._stale if k[0] == mgr]
        for k in stale:
            self._stale.discard(k)
            self.rows.pop(k, None)
        if md.reason is not None:  # targets fio reports no disk for: one row, with the reason
            row = self.rows.get((mgr, None))
            if row is None or (row.reason, row.targets) != (md.reason, md.unwatched):
                self.rows[(mgr, None)] = DiskRow(mgr, None, md.unwatched, reason=md.reason)
                self.revision += 1
        elif self.rows.pop((mgr, None), None) is not None:
            self.revision += 1
        for d in md.disks:
            row = self.rows.get((mgr, d.disk))
            if row is None:
                row = self.rows[(mgr, d.disk)] = DiskRow(mgr, d.disk, d.targets, estimated=d.estimated)
            if d.interval is not None:
                row.pending = d.interval if row.pending is None else row.pending.plus(d.interval)
            due = (
                final
                if update_seconds == 0
                else (
                    final
                    or (row.pending is not None and row.pending.window_ms >= update_seconds * 1000 - 100)
                )
            )
            if due:
                if row.pending is not None:
                    row.latest[LAST] = row.pending
                row.latest[WHOLE] = d.whole
                row.pending = None
                self.revision += 1

    def for_scope(self, managers: set[str] | None, worker: tuple[str, str] | None = None) -> list[DiskRow]:
        """Rows of some managers (None: all), or of one (manager, worker key)."""
        out = []
        for (mgr, _disk), row in self.rows.items():
            if worker is not None:
                if mgr == worker[0] and row.shows_worker(worker[1]):
                    out.append(row)
            elif managers is None or mgr in managers:
                out.append(row)
        order = {mgr: i for i, (mgr, _d) in enumerate(self.rows)}
        return sorted(out, key=lambda r: (order[r.manager], r.disk is None, r.disk or ""))
