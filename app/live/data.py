"""Live results for the Results Display, kept as numpy series per level (Qt-free).

Samples arrive about once a second per level. Like Iometer's update frequency, a point is made
every ``update_seconds`` of fio time (or only at the end of a step for "∞"): for WHOLE_TEST the
latest whole-step numbers, for LAST_UPDATE the numbers of the window since the previous point
(rates weighted by time, latency means I/O-weighted, maxima maxed, percentiles from the merged
histogram). Both kinds are kept, so switching between them redraws instantly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from app.live.decimate import bucket_extremes
from app.live.disks import LiveDisks
from app.model.metrics import Metrics, percentiles_ms

WHOLE = "WHOLE_TEST"
LAST = "LAST_UPDATE"
KINDS = (WHOLE, LAST)
UPDATE_CHOICES = (1, 2, 3, 4, 5, 10, 15, 30, 45, 60, 0)  # seconds; 0 = ∞ (end of each step only)

# A live series keeps at most MAX_POINTS points, so the window's memory does not grow with the run: when it
# gets there, all but its newest RECENT_POINTS are thinned to OLD_BUCKETS buckets of equal time, each kept as
# its minimum and maximum (peaks stay; a chart is some hundreds of pixels wide and draws a min/max pair per
# three of them). At 1-s updates the last 5 minutes stay whole, and the memory is flat after 17 minutes; a
# stored run keeps every second (History shows them).
MAX_POINTS = 1024
RECENT_POINTS = 300
OLD_BUCKETS = 256

# What a series is: ("all", None, "ALL"), ("manager", "M1", "M1"), ("worker", "M1", "w1")
SeriesKey = tuple[str, str | None, str]
ALL_KEY: SeriesKey = ("all", None, "ALL")


class LiveSample(Protocol):
    """What the live data reads of a sample: app.engine.sampling.telemetry.Sample while a run goes on,
    app.ui.history.stored_series.ReplaySample for a stored run."""

    @property
    def level(self) -> str: ...
    @property
    def manager(self) -> str | None: ...
    @property
    def key(self) -> str: ...
    @property
    def t(self) -> float: ...  # seconds since the step started
    @property
    def interval(self) -> Metrics: ...
    @property
    def whole(self) -> Metrics: ...
    @property
    def final(self) -> bool: ...


# Chart fields stored per point (float32), in this order: every statistic a chart can be set to show.
CHART_FIELDS = ("iops", "mbps", "lat_mean_ms", "lat_max_ms", "p99_ms", "cpu_pct", "errors")


@dataclass(frozen=True)
class Stat:
    # Iometer's statistic name (docs/reference/iometer.md, "Results Display statistics") or ours, clearly worded
    name: str
    unit: str
    get: Callable[[Metrics], float | None]
    count: bool = False  # a whole number (shown without decimals)

    @property
    def label(self) -> str:
        """The name with its unit, e.g. 'Total I/Os per Second (IOPS)'."""
        return f"{self.name} ({self.unit})"


STATS = (
    Stat("Total I/Os per Second", "IOPS", lambda m: m.iops),
    Stat("Read I/Os per Second", "IOPS", lambda m: m.read_iops),
    Stat("Write I/Os per Second", "IOPS", lambda m: m.write_iops),
    Stat("Total MBs per Second (Decimal)", "MB/s", lambda m: m.mbps),
    Stat("Read MBs per Second (Decimal)", "MB/s", lambda m: m.read_mbps),
    Stat("Write MBs per Second (Decimal)", "MB/s", lambda m: m.write_mbps),
    Stat("Total MBs per Second (Binary)", "MiB/s", lambda m: m.mibps),
    Stat("Average I/O Response Time", "ms", lambda m: m.lat_mean_ms),
    Stat("Avg. Read Response Time", "ms", lambda m: m.read_lat_mean_ms),
    Stat("Avg. Write Response Time", "ms", lambda m: m.write_lat_mean_ms),
    Stat("Maximum I/O Response Time", "ms", lambda m: m.lat_max_ms),
    Stat("Max. Read Response Time", "ms", lambda m: m.read_lat_max_ms),
    Stat("Max. Write Response Time", "ms", lambda m: m.write_lat_max_ms),
    Stat("99th Percentile Response Time", "ms", lambda m: m.percentile_ms(99)),
    Stat("fio CPU Utilization (user + system)", "%", lambda m: m.usr_cpu + m.sys_cpu),
    Stat("Total Error Count", "errors", lambda m: float(m.errors), count=True),
)


def over_time(parts: list[Metrics]) -> Metrics:
    """Consecutive windows of one level joined into one window (not a roll-up across levels). One window is
    itself (Metrics from telemetry are read-only): no copy of its histograms at every point."""
    if len(parts) == 1 and parts[0].seconds > 0:
        return parts[0]
    out = Metrics()
    secs = sum(p.seconds for p in parts)
    for p in parts:
        out.add_counts(p)
    out.seconds = secs
    weighted = [p for p in parts if p.seconds > 0] or parts[-1:]
    wsum = sum(p.seconds for p in weighted) or 1.0

    def avg(get: Callable[[Metrics], float]) -> float:
        if secs <= 0:
            return get(weighted[-1]) if weighted else 0.0
        return sum(get(p) * p.seconds for p in weighted) / wsum

    out.read_iops = avg(lambda p: p.read_iops)
    out.write_iops = avg(lambda p: p.write_iops)
    out.read_bps = avg(lambda p: p.read_bps)
    out.write_bps = avg(lambda p: p.write_bps)
    out.usr_cpu = avg(lambda p: p.usr_cpu)
    out.sys_cpu = avg(lambda p: p.sys_cpu)
    utils = [p.disk_util for p in weighted if p.disk_util is not None]
    out.disk_util = sum(utils) / len(utils) if utils else None
    return out


# chart fields read straight off a window (p99_ms comes from its histogram, for many windows at once)
_PLAIN_FIELDS: dict[str, Callable[[Metrics], float]] = {
    "iops": lambda m: m.iops,
    "mbps": lambda m: m.mbps,
    "lat_mean_ms": lambda m: m.lat_mean_ms,
    "lat_max_ms": lambda m: m.lat_max_ms,
    "cpu_pct": lambda m: m.usr_cpu + m.sys_cpu,
    "errors": lambda m: float(m.errors),
}


def chart_rows(windows: list[Metrics]) -> np.ndarray:
    """The chart fields of many windows as an array [len, fields], their p99s in one numpy pass."""
    out = np.empty((len(windows), len(CHART_FIELDS)), dtype=np.float64)
    for i, name in enumerate(CHART_FIELDS):
        if name == "p99_ms":
            out[:, i] = [np.nan if v is None else v for v in percentiles_ms(windows, 99)]
        else:
            get = _PLAIN_FIELDS[name]
            out[:, i] = [get(m) for m in windows]
    return out


class ChartedBatch(list):  # type: ignore[type-arg]  # a list of samples, as the runner sends them
    """A batch of samples with the chart rows of their numbers computed already (``charted``), so the GUI
    thread only looks them up: ``rows`` maps id() of a sample's ``whole`` or ``interval`` to its row. The
    ids stay valid while the batch (holding the samples, holding their numbers) lives."""

    rows: dict[int, np.ndarray]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (a run in a process of its own sends it) with its rows in the order of the numbers they
        belong to: the ids are this process's."""
        metrics = _charted_metrics(self)
        return _with_rows, (
            list(self),
            np.array([self.rows[id(m)] for m in metrics]).reshape(len(metrics), -1),
        )


