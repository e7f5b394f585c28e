"""ALL on fio's own clock: the managers' interval numbers summed per second in which fio measured them.

Each manager's report carries its own time: how long its jobs have run (fio's ``runtime``, the
manager's whole-step ``seconds``). A report goes into slot ``round((runtime - phase) / interval)``,
``phase`` being the runtime of that manager's first measured report (less whole intervals while over
1.5 of them: a first report fio skipped still starts at its own slot). Slot k is the k-th interval of
every manager's I/O, whenever its report got through: a report held up on a slow or bunching link
fills its own second, late, instead of the second in which it arrived; and as fio stops at the
step's run time, ALL's slots never run past the step's length. (Without fio's time, ``fio_t=None``,
a report goes into the slot of its arrival, ``round(t / interval)``.)

- a manager with no report in a slot is missing from it (not counted with its last value);
- a manager with two reports in one slot (fio's final report right after its last interim one)
  counts with both, as one window of their summed length;
- a slot is emitted once every running manager has reported in it or later (or when it is
  overdue on the arrival clock); a report for a slot already emitted emits it again (the store
  keeps the last one: same step time, replaced) and is noted as late (``late``: manager ->
  [(slot, seconds after the slot's first report)]) — a late report is marked, not moved;
- ALL's whole-step numbers at slot k are the sum of each manager's whole-step numbers at its
  latest report in a slot <= k. A manager that failed (``done(m, failed=True)``) counts with its I/Os
  over the step's time (the longest runtime of any manager), not with its own rate over the shorter
  time it ran: ALL is all I/Os completed over the step's time, that manager's share partial.

Slots are kept until every manager has reported beyond them (or ended), at most ``_KEEP_SLOTS``
(bounded memory); a report for a slot already dropped is counted in ``dropped`` and is not in ALL.

With one manager, ALL is that manager: its slots carry the time given with the manager's first report in
them (``at``: the manager's own samples' time on fio's clock, :meth:`AllClock.fio_time`), not the grid time,
so ALL's samples and the manager's have the same times and the store can keep them once; fio's final report,
landing in the slot of the last interim one, replaces that sample.
"""

from __future__ import annotations

from dataclasses import replace

from app.model.metrics import Metrics

_KEEP_SLOTS = 120  # slots kept for late reports (2 min at 1 s); older ones are dropped (bounded memory)
_RATES = ("read_iops", "write_iops", "read_bps", "write_bps", "usr_cpu", "sys_cpu")
_IO_RATES = ("read_iops", "write_iops", "read_bps", "write_bps")


