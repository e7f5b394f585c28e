"""Bounds on the text a manager sends: repeats dropped, a rate limit, a cap per step, a count of drops.

A fio server can send text without end (a job printing an error per I/O, or a misbehaving
server); every message kept costs memory and a database row. The gate lets through the first
copy of each text, at most ``burst`` messages at once and ``per_second`` after that, and at most
``cap`` in all; everything else is only counted, and ``summary`` says how much was dropped.
"""

from __future__ import annotations

import time
from collections.abc import Callable

MESSAGE_CAP = 200  # messages kept per manager and step
MESSAGE_RATE = 5.0  # messages per second after the first burst
MESSAGE_BURST = 20


class MessageGate:
    def __init__(
        self,
        *,
        cap: int = MESSAGE_CAP,
        per_second: float = MESSAGE_RATE,
        burst: int = MESSAGE_BURST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cap, self.per_second, self.burst = cap, per_second, burst
        self._clock = clock
        self._tokens = float(burst)
        self._refilled = clock()
        self._seen: set[str] = set()  # holds only admitted texts, so at most ``cap`` of them
        self.admitted = 0
        self.repeats = 0
        self.over_rate = 0
        self.over_cap = 0

    @property
    def dropped(self) -> int:
        return self.repeats + self.over_rate + self.over_cap

    def admit(self, text: str) -> bool:
        """True if this message should be kept and shown."""
        key = text.strip()
        if key in self._seen:
            self.repeats += 1
            return False
        if self.admitted >= self.cap:
            self.over_cap += 1
            return False
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._refilled) * self.per_second)
        self._refilled = now
        if self._tokens < 1.0:
            self.over_rate += 1
            return False
        self._tokens -= 1.0
        self._seen.add(key)
        self.admitted += 1
        return True

    def summary(self, manager: str) -> str | None:
        """One line about what was dropped, or None when nothing was."""
        if not self.dropped:
            return None
        parts = [
            f"{n} {what}"
            for n, what in (
                (self.repeats, "repeated"),
                (self.over_rate, f"over {self.per_second:g}/s"),
                (self.over_cap, f"past the cap of {self.cap}"),
            )
            if n
        ]
        return f"{self.dropped} more messages from {manager} were not kept ({', '.join(parts)})"
