"""A stored run's samples fed back through the live charts' data (LiveResults), so a past run is drawn by
the same code, with the same update-frequency rules, as it was drawn while it ran (Qt-free).

``load_run`` reads a run's outline (and its first points) on a store task thread; ``load_points`` reads the
points of the series and step shown, on demand, as numpy arrays computed by SQLite (no Metrics objects per
sample); ``overlay`` builds LiveResults on the GUI thread.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from app.live.data import ALL_KEY, CHART_FIELDS, LAST, WHOLE, LiveResults, Series, SeriesKey, StepMark
from app.model.metrics import Metrics
from app.store import Run, Store, get_run
from app.store.blocks import BLOCK_COLUMNS, count_sql, last_t_sql, series_arrays
from app.store.peaks import PEAK_BIN_S, PEAK_FIELDS, bin_peaks, field_arrays

LEVELS = ("all", "manager", "worker")  # targets are not charted (as live, unless asked)
OVERLAY_GAP_S = 2.0  # between steps laid one after another in an overlay
DEFAULT_BINS = 1000  # beyond twice this many samples per series, points are peak-decimated by SQLite


@dataclass(frozen=True)
class ReplaySample:
    """What LiveResults reads from a telemetry sample."""

    level: str
    manager: str | None
    key: str
    t: float  # seconds since the step started
    interval: Metrics
    whole: Metrics
    final: bool = False


@dataclass
class StoredRun:
    """A stored run's outline: what was measured in each step, not the samples (``load_points`` reads
    those for the series and step on show), so opening costs the same whatever the run's length."""

    run: Run
    series: dict[int, dict[SeriesKey, int]] = field(default_factory=dict)  # step id -> key -> samples' series
    offsets: dict[int, float] = field(default_factory=dict)  # step id -> seconds since the run started
    ends: dict[int, float] = field(default_factory=dict)  # step id -> its last sample's t
    points: LiveResults | None = None  # what load() read first: ALL over every step

    @property
    def has_samples(self) -> bool:
        return any(self.series.values())

    def keys(self) -> list[SeriesKey]:
        """Every charted level, in the order telemetry first reported them."""
        out: dict[SeriesKey, None] = {}
        for keys in self.series.values():
            out.update(dict.fromkeys(keys))
        return list(out)


def _seconds_between(a: str | None, b: str | None) -> float | None:
    try:
        return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def load_run(
    store: Store,
    run_id: int,
    levels: tuple[str, ...] = LEVELS,
    bins: int = DEFAULT_BINS,
    kind: str = LAST,
    fields: tuple[str, ...] = PEAK_FIELDS,
) -> StoredRun:
    """The run (results of ALL and managers only), what each step measured, and the ALL series' points
    over every step (RunNotFound if it was deleted)."""
    run = get_run(store, run_id, result_levels=("all", "manager"))
    data = StoredRun(run)
    ends = data.ends
    with store.read("reading what a run measured") as conn:
        for step_id, level, manager, key, source, last in conn.execute(
            "SELECT series.step_id, level, manager, key, coalesce(same_as, series.id), "
            f"{last_t_sql('coalesce(same_as, series.id)')} "
            "FROM series JOIN steps ON steps.id = series.step_id WHERE steps.run_id = ? "
            f"AND level IN ({', '.join('?' * len(levels))}) ORDER BY series.id",  # targets' last times unread
            (run_id, *levels),
        ):
            if level not in levels or last is None:
                continue
            k = ALL_KEY if level == "all" else (level, manager, key)
            data.series.setdefault(step_id, {})[k] = source
            ends[step_id] = max(ends.get(step_id, 0.0), last)
    elapsed = 0.0
    for step in run.steps:
        start = _seconds_between(run.started, step.started)
        # where the clock says the step started, but never inside the previous step's samples
        data.offsets[step.id] = max(start, elapsed) if start is not None else elapsed
        last = ends.get(step.id)
        elapsed = data.offsets[step.id] + (last + 1.0 if last is not None else step.run_s)
    data.points = load_points(store, data, [ALL_KEY], None, kind, bins, fields)
    return data


_NF = len(CHART_FIELDS)
_NP = len(PEAK_FIELDS)
assert CHART_FIELDS[:_NP] == PEAK_FIELDS, "the store's peaks are the charts' first fields"
EXTRA_FIELDS = CHART_FIELDS[_NP:]  # charted on request, read from the samples (no peaks kept for them)