def over_step(m: Metrics, step_s: float) -> Metrics:
    """A manager's whole-step numbers with its I/O rates taken over ``step_s`` instead of its own time."""
    if m.seconds <= 0 or step_s <= m.seconds:
        return m
    f = m.seconds / step_s
    return replace(m, seconds=step_s, **{k: getattr(m, k) * f for k in _IO_RATES})


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
    landing in a slot already emitted (late, or fio's final report) emits that slot again."""

    def __init__(
        self, interval: float = 1.0, managers: list[str] | None = None, patience: float | None = None
    ) -> None:
        self.interval = interval if interval > 0 else 1.0
        self.patience = patience if patience is not None else 2 * self.interval
        self._managers = list(managers or [])
        self._slots: dict[int, dict[str, Metrics]] = {}
        self._slot_whole: dict[int, dict[str, Metrics]] = {}  # each manager's whole at its report in the slot
        self._base_whole: dict[str, Metrics] = {}  # each manager's whole in the newest slot dropped
        self._emitted: set[int] = set()
        self._newest: dict[str, int] = {}  # manager -> its newest slot
        self._phase: dict[str, float] = {}  # manager -> fio's time of its slot 0
        self._done: set[str] = set()
        self.failed: set[str] = set()  # managers that ended without fio's final report
        self._whole: dict[str, Metrics] = {}
        self._slot_t: dict[int, float] = {}  # the time given with the first report in each slot (``at``)
        self._slot_arrival: dict[int, float] = {}  # the arrival time of the first report in each slot
        self.was_late = False  # the report last added came after its slot was shown (or was dropped)
        self._floor = 0  # slots below were dropped
        self.late: dict[
            str, list[tuple[int, float]]
        ] = {}  # manager -> (slot, s after the slot's first report)
        self.dropped = 0  # reports for slots already dropped (not in ALL)

    def slot(self, t: float) -> int:
        """The slot of arrival time ``t`` (reports without fio's time)."""
        return round(t / self.interval)

    def fio_slot(self, manager: str, fio_t: float) -> int:
        """The slot of ``manager``'s report made when its jobs had run ``fio_t`` s (the first call sets its phase)."""
        phase = self._phase.get(manager)
        if phase is None:
            phase = fio_t
            while phase > 1.5 * self.interval:
                phase -= self.interval
            self._phase[manager] = phase
        return max(round((fio_t - phase) / self.interval), 0)

    def fio_time(self, manager: str, fio_t: float) -> float:
        """Step time of ``manager``'s report measured at fio's ``fio_t``, on the same clock as its slots (its
        first measured report at 0, or a whole interval on when fio skipped it): where its own samples go,
        however late the report arrived."""
        self.fio_slot(manager, fio_t)  # (sets its phase at its first report)
        return max(fio_t - self._phase[manager], 0.0)

    def add(
        self,
        manager: str,
        t: float,
        interval: Metrics,
        whole: Metrics,
        fio_t: float | None = None,
        at: float | None = None,
    ) -> list[tuple[float, Metrics, Metrics]]:
        """Record ``manager``'s report, arrived at step time ``t``, measured at fio's ``fio_t`` (its jobs'
        runtime, s) and shown at ``at`` (its own samples' time; default ``t``); returns the (slot time, ALL
        for the slot, ALL whole at the slot) now due, oldest first. ``was_late`` then says whether this
        report came after its slot was shown."""
        if manager not in self._managers:
            self._managers.append(manager)
        k = self.slot(t) if fio_t is None else self.fio_slot(manager, fio_t)
        self._whole[manager] = whole
        self.was_late = False
        if k < self._floor:
            self.dropped += 1
            self.was_late = True
            return []
        slot = self._slots.setdefault(k, {})
        first_t = self._slot_arrival.setdefault(k, t)
        self._slot_t.setdefault(k, t if at is None else at)
        if k in self._emitted and manager not in slot:
            self.late.setdefault(manager, []).append((k, t - first_t))
            self.was_late = True
        prev = slot.get(manager)
        slot[manager] = interval if prev is None else consecutive(prev, interval)
        self._slot_whole.setdefault(k, {})[manager] = whole
        self._newest[manager] = max(k, self._newest.get(manager, k))
        due = self._due()
        if k in self._emitted and k not in due:
            due.append(k)  # more numbers for a slot already shown
        return self._emit(sorted(due))

    def done(self, manager: str, failed: bool = False) -> list[tuple[float, Metrics, Metrics]]:
        """``manager`` sends nothing more (final report, or it failed): slots no longer wait for it."""
        self._done.add(manager)
        if failed:
            self.failed.add(manager)
        return self._emit(self._due())

    def tick(self, t: float) -> list[tuple[float, Metrics, Metrics]]:
        """Slots overdue at step time ``t`` are emitted with the managers that reported in them."""
        late = [
            k
            for k in self._slots
            if k not in self._emitted and (k + 0.5) * self.interval + self.patience <= t
        ]
        return self._emit(sorted(set(late) | set(self._due())))

    def flush(self) -> list[tuple[float, Metrics, Metrics]]:
        return self._emit(sorted(k for k in self._slots if k not in self._emitted))

    def _due(self) -> list[int]:
        running = [m for m in self._managers if m not in self._done]
        if any(m not in self._newest for m in running):
            return []
        horizon = min((self._newest[m] for m in running), default=max(self._slots, default=0))
        return [k for k in self._slots if k not in self._emitted and k <= horizon]

    def whole_at(self, k: int) -> Metrics:
        """ALL's whole-step numbers at slot ``k``: each manager's at its latest report in a slot <= k."""
        parts = []
        upto = [self._slot_whole[j] for j in sorted(self._slot_whole) if j <= k]
        for m in self._managers:
            w = self._base_whole.get(m)
            for wholes in upto:
                w = wholes.get(m, w)
            if w is not None:
                parts.append((m, w))
        return self._sum(parts)

    def _sum(self, parts: list[tuple[str, Metrics]]) -> Metrics:
        if not self.failed:
            return Metrics.combine(w for _, w in parts)
        step_s = max((w.seconds for _, w in parts), default=0.0)
        return Metrics.combine(over_step(w, step_s) if m in self.failed else w for m, w in parts)

    def _emit(self, keys: list[int]) -> list[tuple[float, Metrics, Metrics]]:
        if not keys:  # (most reports and ticks emit nothing: the whole-step sum of every manager is not free)
            return []
        out = []
        one = len(self._managers) == 1
        for k in keys:
            self._emitted.add(k)
            t = self._slot_t.get(k, k * self.interval) if one else k * self.interval
            out.append((t, Metrics.combine(self._slots[k].values()), self.whole_at(k)))
        self._drop()
        return out

    def _drop(self) -> None:
        """Forget emitted slots every manager has reported beyond (or ended); beyond _KEEP_SLOTS, the oldest."""
        waiting = [self._newest.get(m, -1) for m in self._managers if m not in self._done]
        settled = min(waiting, default=max(self._slots, default=0))
        newest = max(self._slots, default=0)
        for old in sorted(self._slots):
            if old not in self._emitted or (old >= settled and old > newest - _KEEP_SLOTS):
                break
            for m, w in self._slot_whole.pop(old, {}).items():
                self._base_whole[m] = w
            del self._slots[old]
            self._slot_t.pop(old, None)
            self._slot_arrival.pop(old, None)
            self._floor = old + 1

    def whole(self) -> Metrics:
        """ALL over the whole step so far (a failed manager's I/Os over the step's time)."""
        return self._sum(list(self._whole.items()))

    def partial_summary(self) -> str:
        """What ALL counts of the managers that failed (empty when none did)."""
        if not self.failed or not self._whole:
            return ""
        step_s = max(w.seconds for w in self._whole.values())
        parts = []
        for m in sorted(self.failed):
            w = self._whole.get(m)
            if w is None:
                parts.append(f"{m} measured nothing")
                continue
            parts.append(
                f"{m} ran {w.seconds:.1f} s of it: {w.ios:,} I/Os, {w.iops:,.0f} IOPS over its own time, "
                f"{over_step(w, step_s).iops:,.0f} over the step's"
            )
        return (
            f"ALL is all I/Os completed over the step's {step_s:.1f} s; partial share of the manager(s) "
            "that failed: " + "; ".join(parts)
        )

    def is_late(self, t: float) -> bool:
        """Whether the ALL sample at slot time ``t`` holds a report that came after the slot was shown."""
        k = round(t / self.interval)
        return any(j == k for items in self.late.values() for j, _ in items)

    def late_summary(self) -> str:
        """One line on the reports that came after their second was shown (empty when none did)."""
        if not self.late:
            return ""
        parts = []
        for m, items in sorted(self.late.items()):
            slots = sorted({k for k, _ in items})
            span = f"{slots[0] * self.interval:g}" + (
                f"–{slots[-1] * self.interval:g}" if len(slots) > 1 else ""
            )
            parts.append(
                f"{m}: {len(items)} report(s) for second(s) {span}, up to "
                f"{max(lag for _, lag in items):.1f} s late"
            )
        text = (
            "ALL: reports that arrived after their second was shown were added to the second fio "
            "measured them in (" + "; ".join(parts) + ")"
        )
        if self.dropped:
            text += f"; {self.dropped} report(s) came too late to be kept in ALL"
        return text