def _charted_metrics(samples: Sequence[LiveSample]) -> list[Metrics]:
    return [m for smp in samples if smp.level != "target" for m in (smp.whole, smp.interval)]


def _with_rows(samples: Sequence[LiveSample], rows: np.ndarray) -> ChartedBatch:
    batch = ChartedBatch(samples)
    batch.rows = {id(m): rows[i] for i, m in enumerate(_charted_metrics(samples))}
    return batch


def charted(samples: Sequence[LiveSample]) -> ChartedBatch:
    """``samples`` with their chart rows, computed here: the runner's thread (or the run's own process) calls
    this before handing a batch to the window (p99 from histograms is most of what feeding a point costs),
    targets left out (the live display skips them unless asked to keep them)."""
    if isinstance(samples, ChartedBatch):
        return samples
    metrics = _charted_metrics(samples)
    return _with_rows(samples, chart_rows(metrics) if metrics else np.empty((0, len(CHART_FIELDS))))


def rows_of(metrics: list[Metrics], known: dict[int, np.ndarray]) -> np.ndarray:
    """``chart_rows(metrics)``, taking the rows already ``known`` (by id) and computing the others."""
    out = np.empty((len(metrics), len(CHART_FIELDS)), dtype=np.float64)
    missing = []
    for i, m in enumerate(metrics):
        row = known.get(id(m))
        if row is None:
            missing.append(i)
        else:
            out[i] = row
    if missing:
        out[missing] = chart_rows([metrics[i] for i in missing])
    return out


