"""One disk's counters over a window, and the figures iostat computes from them.

fio reports, per disk, the kernel's cumulative counters since its jobs started (``disk_util`` in its
JSON, the DU message of its server protocol). The difference of two reports, or one report on its
own (the whole step so far), is a :class:`DiskCounts`; windows of one disk add up (:meth:`plus`).

iostat's arithmetic, here and nowhere else:

- ``%util`` = time the disk was busy (io_ticks) / the window;
- ``aqu-sz`` (average queue size) = time requests spent in the queue, summed (in_queue) / the window;
- ``await`` = (read ticks + write ticks) / (reads + writes) in ms; ``r_await``/``w_await`` per direction;
- r/s, w/s = the I/Os the disk completed / the window (the device's IOPS, after merging).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class DiskCounts:
    """Counters of one disk over ``window_ms``. ``busy_ms`` is fio's io_ticks; it is ``None`` where only
    fio's own utilisation is known (a step total read from stored output)."""

    window_ms: float
    read_ios: float = 0.0
    write_ios: float = 0.0
    read_merges: float = 0.0
    write_merges: float = 0.0
    read_ticks: float = 0.0
    write_ticks: float = 0.0
    in_queue: float = 0.0
    busy_ms: float | None = None

    @staticmethod
    def from_fio(entry: dict[str, Any], window_ms: float, busy_ms: float | None = None) -> DiskCounts:
        """One entry of fio's ``disk_util`` (cumulative) over ``window_ms``."""

        def n(key: str) -> float:
            return float(entry.get(key) or 0)

        return DiskCounts(
            window_ms,
            n("read_ios"),
            n("write_ios"),
            n("read_merges"),
            n("write_merges"),
            n("read_ticks"),
            n("write_ticks"),
            n("in_queue"),
            busy_ms,
        )

    def minus(self, base: DiskCounts) -> DiskCounts:
        """The window between an earlier cumulative report ``base`` and this one."""
        busy = None if self.busy_ms is None or base.busy_ms is None else max(self.busy_ms - base.busy_ms, 0.0)
        counts = (max(a - b, 0.0) for a, b in zip(self._counters(), base._counters(), strict=True))
        return DiskCounts._of(self.window_ms - base.window_ms, counts, busy)

    def plus(self, other: DiskCounts) -> DiskCounts:
        """Two consecutive windows of the same disk as one."""
        busy = None if self.busy_ms is None or other.busy_ms is None else self.busy_ms + other.busy_ms
        counts = (a + b for a, b in zip(self._counters(), other._counters(), strict=True))
        return DiskCounts._of(self.window_ms + other.window_ms, counts, busy)

    def _counters(self) -> tuple[float, ...]:
        """The counters between ``window_ms`` and ``busy_ms``, in field order."""
        return tuple(float(getattr(self, f.name)) for f in fields(self)[1:-1])

    @staticmethod
    def _of(window_ms: float, counters: Iterable[float], busy_ms: float | None) -> DiskCounts:
        r_ios, w_ios, r_merges, w_merges, r_ticks, w_ticks, in_queue = counters
        return DiskCounts(window_ms, r_ios, w_ios, r_merges, w_merges, r_ticks, w_ticks, in_queue, busy_ms)

    # --- iostat's figures ------------------------------------------------------------------------
    @property
    def util_pct(self) -> float | None:
        if self.busy_ms is None or self.window_ms <= 0:
            return None
        return min(max(100.0 * self.busy_ms / self.window_ms, 0.0), 100.0)

    @property
    def aqu_sz(self) -> float | None:
        return self.in_queue / self.window_ms if self.window_ms > 0 else None

    @property
    def await_ms(self) -> float | None:
        return _ratio(self.read_ticks + self.write_ticks, self.read_ios + self.write_ios)

    @property
    def r_await_ms(self) -> float | None:
        return _ratio(self.read_ticks, self.read_ios)

    @property
    def w_await_ms(self) -> float | None:
        return _ratio(self.write_ticks, self.write_ios)

    @property
    def read_iops(self) -> float | None:
        return self.read_ios * 1000.0 / self.window_ms if self.window_ms > 0 else None

    @property
    def write_iops(self) -> float | None:
        return self.write_ios * 1000.0 / self.window_ms if self.window_ms > 0 else None


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None
