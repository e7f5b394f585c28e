"""ALL on one clock: the managers' interval numbers summed per common interval of the step.

Each manager reports on its own schedule. Its reports are placed on the step's interval grid
(``round(t / interval)``, t = seconds since the step's first report; managers started together
report within a small fraction of an interval of each other, far from the rounding edge), and
ALL for a grid slot is the sum of what each manager reported in that slot:

- a manager with no report in a slot is missing from it (not counted with its last value);
- a manager with two reports in one slot (fio's final report right after its last interim one)
  counts with both, as one window of their summed length;
- ALL for a slot is recomputed when a report lands in it, so the slot's last ALL sample (the one
  the store keeps: same step time, replaced) holds every manager that reported in it.

The whole-step ALL is the sum of the managers' whole-step numbers.
"""

from __future__ import annotations

from app.model.metrics import Metrics

_KEEP_SLOTS = 8  # slots kept for late reports; older ones are dropped (bounded memory)
_RATES = ("read_iops", "write_iops", "read_bps", "write_bps", "usr_cpu", "sys_cpu")


def consecutive(a: Metrics, b: Metrics) -> Metrics:
    """Two back-to-back windows of the same manager as one: counts added, rates time-weighted."""
    out = Metrics(seconds=a.seconds + b.seconds)
    out.add_counts(a)
    out.add_counts(b)
    for f in _RATES:
        if out.seconds > 0:
            value = (getattr(a, f) * a.seconds + getattr(b, f) * b.seconds) / out.seconds
        else:
            value = getattr(b, f) if b.seconds or not a.seconds else getattr(a, f)
        setattr(out, f, value)
    utils = [u for u in (a.disk_util, b.disk_util) if u is not None]
    out.disk_util = max(utils) if utils else None
    return out


class AllClock:
    def __init__(self, interval: float = 1.0) -> None:
        self.interval = interval if interval > 0 else 1.0
        self._slots: dict[int, dict[str, Metrics]] = {}
        self._whole: dict[str, Metrics] = {}
        self.late = 0  # reports for slots already dropped (not in ALL)

    def slot(self, t: float) -> int:
        return round(t / self.interval)

    def add(self, manager: str, t: float, interval: Metrics, whole: Metrics) -> tuple[float, Metrics, Metrics] | None:
        """(slot time, ALL for that slot, ALL whole) after ``manager``'s report at step time ``t``;
        None for a report so late that its slot is gone."""
        k = self.slot(t)
        self._whole[manager] = whole
        newest = max(self._slots, default=k)
        if k < newest - _KEEP_SLOTS:
            self.late += 1
            return None
        slot = self._slots.setdefault(k, {})
        prev = slot.get(manager)
        slot[manager] = interval if prev is None else consecutive(prev, interval)
        for old in [s for s in self._slots if s < max(newest, k) - _KEEP_SLOTS]:
            del self._slots[old]
        return k * self.interval, Metrics.combine(slot.values()), self.whole()

    def whole(self) -> Metrics:
        return Metrics.combine(self._whole.values())

    def slot_managers(self, t: float) -> dict[str, Metrics]:
        """What each manager contributed to the slot of step time ``t`` (tests, reports)."""
        return dict(self._slots.get(self.slot(t), {}))