def chart_values(m: Metrics) -> tuple[float, ...]:
    return tuple(chart_rows([m])[0].tolist())


class Block:
    """The series of one level in shared arrays, a row per series and a column per point: the charts read
    the newest points of a thousand series with one numpy index. Each Series' ``x`` and ``values`` are
    views of its row (re-made when the block grows)."""

    def __init__(self) -> None:
        self.series: list[Series] = []
        self.x = np.empty((4, 64), dtype=np.float64)
        self.values = {k: np.empty((4, len(CHART_FIELDS), 64), dtype=np.float32) for k in KINDS}

    def _resize(self, rows: int, cols: int) -> None:
        r0, c0 = self.x.shape
        x = np.empty((rows, cols), dtype=np.float64)
        x[:r0, :c0] = self.x
        self.x = x
        for k in KINDS:
            v = np.empty((rows, len(CHART_FIELDS), cols), dtype=np.float32)
            v[:r0, :, :c0] = self.values[k]
            self.values[k] = v
        for s in self.series:
            self._bind(s)

    def _bind(self, s: Series) -> None:
        s.x = self.x[s.row]
        s.values = {k: self.values[k][s.row] for k in KINDS}

    def add(self, s: Series) -> None:
        """Move a series (empty, or with points) into the next row."""
        rows, cols = self.x.shape
        if len(self.series) == rows or s.n > cols:
            self._resize(rows * 2 if len(self.series) == rows else rows, max(cols, 2 * s.n))
        row = len(self.series)
        self.x[row, : s.n] = s.x[: s.n]
        for k in KINDS:
            self.values[k][row, :, : s.n] = s.values[k][:, : s.n]
        s.block, s.row = self, row
        self.series.append(s)
        self._bind(s)

    @classmethod
    def copy_of(cls, series: list[Series | None]) -> Block:
        """A block holding a copy of the series' points, a row each (None: a row without points); the
        series are left as they are."""
        blk = cls()
        cols = max([s.n for s in series if s is not None] + [1])
        blk.x = np.full((max(len(series), 1), cols), np.nan)
        blk.values = {
            k: np.full((max(len(series), 1), len(CHART_FIELDS), cols), np.nan, dtype=np.float32)
            for k in KINDS
        }
        for row, s in enumerate(series):
            if s is not None and s.n:
                blk.x[row, : s.n] = s.x[: s.n]
                for k in KINDS:
                    blk.values[k][row, :, : s.n] = s.values[k][:, : s.n]
        return blk

    def grow(self) -> None:
        """Twice the columns for every row (a series reached the end of its row)."""
        self._resize(self.x.shape[0], self.x.shape[1] * 2)