def extra_arrays(cols: dict[str, np.ndarray], p: str) -> list[np.ndarray]:
    """EXTRA_FIELDS of one window (prefix i_ or w_) of samples' columns: fio's CPU and the errors."""
    return [cols[f"{p}usr_cpu"] + cols[f"{p}sys_cpu"], cols[f"{p}errors"].astype(np.float64)]


assert len(extra_arrays({f"i_{c}": np.zeros(1) for c in ("usr_cpu", "sys_cpu", "errors")}, "i_")) == len(
    EXTRA_FIELDS
)


def _peaks(
    conn: sqlite3.Connection, ids: list[int], prefix: str, offset: float, width: float, extras: bool
) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(series id, x, ys [fields, m]) peak-decimated on bins of ``width`` s of the run's time axis: from
    the peaks kept when the step ended, else (a step cut short, or ``extras`` wanted: CPU and errors have
    no peaks kept) from the samples. Without ``extras`` their rows are NaN."""
    cols = [f"{prefix}{edge}_{f}" for edge in ("lo", "hi") for f in PEAK_FIELDS]
    where = f"series_id IN ({', '.join(str(int(i)) for i in ids)})"
    kept = (
        not extras and conn.execute(f"SELECT EXISTS (SELECT 1 FROM sample_peaks WHERE {where})").fetchone()[0]
    )
    nf = _NF if extras else _NP
    if not kept:
        # the step's peaks were not kept (or do not hold what is wanted): the same numbers, computed now
        arrays = _fields(conn, ids, prefix)
        out = []
        for sid in ids:
            t, _seconds, ys = arrays.get(sid, (np.empty(0), None, np.empty((_NF, 0))))
            _b, t_lo, t_hi, lo, hi = bin_peaks(t, ys[:nf], ((t + offset) / width).astype(np.int64))
            x = np.empty(2 * len(t_lo))
            x[0::2], x[1::2] = t_lo, t_hi
            both = np.full((_NF, len(x)), np.nan)
            both[:nf, 0::2], both[:nf, 1::2] = lo, hi
            out.append((sid, x, both))
        return out
    if width <= 2 * PEAK_BIN_S:
        sql = f"SELECT series_id, t_lo, t_hi, {', '.join(cols)} FROM sample_peaks WHERE {where} ORDER BY series_id, bin"
    else:
        aggs = [f"{'min' if c.startswith(prefix + 'lo') else 'max'}({c})" for c in cols]
        sql = (
            f"SELECT series_id, min(t_lo), max(t_hi), {', '.join(aggs)} FROM sample_peaks WHERE {where} "
            f"GROUP BY series_id, CAST((t_lo + {offset!r}) / {width!r} AS INTEGER) ORDER BY series_id, 2"
        )
    rows = conn.execute(sql).fetchall()
    arr = np.array(rows, dtype=np.float64).reshape(-1, 3 + 2 * nf) if rows else np.empty((0, 3 + 2 * nf))
    out = []
    for sid in ids:
        part = arr[arr[:, 0] == sid]
        n = len(part)
        x = np.empty(2 * n)
        x[0::2], x[1::2] = part[:, 1], part[:, 2]
        ys = np.full((_NF, 2 * n), np.nan)
        ys[:nf, 0::2], ys[:nf, 1::2] = part[:, 3 : 3 + nf].T, part[:, 3 + nf :].T
        out.append((sid, x, ys))
    return out


def _count(conn: sqlite3.Connection, series_id: int) -> int:
    return conn.execute(f"SELECT {count_sql('?')}", (series_id, series_id)).fetchone()[0]


def _fields(conn: sqlite3.Connection, ids: list[int], prefix: str) -> dict[int, tuple[np.ndarray, ...]]:
    """Per series: (t, interval seconds, every chart field [CHART_FIELDS, samples]) of every sample."""
    out = {}
    for sid, arrays in series_arrays(conn, ids).items():
        cols = dict(zip(BLOCK_COLUMNS, arrays, strict=True))
        ys = np.concatenate([field_arrays(cols, prefix), np.array(extra_arrays(cols, prefix))])
        out[sid] = (cols["t"], cols["i_seconds"], ys)
    return out


def load_points(
    store: Store,
    data: StoredRun,
    keys: list[SeriesKey],
    step_id: int | None,
    kind: str,
    bins: int = DEFAULT_BINS,
    fields: tuple[str, ...] = PEAK_FIELDS,
) -> LiveResults:
    """The chart points of ``keys`` for one step from its start, or every step (``step_id`` None) on the
    run's time axis, for one kind (each interval, or since the step's start), as LiveResults the charts
    draw. A point per stored sample; beyond 2 x ``bins`` samples per series, SQLite keeps each bin's
    minimum and maximum (the charts' own peak decimation), so memory and time do not grow with the run.
    ``fields``: the chart fields wanted; a long run's EXTRA_FIELDS are read only when asked for (NaN otherwise)."""
    extras = any(f in EXTRA_FIELDS for f in fields)
    live = LiveResults(update_seconds=1)
    steps = [s for s in data.run.steps if step_id is None or s.id == step_id]
    prefix = "i_" if kind == LAST else "w_"
    per_key: dict[SeriesKey, list[tuple[np.ndarray, np.ndarray]]] = {k: [] for k in keys}
    span = max(
        (data.offsets.get(s.id, 0.0) * (step_id is None) + data.ends.get(s.id, s.run_s) for s in steps),
        default=1.0,
    )
    width = max(span, 1.0) / bins
    with store.read("reading samples") as conn:
        # samples per series over the steps shown (counted on one series per step: a range of its key)
        firsts = [next(iter(data.series.get(s.id, {}).values()), None) for s in steps]
        decimate = sum(_count(conn, src) for src in firsts if src is not None) > 2 * bins
        for step in steps:
            offset = 0.0 if step_id is not None else data.offsets.get(step.id, 0.0)
            live.steps.append(StepMark(offset, f"{step.index + 1}: {step.spec_name}"))
            sources = {k: data.series.get(step.id, {}).get(k) for k in keys}
            wanted: dict[int, list[SeriesKey]] = {}  # ALL and its one manager may be one series
            for k, src in sources.items():
                if src is not None:
                    wanted.setdefault(src, []).append(k)
            if not wanted:
                continue
            if not decimate:
                arrays = _fields(conn, list(wanted), prefix)
                for sid in wanted:
                    if sid not in arrays:
                        continue
                    x, seconds, ys = arrays[sid]
                    if kind == WHOLE and len(x) > 1 and seconds[-1] <= 0:
                        # fio repeated its last report as the final one: only the whole numbers change
                        ys[:, -2] = ys[:, -1]
                    if len(x) > 1 and seconds[-1] <= 0:
                        x, ys = x[:-1], ys[:, :-1]
                    for k in wanted[sid]:
                        per_key[k].append((x + offset, ys))
            else:
                for sid, x, ys in _peaks(conn, list(wanted), prefix, offset, width, extras):
                    for k in wanted[sid]:
                        per_key[k].append((x + offset, ys))
    for k, parts in per_key.items():
        if not parts:
            continue
        # one line through the steps, as the live charts draw it (the dotted step lines mark the changes)
        xs = [x for x, _ys in parts]
        yss = [ys for _x, ys in parts]
        x = np.concatenate(xs)
        ys = np.concatenate(yss, axis=1).astype(np.float32)
        series = Series(n=len(x), x=x)
        series.values = {kind: ys, (WHOLE if kind == LAST else LAST): np.full_like(ys, np.nan)}
        live.series[k] = series
    live.revision += 1
    return live


@dataclass
class OverlayPart:
    """One side's step in an overlay segment."""

    label: str  # the series (a run)
    samples: list[ReplaySample]  # the step's ALL-level samples
    color: str = ""  # the run's colour (report.charts.run_color), the same in every chart of a comparison


def overlay(live: LiveResults, segments: list[tuple[str, list[OverlayPart]]]) -> list[SeriesKey]:
    """Runs on one time axis, step by step: each segment (a matched access specification) starts where
    the longest run's previous step ended, every run's step from the segment's start. One series per run
    label; returns their keys in first-seen order."""
    live.clear()
    keys: dict[str, SeriesKey] = {}
    x0 = 0.0
    for label, parts in segments:
        live.steps.append(StepMark(x0, label))
        longest = 0.0
        for part in parts:
            key = keys.setdefault(part.label, ("run", None, part.label))
            s = live.series.get(key)
            if s is None:
                s = live.series[key] = Series()
            if s.n:
                s.gap(x0)
            for smp in part.samples:
                s.append(x0 + smp.t, smp.whole, smp.interval)
                longest = max(longest, smp.t)
        x0 += longest + OVERLAY_GAP_S
    live.revision += 1
    return list(keys.values())
