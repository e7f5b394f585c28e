"""The load search of `fiometer curve`: the highest load (queue depth, or workers) whose p99 stays under a limit.

Loads come from a grid (every value to 8, then four per doubling: 10, 12, 14, 16, 20, 24, 28, 32, 40 ...), so
an exhaustive sweep and the search answer on the same values. The search brackets the knee by multiplying
(or dividing) the load by 4 from where it starts, then bisects the bracket's grid positions; it stops when the bracket is
one grid position wide or after ``budget`` measured steps (then the highest load known to keep the limit is the
answer), and the answer is measured once more to confirm it. Pure logic: the runner measures.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SEARCH_BUDGET = 8  # measured steps per access specification, the confirming one not counted
BRACKET_FACTOR = 4  # x4 per bracketing step: from 1 to 256 in 4 steps, leaving 3 to bisect 8 grid positions


def load_grid(max_load: int, min_load: int = 1) -> list[int]:
    """1..8, then four values per doubling (x1.25, x1.5, x1.75, x2), up to ``max_load``."""
    out: list[int] = []
    base = 8
    value = 1
    while value <= max_load:
        if value >= min_load:
            out.append(value)
        if value < 8:
            value += 1
        else:
            nxt = [base * 5 // 4, base * 3 // 2, base * 7 // 4, base * 2]
            bigger = [v for v in nxt if v > value]
            value = bigger[0]
            if value == base * 2:
                base *= 2
    if not out or out[-1] != max_load and max_load >= min_load:
        out.append(max_load)  # the largest allowed load is always a candidate
    return sorted(set(out))


@dataclass
class Probe:
    load: int
    p99_ms: float | None
    iops: float
    mbps: float
    confirm: bool = False

    @property
    def metric_ok(self) -> bool:
        return self.p99_ms is not None


@dataclass
class KneeSearch:
    """One access specification's search. Feed it with ``record`` after measuring ``next_load()``."""

    grid: list[int]
    p99_max_ms: float
    start: int = 8
    budget: int = SEARCH_BUDGET
    probes: list[Probe] = field(default_factory=list)
    _lo: int = -1  # grid position of the highest load known to keep the limit
    _hi: int = -1  # grid position of the lowest load known to break it (-1: none yet)
    _confirmed: bool = False

    def __post_init__(self) -> None:
        if self._hi < 0:
            self._hi = len(self.grid)

    def _pos(self, load: int) -> int:
        return self.grid.index(load)

    def _measured(self) -> list[Probe]:
        return [p for p in self.probes if not p.confirm]

    def _ok(self, p: Probe) -> bool:
        return p.p99_ms is not None and p.p99_ms <= self.p99_max_ms

    def next_load(self) -> int | None:
        """The next load to measure, or None when the search (and its confirmation) is done."""
        measured = self._measured()
        if not measured:
            return min(self.grid, key=lambda v: (abs(v - self.start), v))
        done = self._hi - self._lo <= 1 or len(measured) >= self.budget
        if done:
            if self._lo >= 0 and not any(p.confirm for p in self.probes):
                return self.grid[self._lo]
            return None
        last = measured[-1]
        if self._ok(last) and self._hi == len(self.grid):  # bracketing upwards: four times the load
            want = last.load * BRACKET_FACTOR
            up = [v for v in self.grid if v >= want]
            nxt = self._pos(up[0]) if up else len(self.grid) - 1
            return self.grid[min(nxt, self._hi - 1)] if nxt > self._lo else self.grid[self._lo + 1]
        if not self._ok(last) and self._lo < 0:  # bracketing downwards: a quarter of it
            want = last.load // BRACKET_FACTOR
            down = [i for i, v in enumerate(self.grid) if v <= want]
            return self.grid[down[-1] if down else 0]
        return self.grid[(self._lo + self._hi) // 2]

    def record(self, load: int, p99_ms: float | None, iops: float, mbps: float) -> Probe:
        """What measuring ``load`` gave. The measurement after the search's end is the confirmation."""
        measured = self._measured()
        confirm = (self._hi - self._lo <= 1 or len(measured) >= self.budget) and bool(measured)
        probe = Probe(load, p99_ms, iops, mbps, confirm)
        self.probes.append(probe)
        if confirm:
            return probe
        pos = self._pos(load)
        if self._ok(probe):
            self._lo = max(self._lo, pos)
        else:
            self._hi = min(self._hi, pos)
        if self._lo >= self._hi:  # a noisy curve: a higher load kept the limit after a lower one broke it
            self._hi = self._lo + 1
        return probe

    @property
    def steps_measured(self) -> int:
        return len(self._measured())

    @property
    def answer(self) -> Probe | None:
        """The search's answer (the highest load measured to keep the limit), None when even the lowest broke it."""
        if self._lo < 0:
            return None
        load = self.grid[self._lo]
        return next(p for p in self._measured() if p.load == load)

    @property
    def confirmation(self) -> Probe | None:
        return next((p for p in self.probes if p.confirm), None)

    @property
    def bracket(self) -> tuple[int | None, int | None]:
        """(highest load known to keep the limit, lowest known to break it)."""
        return (
            self.grid[self._lo] if self._lo >= 0 else None,
            self.grid[self._hi] if self._hi < len(self.grid) else None,
        )


def exhaustive_knee(points: list[tuple[int, float | None]], p99_max_ms: float) -> int | None:
    """The knee of an exhaustive sweep: the highest load before the first one whose p99 breaks the limit."""
    best = None
    for load, p99 in sorted(points):
        if p99 is None or p99 > p99_max_ms:
            break
        best = load
    return best


@dataclass
class GridSweep(KneeSearch):
    """Every load of the grid, lowest first (the exhaustive sweep a search is checked against); its answer is
    the knee by ``exhaustive_knee``. No confirmation."""

    budget: int = 1 << 30

    def next_load(self) -> int | None:
        n = len(self.probes)
        return self.grid[n] if n < len(self.grid) else None

    def record(self, load: int, p99_ms: float | None, iops: float, mbps: float) -> Probe:
        probe = Probe(load, p99_ms, iops, mbps)
        self.probes.append(probe)
        knee = exhaustive_knee([(p.load, p.p99_ms) for p in self.probes], self.p99_max_ms)
        self._lo = self._pos(knee) if knee is not None else -1
        broke = [
            self._pos(p.load) for p in self.probes if not self._ok(p) and (knee is None or p.load > knee)
        ]
        self._hi = min(broke) if broke else len(self.grid)
        return probe