@dataclass
class Series:
    """Points of one level: x (seconds since the run started) and the chart fields, per kind."""

    n: int = 0
    x: np.ndarray = field(default_factory=lambda: np.empty(64, dtype=np.float64))
    values: dict[str, np.ndarray] = field(
        default_factory=lambda: {k: np.empty((len(CHART_FIELDS), 64), dtype=np.float32) for k in KINDS}
    )
    latest: dict[str, Metrics] = field(default_factory=dict)  # kind -> numbers of the latest point
    pending: list[Metrics] = field(default_factory=list)  # LAST_UPDATE window being collected
    window_start: float | None = None  # sample t where the current window began
    last_whole: Metrics | None = None
    last_t: float = 0.0
    step_points: int = 0  # points made in the current step
    block: Block | None = None  # live series: the level's shared arrays (x and values are views of a row)
    row: int = -1

    def _grow(self) -> None:
        if self.block is not None:
            self.block.grow()
            return
        cap = self.x.shape[0] * 2
        self.x = np.resize(self.x, cap)
        for k in KINDS:
            old = self.values[k]
            new = np.empty((len(CHART_FIELDS), cap), dtype=np.float32)
            new[:, : old.shape[1]] = old
            self.values[k] = new

    def append(self, x: float, whole: Metrics, window: Metrics) -> None:
        self.put(x, chart_values(whole), chart_values(window))
        self.latest = {WHOLE: whole, LAST: window}

    def put(self, x: float, whole: np.ndarray | tuple, window: np.ndarray | tuple) -> None:
        """A point from chart values already computed (``chart_values`` / ``chart_rows``)."""
        if self.n == self.x.shape[0]:
            self._grow()
        self.x[self.n] = x
        self.values[WHOLE][:, self.n] = whole
        self.values[LAST][:, self.n] = window
        self.n += 1

    def gap(self, x: float) -> None:
        if self.n == self.x.shape[0]:
            self._grow()
        self.x[self.n] = x
        for k in KINDS:
            self.values[k][:, self.n] = np.nan
        self.n += 1

    def compact(self, recent: int = RECENT_POINTS, buckets: int = OLD_BUCKETS) -> bool:
        """Thin all but the newest ``recent`` points to ``buckets`` min/max buckets (``bucket_extremes``);
        returns whether points were dropped."""
        old = self.n - recent
        if old <= 2 * buckets:
            return False
        xs, (whole, window) = bucket_extremes(
            self.x[:old], [self.values[WHOLE][:, :old], self.values[LAST][:, :old]], buckets
        )
        m = len(xs)
        self.x[:m] = xs
        self.x[m : m + recent] = self.x[old : self.n].copy()
        for k, thinned in ((WHOLE, whole), (LAST, window)):
            v = self.values[k]
            v[:, :m] = thinned
            v[:, m : m + recent] = v[:, old : self.n].copy()
        self.n = m + recent
        return True

    def replace_whole(self, whole: Metrics, values: np.ndarray | tuple | None = None) -> None:
        self.values[WHOLE][:, self.n - 1] = chart_values(whole) if values is None else values
        self.latest[WHOLE] = whole

    def xs(self) -> np.ndarray:
        return self.x[: self.n]

    def point_at(self, x: float, look_back: int = 64) -> int | None:
        """The index of the recent point drawn at ``x`` (within 1 ms), if any."""
        lo = max(self.n - look_back, 0)
        hits = np.nonzero(np.abs(self.x[lo : self.n] - x) < 1e-3)[0]
        return lo + int(hits[-1]) if len(hits) else None

    def ys(self, kind: str, field_name: str) -> np.ndarray:
        return self.values[kind][CHART_FIELDS.index(field_name), : self.n]


@dataclass
class StepMark:
    x: float
    label: str


