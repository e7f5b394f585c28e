"""Cumulative fio reports -> per-interval and whole-step Metrics per target, worker, manager and ALL.

Per fio job (clone), consecutive cumulative job objects are differenced:
- I/O counts and bytes: differences; rates over the job's own Δruntime (ms), so a leaf's interval
  rate is exactly what fio did in that window, and the whole-step rate is io/runtime as fio
  computes its ``iops``/``bw_bytes``.
- Latency is fio's ``lat_ns`` (submit to completion, Iometer's response time), ``clat_ns`` only if
  the job measured no total latency. Means: Δ(mean·N)/ΔN.
- Histogram: the json+ ``bins`` of ``lat_ns`` when present (fio 3.33 prints them there with
  ``lat_percentiles=1``), else of ``clat_ns``. Interval percentiles come from Δbins.
- Interval max: fio's max is cumulative. If it grew, the new max happened in this interval and is
  exact. Otherwise the estimate is the highest non-empty bucket of the Δhistogram (fio's bucket
  value is the bucket's middle, so capped at the cumulative max); without a histogram, the
  cumulative max (an upper bound).
- Resets: a counter going down (ramp_time ended) resets the baseline to zero. While a job ramps,
  fio counts I/O but records no latency, so "I/O but no latency samples" is read as ramping:
  no sample, and the baseline stays zero, which also catches a ramp end where the counters did
  not go down (ramp shorter than the interval, seen on fio 3.33). Jobs with runtime 0 and no
  error (file layout) give no sample either.

Roll-up: ``Metrics.combine`` (rates and counters summed, latency I/O-weighted, histograms
merged). Metrics objects handed out are shared between samples: treat them as read-only.

Consumer API: ``follow_step(transports, telemetry)`` is one blocking iterator over all managers of
a step, yielding ``SampleBatch`` (the snapshot and its samples), ``Message`` and ``Finished``;
it ends after every transport's Finished. The CLI loops over it; the GUI loops in a worker thread
and re-emits each item as a queued Qt signal.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.engine.transport import Finished, Message, Snapshot, Transport
from app.model.metrics import Metrics

LEVELS = ("target", "worker", "manager", "all")
ALL_KEY = "ALL"


@dataclass
class Sample:
    """Numbers for one level at one update. ``interval`` is Iometer's LAST_UPDATE, ``whole`` its
    WHOLE_TEST. ``worker`` is the worker key for target and worker samples (target keys need not
    be unique across workers), else None. An interval can be zero-length (``seconds == 0``) when
    fio repeats its last report as the final one."""

    manager: str | None
    level: str
    key: str
    t: float  # seconds since the step's first snapshot
    interval: Metrics
    whole: Metrics
    final: bool
    worker: str | None = None


# --- one fio job ----------------------------------------------------------------------------------
@dataclass
class _Dir:
    """Cumulative numbers of one direction (read or write) of one job."""

    ios: int = 0
    bytes: int = 0
    runtime_ms: int = 0
    lat_n: int = 0
    lat_sum_ns: float = 0.0
    lat_max_ns: float = 0.0
    bins: dict[str, int] | None = None  # fio's json+ bins as printed (string keys), cumulative
    hist: dict[int, int] | None = None  # the same with int keys, built incrementally

    def goes_down_from(self, base: _Dir) -> bool:
        return (
            self.ios < base.ios
            or self.bytes < base.bytes
            or self.runtime_ms < base.runtime_ms
            or self.lat_n < base.lat_n
        )


_ZERO_DIR = _Dir(bins={}, hist={})


def _read_dir(d: Mapping[str, Any]) -> tuple[_Dir, dict[str, int], str | None]:
    lat = d.get("lat_ns") or {}
    clat = d.get("clat_ns") or {}
    src = lat if lat.get("N") else clat  # total latency; completion latency only if lat is off
    n = int(src.get("N") or 0)
    if "bins" in lat:
        bins, hist_src = lat["bins"], "lat_ns"
    elif "bins" in clat:
        bins, hist_src = clat["bins"], "clat_ns"
    else:
        bins, hist_src = {}, None
    cur = _Dir(
        ios=int(d.get("total_ios") or 0),
        bytes=int(d.get("io_bytes") or 0),
        runtime_ms=int(d.get("runtime") or 0),
        lat_n=n,
        lat_sum_ns=float(src.get("mean") or 0.0) * n,
        lat_max_ns=float(src.get("max") or 0.0) if n else 0.0,
    )
    return cur, bins, hist_src


def _diff_bins(cur: _Dir, bins: dict[str, int], base: _Dir) -> dict[int, int]:
    """Fill cur.bins/cur.hist (cumulative) and return the interval histogram (int keys)."""
    prev_bins = base.bins or {}
    hist = dict(base.hist or {})
    delta: dict[int, int] = {}
    get = prev_bins.get
    for k, v in bins.items():
        dv = v - get(k, 0)
        if dv:
            ik = int(k)
            hist[ik] = v
            if dv > 0:
                delta[ik] = dv
    cur.bins = bins
    cur.hist = hist
    return delta


def _interval_max(cur: _Dir, base: _Dir, delta_hist: dict[int, int], n: int) -> float:
    if n <= 0:
        return 0.0
    if cur.lat_max_ns > base.lat_max_ns:
        return cur.lat_max_ns
    if delta_hist:
        return min(float(max(delta_hist)), cur.lat_max_ns)
    return cur.lat_max_ns


def _rate(count: float, ms: int) -> float:
    return count * 1000.0 / ms if ms > 0 else 0.0


def _errors(job: Mapping[str, Any]) -> int:
    if "total_err" in job:  # only with continue_on_error
        return int(job["total_err"] or 0)
    return 1 if job.get("error") else 0


class JobTracker:
    """One fio job (one clone with numjobs>1): cumulative job objects in, Metrics out."""

    def __init__(self) -> None:
        self._base: dict[str, _Dir] = {"read": _ZERO_DIR, "write": _ZERO_DIR}
        self._base_errors = 0
        self._base_cpu = (0.0, 0.0, 0)  # usr ms, sys ms, job_runtime ms
        self.hist_source: str | None = None  # "lat_ns" or "clat_ns", once seen
        self.resets = 0

    def update(self, job: Mapping[str, Any]) -> tuple[Metrics, Metrics] | None:
        """(interval, whole) for this report, or None while the job is not measuring yet."""
        parsed = {dd: _read_dir(job.get(dd) or {}) for dd in ("read", "write")}
        cur = {dd: p[0] for dd, p in parsed.items()}
        errors = _errors(job)
        runtime = max(c.runtime_ms for c in cur.values())
        ios = sum(c.ios for c in cur.values())
        if runtime == 0 and errors == 0:
            return None  # laying out files / not started
        if ios > 0 and sum(c.lat_n for c in cur.values()) == 0:
            return None  # ramp_time: fio counts I/O but records no latency yet
        if any(cur[dd].goes_down_from(self._base[dd]) for dd in cur):
            self._reset()
        for _, _, src in parsed.values():
            self.hist_source = self.hist_source or src

        interval, whole = Metrics(), Metrics()
        job_rt = int(job.get("job_runtime") or 0)
        usr_ms = float(job.get("usr_cpu") or 0.0) * job_rt / 100.0
        sys_ms = float(job.get("sys_cpu") or 0.0) * job_rt / 100.0
        d_job_rt = job_rt - self._base_cpu[2]
        d_runtime = max(cur[dd].runtime_ms - self._base[dd].runtime_ms for dd in cur)
        for dd in ("read", "write"):
            c, base = cur[dd], self._base[dd]
            delta_hist = _diff_bins(c, parsed[dd][1], base)
            d_ios, d_bytes = c.ios - base.ios, c.bytes - base.bytes
            d_rt = (c.runtime_ms - base.runtime_ms) or d_runtime
            d_n = c.lat_n - base.lat_n
            d_sum = max(c.lat_sum_ns - base.lat_sum_ns, 0.0) if d_n > 0 else 0.0
            self._fill(interval, dd, d_ios, d_bytes, d_rt, d_sum, d_n, _interval_max(c, base, delta_hist, d_n), delta_hist)
            self._fill(whole, dd, c.ios, c.bytes, c.runtime_ms, c.lat_sum_ns, c.lat_n, c.lat_max_ns, c.hist or {})
        interval.seconds = max(d_runtime, 0) / 1000.0
        whole.seconds = runtime / 1000.0
        interval.errors = max(errors - self._base_errors, 0)
        whole.errors = errors
        if d_job_rt > 0:
            interval.usr_cpu = max(usr_ms - self._base_cpu[0], 0.0) * 100.0 / d_job_rt
            interval.sys_cpu = max(sys_ms - self._base_cpu[1], 0.0) * 100.0 / d_job_rt
        whole.usr_cpu = float(job.get("usr_cpu") or 0.0)
        whole.sys_cpu = float(job.get("sys_cpu") or 0.0)
        self._base = cur
        self._base_errors = errors
        self._base_cpu = (usr_ms, sys_ms, job_rt)
        return interval, whole

    def _reset(self) -> None:
        self._base = {"read": _ZERO_DIR, "write": _ZERO_DIR}
        self._base_errors = 0
        self._base_cpu = (0.0, 0.0, 0)
        self.resets += 1

    @staticmethod
    def _fill(
        m: Metrics, dd: str, ios: int, nbytes: int, rt_ms: int, lat_sum: float, lat_n: int, lat_max: float, hist: dict[int, int]
    ) -> None:
        setattr(m, f"{dd}_ios", ios)
        setattr(m, f"{dd}_bytes", nbytes)
        setattr(m, f"{dd}_iops", _rate(ios, rt_ms))
        setattr(m, f"{dd}_bps", _rate(nbytes, rt_ms))
        setattr(m, f"{dd}_lat_sum_ns", lat_sum)
        setattr(m, f"{dd}_lat_n", lat_n)
        setattr(m, f"{dd}_lat_max_ns", lat_max)
        setattr(m, f"{dd}_hist", hist)


# --- roll-up --------------------------------------------------------------------------------------
def _sum(parts: Sequence[Metrics]) -> Metrics:
    return parts[0] if len(parts) == 1 else Metrics.combine(parts)


def _max_disk_util(disk_util: Sequence[Mapping[str, Any]]) -> float | None:
    utils = [float(d["util"]) for d in disk_util if "util" in d]
    return max(utils) if utils else None


class StepTelemetry:
    """All managers of one test step. ``job_map``: fio job name -> (manager, worker_key, target_key);
    job names must be unique across the step (numjobs clones share their name and are summed)."""

    def __init__(self, job_map: Mapping[str, tuple[str, str, str]]) -> None:
        self._map = dict(job_map)
        self._managers = list(dict.fromkeys(m for m, _, _ in self._map.values()))
        self._trackers: dict[tuple[str, str, int], JobTracker] = {}
        self._t0: float | None = None
        self._mgr: dict[str, tuple[Metrics, Metrics]] = {}
        self._final: set[str] = set()
        self._latest: dict[tuple[str, str | None, str | None, str], Sample] = {}
        self.unmapped: set[tuple[str, str]] = set()  # (manager, job name) reported but not in job_map
        self.hist_sources: set[str] = set()  # which fio histogram fed the percentiles

    def update(self, snap: Snapshot) -> list[Sample]:
        """Samples for ``snap.manager``'s targets, workers, the manager and ALL (in that order);
        empty while none of its jobs is measuring yet."""
        if self._t0 is None:
            self._t0 = snap.received
        t = snap.received - self._t0
        mgr = snap.manager
        if snap.final:
            self._final.add(mgr)
        targets: dict[tuple[str, str], list[tuple[Metrics, Metrics]]] = {}
        seen: dict[str, int] = {}
        for job in snap.jobs:
            name = str(job.get("jobname"))
            idx = seen[name] = seen.get(name, -1) + 1
            where = self._map.get(name)
            if where is None or where[0] != mgr:
                self.unmapped.add((mgr, name))
                continue
            tracker = self._trackers.get((mgr, name, idx))
            if tracker is None:
                tracker = self._trackers[(mgr, name, idx)] = JobTracker()
            result = tracker.update(job)
            if tracker.hist_source:
                self.hist_sources.add(tracker.hist_source)
            if result is not None:
                targets.setdefault((where[1], where[2]), []).append(result)
        if not targets:
            return []

        out: list[Sample] = []
        workers: dict[str, list[tuple[Metrics, Metrics]]] = {}
        for (worker, target), parts in targets.items():
            iv, wh = _sum([p[0] for p in parts]), _sum([p[1] for p in parts])
            out.append(Sample(mgr, "target", target, t, iv, wh, snap.final, worker))
            workers.setdefault(worker, []).append((iv, wh))
        for worker, parts in workers.items():
            iv, wh = _sum([p[0] for p in parts]), _sum([p[1] for p in parts])
            out.append(Sample(mgr, "worker", worker, t, iv, wh, snap.final, worker))
        m_iv = Metrics.combine(s.interval for s in out if s.level == "worker")
        m_wh = Metrics.combine(s.whole for s in out if s.level == "worker")
        m_iv.disk_util = m_wh.disk_util = _max_disk_util(snap.disk_util)
        self._mgr[mgr] = (m_iv, m_wh)
        out.append(Sample(mgr, "manager", mgr, t, m_iv, m_wh, snap.final))
        a_iv = Metrics.combine(iv for iv, _ in self._mgr.values())
        a_wh = Metrics.combine(wh for _, wh in self._mgr.values())
        all_final = all(m in self._final for m in self._managers)
        out.append(Sample(None, "all", ALL_KEY, t, a_iv, a_wh, all_final))
        for s in out:
            self._latest[(s.level, s.manager, s.worker, s.key)] = s
        return out

    def final_results(self) -> list[Sample]:
        """The latest sample of every target, worker and manager of every manager, then ALL.
        ``whole`` holds the step's results; ``final`` says whether they come from fio's final
        report (False for a manager that was killed or went silent)."""
        order = {level: i for i, level in enumerate(LEVELS)}
        return sorted(
            self._latest.values(),
            key=lambda s: (s.level == "all", self._managers.index(s.manager) if s.manager in self._managers else 0, order[s.level]),
        )


# --- consumer API ---------------------------------------------------------------------------------
@dataclass
class SampleBatch:
    snapshot: Snapshot  # the raw report (its ``raw`` text is kept for the final one)
    samples: list[Sample]


StepUpdate = SampleBatch | Message | Finished


def follow_step(transports: Sequence[Transport], telemetry: StepTelemetry) -> Iterator[StepUpdate]:
    """Merge the events of already-started transports into one blocking iterator (module doc)."""
    q: queue.Queue[Any] = queue.Queue()

    def pump(tr: Transport) -> None:
        finished = False
        try:
            for ev in tr.events():
                finished = finished or isinstance(ev, Finished)
                q.put(ev)
        except Exception as e:  # a broken transport must not hang the step
            if not finished:
                q.put(Finished(tr.name, ok=False, reason=f"lost the events of {tr.name}: {e}"))
                finished = True
        if not finished:
            q.put(Finished(tr.name, ok=False, reason=f"{tr.name} ended without saying why"))

    for tr in transports:
        threading.Thread(target=pump, args=(tr,), name=f"follow-{tr.name}", daemon=True).start()
    remaining = len(transports)
    while remaining:
        ev = q.get()
        if isinstance(ev, Snapshot):
            yield SampleBatch(ev, telemetry.update(ev))
            continue
        if isinstance(ev, Finished):
            remaining -= 1
        yield ev
