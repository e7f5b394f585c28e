"""ALL on one clock: the managers' interval numbers summed per common interval of the step.

Each manager reports on its own schedule. Its reports are placed on the step's interval grid
(``round(t / interval)``, t = seconds since the step's first report; managers started together
report within a small fraction of an interval of each other, far from the rounding edge), and
ALL for a grid slot is the sum of what each manager reported in that slot:

- a manager with no report in a slot is missing from it (not counted with its last value);
- a manager with two reports in one slot (fio's final report right after its last interim one)
  counts with both, as one window of their summed length;
- a slot is emitted once every running manager has reported in it or later (or when it is
  overdue); a report for a slot already emitted (fio's final one) emits it again, and the store
  keeps the last one (same step time, replaced).

The whole-step ALL is the sum of the managers' whole-step numbers.

With one manager, ALL is that manager: its slots carry the time of the manager's first report in them
(not the grid time), so ALL's samples and the manager's have the same times and the store can keep
them once; fio's final report, landing in the slot of the last interim one, replaces that sample.
"""

from __future__ import annotations

from app.model.metrics import Metrics

_KEEP_SLOTS = 8  # slots kept for late reports; older ones are dropped (bounded memory)
_RATES = ("read_iops", "write_iops", "read_bps", "write_bps", "usr_cpu", "sys_cpu")


def consecutive(a: Metrics, b: Metrics) -> Metrics:
    """Two back-to-back windows of the same manager as one: counts added, rates time-weighted. Telemetry's
    count-array histograms stay arrays (as dicts, ALL's sum of every manager for that slot took the slow path)."""
    out = Metrics.combine([a, b])  # counters added, maxima maxed, histograms summed, busiest disk
    out.seconds = a.seconds + b.seconds
    for f in _RATES:
        if out.seconds > 0:
            value = (getattr(a, f) * a.seconds + getattr(b, f) * b.seconds) / out.seconds
        else:
            value = getattr(b, f) if b.seconds or not a.seconds else getattr(a, f)
        setattr(out, f, value)
    return out


class AllClock:
    """``managers``: every manager of the step. A slot is emitted once every manager still running
    has reported in it or in a later slot (or ``tick`` finds it ``patience`` s overdue); a report
    landing in a slot already emitted (fio's final report) emits that slot again."""

    def __init__(self, interval: float = 1.0, managers: list[str] | None = None, patience: float | None = None) -> None:
        self.interval = interval if interval > 0 else 1.0
        self.patience = patience if patience is not None else 2 * self.interval
        self._managers = list(managers or [])
        self._slots: dict[int, dict[str, Metrics]] = {}
        self._emitted: set[int] = set()
        self._newest: dict[str, int] = {}  # manager -> its newest slot
        self._done: set[str] = set()
        self._whole: dict[str, Metrics] = {}
        self._slot_t: dict[int, float] = {}  # one manager: the time of its first report in each slot
        self.late = 0  # reports for slots already dropped (not in ALL)

    def slot(self, t: float) -> int:
        return round(t / self.interval)

    def add(self, manager: str, t: float, interval: Metrics, whole: Metrics) -> list[tuple[float, Metrics, Metrics]]:
        """Record ``manager``'s report at step time ``t``; returns the (slot time, ALL for the slot, ALL whole)
        now due, oldest first."""
        if manager not in self._managers:
            self._managers.append(manager)
        k = self.slot(t)
        self._whole[manager] = whole
        if self._slots and k < min(self._slots):
            self.late += 1
            return []
        slot = self._slots.setdefault(k, {})
        self._slot_t.setdefault(k, t)
        prev = slot.get(manager)
        slot[manager] = interval if prev is None else consecutive(prev, interval)
        self._newest[manager] = max(k, self._newest.get(manager, k))
        due = self._due()
        if k in self._emitted and k not in due:
            due.append(k)  # more numbers for a slot already shown
        return self._emit(sorted(due))

    def done(self, manager: str) -> list[tuple[float, Metrics, Metrics]]:
        """``manager`` sends nothing more (final report, or it failed): slots no longer wait for it."""
        self._done.add(manager)
        return self._emit(self._due())

    def tick(self, t: float) -> list[tuple[float, Metrics, Metrics]]:
        """Slots overdue at step time ``t`` are emitted with the managers that reported in them."""
        late = [k for k in self._slots if k not in self._emitted and (k + 0.5) * self.interval + self.patience <= t]
        return self._emit(sorted(set(late) | set(self._due())))

    def flush(self) -> list[tuple[float, Metrics, Metrics]]:
        return self._emit(sorted(k for k in self._slots if k not in self._emitted))

    def _due(self) -> list[int]:
        running = [m for m in self._managers if m not in self._done]
        if any(m not in self._newest for m in running):
            horizon = None
        else:
            horizon = min((self._newest[m] for m in running), default=max(self._slots, default=0))
        if horizon is None:
            return []
        return [k for k in self._slots if k not in self._emitted and k <= horizon]

    def _emit(self, keys: list[int]) -> list[tuple[float, Metrics, Metrics]]:
        if not keys:  # (most reports and ticks emit nothing: the whole-step sum of every manager is not free)
            return []
        out = []
        whole = Metrics.combine(self._whole.values())
        one = len(self._managers) == 1
        for k in keys:
            self._emitted.add(k)
            t = self._slot_t.get(k, k * self.interval) if one else k * self.interval
            out.append((t, Metrics.combine(self._slots[k].values()), whole))
        for old in [j for j in self._slots if j in self._emitted and j < max(self._slots) - _KEEP_SLOTS]:
            del self._slots[old]
            self._slot_t.pop(old, None)
        return out

    def whole(self) -> Metrics:
        return Metrics.combine(self._whole.values())