class LiveResults:
    """All series of the current run, fed with telemetry samples (any object with Sample's fields)."""

    def __init__(
        self, update_seconds: int = 1, keep_targets: bool = False, max_points: int | None = MAX_POINTS
    ):
        """``max_points``: what a series fed here keeps at most (see MAX_POINTS; None: every point)."""
        self.update_seconds = update_seconds
        self.max_points = max_points
        self.thinned = 0  # grows whenever old points were thinned (what was drawn from them is stale)
        self.keep_targets = keep_targets
        self.series: dict[SeriesKey, Series] = {}
        self.blocks: dict[str, Block] = {}  # level -> the shared arrays of its series (fed live)
        self.steps: list[StepMark] = []
        self._queue: list[tuple[float, Sequence[LiveSample]]] = []  # deferred batches (defer / flush)
        self.revision = 0  # grows whenever a point is added (redraw only when it changed)
        self.generation = 0  # grows when the series start over (a new run)
        self.disks = LiveDisks()  # the managers' disks, fed from the same batches

    def clear(self) -> None:
        self._queue.clear()
        self.series.clear()
        self.blocks.clear()
        self.disks.clear()
        self.steps.clear()
        self.revision += 1
        self.generation += 1

    @staticmethod
    def key_of(sample: LiveSample) -> SeriesKey:
        level = sample.level
        if level == "all":
            return ALL_KEY
        return (level, sample.manager, sample.key)

    def start_step(self, x: float, label: str) -> None:
        """A new step begins at ``x`` seconds into the run: every window starts afresh. The lines go on
        from the previous step's last point (as Iometer's charts do; the dotted step line marks the change):
        with slow updates a step has one or two points, which a break at every step left as lone dots."""
        self.flush()
        self.steps.append(StepMark(x, label))
        self.disks.start_step()
        for s in self.series.values():
            s.step_points = 0
            s.pending.clear()
            s.window_start = None
            s.last_whole = None
        self.revision += 1

    def add(self, offset: float, samples: Sequence[LiveSample]) -> int:
        """Feed one batch of samples of a step that began ``offset`` s into the run; returns points made."""
        self.flush()
        return self._add([(offset, samples)])

    def defer(self, offset: float, samples: Sequence[LiveSample]) -> None:
        """``add`` later, at the next ``flush``: every manager's batch of an interval (and of a redraw's
        interval) is then computed in one numpy pass instead of one each."""
        self._queue.append((offset, samples))

    def flush(self) -> int:
        """Feed the deferred batches; returns points made."""
        if not self._queue:
            return 0
        queued, self._queue = self._queue, []
        return self._add(queued)

    def _add(self, batches: list[tuple[float, Sequence[LiveSample]]]) -> int:
        """The batches' points are computed together (``chart_rows``), then written."""
        points: list[tuple[Series, float, Metrics, Metrics]] = []  # (series, x, whole, window)
        replaced: list[tuple[Series, Metrics]] = []
        revised: list[tuple[Series, int, Metrics, Metrics]] = []  # (series, point index, whole, window)
        for offset, smp in ((offset, smp) for offset, samples in batches for smp in samples):
            if smp.level == "target" and not self.keep_targets:
                continue
            key = self.key_of(smp)
            s = self.series.get(key)
            if s is None:
                s = self.series[key] = Series()
                self.blocks.setdefault(key[0], Block()).add(s)
            again = (
                s.window_start is not None and smp.t <= s.last_t
            )  # a second sent again (ALL, more numbers)
            if again and not s.pending:
                # already drawn (ALL once a late manager's report came): its own point is redrawn, never
                # merged into the next second's window
                if smp.interval.seconds <= 0 and smp.t == s.last_t:
                    replaced.append((s, smp.whole))  # fio repeated its last report as the final one
                    continue
                i = s.point_at(offset + smp.t) if self.update_seconds == 1 else None
                if i is not None:
                    revised.append((s, i, smp.whole, smp.interval))
                continue
            if again and smp.t < s.last_t:
                continue  # inside a window being collected, not its newest second: kept by the store only
            if s.window_start is None:
                s.window_start = smp.t - smp.interval.seconds
            if again:
                s.pending[-1] = smp.interval  # the newest second of the window, sent again
            else:
                s.pending.append(smp.interval)
            s.last_whole = smp.whole
            s.last_t = smp.t
            due = (
                smp.final
                if self.update_seconds == 0
                else (smp.final or smp.t - s.window_start >= self.update_seconds - 0.1)
            )  # fio's reports jitter by ms
            if due and s.step_points and smp.final and all(p.seconds <= 0 for p in s.pending):
                # fio repeated its last report as the final one: only the whole-step numbers change
                replaced.append((s, smp.whole))
                s.pending = []
            elif due:
                points.append((s, offset + smp.t, smp.whole, over_time(s.pending)))
                s.step_points += 1
                s.pending = []
                s.window_start = smp.t
        if points or replaced or revised:
            known: dict[int, np.ndarray] = {}
            for _offset, samples in batches:
                known.update(getattr(samples, "rows", {}))
            whole = rows_of(
                [p[2] for p in points] + [r[1] for r in replaced] + [r[2] for r in revised], known
            )
            window = rows_of([p[3] for p in points] + [r[3] for r in revised], known)
            for j, (s, at, w, iv) in enumerate(revised):  # points there before this batch: indices hold
                s.values[WHOLE][:, at] = whole[len(points) + len(replaced) + j]
                s.values[LAST][:, at] = window[len(points) + j]
                if at == s.n - 1:
                    s.latest = {WHOLE: w, LAST: iv}
            cap = self.max_points
            recent = min(RECENT_POINTS, cap * 3 // 10) if cap else 0
            buckets = min(OLD_BUCKETS, cap // 4) if cap else 0
            for i, (s, x, w, iv) in enumerate(points):
                if cap is not None and s.n >= cap and s.compact(recent, buckets):
                    self.thinned += 1  # before the row would grow: its room stays at ``cap`` points
                s.put(x, whole[i], window[i])
                s.latest = {WHOLE: w, LAST: iv}
            for i, (s, w) in enumerate(replaced, start=len(points)):
                s.replace_whole(w, whole[i])
            self.revision += 1
        for _offset, samples in batches:
            self.disks.add(samples, self.update_seconds)
        return len(points) + len(replaced) + len(revised)

    def keys(self, level: str, manager: str | None = None) -> list[SeriesKey]:
        return [k for k in self.series if k[0] == level and (manager is None or k[1] == manager)]
