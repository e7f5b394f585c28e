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
  error (file layout) give no sample either, and do not start the step's clock: its time 0 is the first
  report in which fio's I/O has begun, so the time fio spends laying out test files is not step time
  (``layout_s`` says how long it was, at least).

Disks: each manager sample carries its disks' windows (:mod:`app.engine.sampling.disk_telemetry`); the
manager's ``interval.disk_util`` is the busiest disk's utilisation in the window, ``whole.disk_util``
fio's own over the step so far.

Roll-up: ``Metrics.combine`` (rates and counters summed, latency I/O-weighted, maxima maxed);
histograms are summed as arrays over fio's 1856 buckets and turned into Metrics' dicts once per
level (json+ bins are ~300 per job, so dict merging dominated the cost). A level with one child
hands out the child's Metrics object: treat Metrics from here as read-only. Trim I/O is ignored
(Iometer has none).

Known limit: a job that never records latency (``gtod_reduce=1``, or ``disable_lat`` with
``disable_clat``) looks like a job in ramp_time and gives no samples; Fiometer's own jobs always
measure latency (``lat_percentiles=1``).

Its consumer is the runner's step loop (``engine.run.step_loop``): each manager's snapshot goes to
``update``, ``tick`` hands out ALL's overdue slots, ``final_results`` the step's results (tests drive it
the same way, or through the runner).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from app.engine.common.fio_buckets import BIN_KEY, BIN_VALUE, PLAT_NR, plat_val_to_idx
from app.engine.sampling.all_clock import AllClock
from app.engine.sampling.disk_telemetry import DiskContext, DiskTracker, ManagerDisks
from app.engine.transports.transport import Snapshot
from app.model.bucket_hist import BucketHist
from app.model.metrics import Metrics

LEVELS = ("target", "worker", "manager", "all")
_TICK_S = 0.001  # fio's clock counts milliseconds
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
    disks: ManagerDisks | None = None  # manager samples: the manager's disks in this report
    # the report came after ALL had shown its second (ALL: a manager's report for this second did): marked,
    # placed in the second fio measured it in all the same
    late: bool = False


# --- fio's latency histogram ---------------------------------------------------------------------
# json+ lists only non-empty buckets, keyed by their value (app.engine.common.fio_buckets). Histograms are
# differenced and summed as numpy arrays over all buckets; Metrics get lazy mappings (BucketHist).
BUCKET_NS = np.array(BIN_VALUE, dtype=np.int64)
_KEY_INDEX = {k: i for i, k in enumerate(BIN_KEY)}
_NO_HIST = np.zeros(PLAT_NR, dtype=np.int64)  # shared, never written to


def _hist_dict(arr: np.ndarray) -> Mapping[int, int]:
    if arr is _NO_HIST:
        return {}
    return BucketHist(BUCKET_NS, arr)


def _job_hists(
    bins: Mapping[str, int], base: np.ndarray
) -> tuple[np.ndarray, np.ndarray, Mapping[int, int], Mapping[int, int]]:
    """From fio's cumulative json+ bins and the previous cumulative array: the cumulative and
    interval arrays (for the roll-up) and the same two as dicts (this job's Metrics)."""
    if not bins:
        return _NO_HIST, _NO_HIST, {}, {}
    n = len(bins)
    counts = np.fromiter(bins.values(), dtype=np.int64, count=n)
    cur = np.zeros(PLAT_NR, dtype=np.int64)
    try:
        idx = np.fromiter(map(_KEY_INDEX.__getitem__, bins), dtype=np.intp, count=n)
    except KeyError:  # a bucket name this table does not know: place it as fio would place the value
        np.add.at(cur, [plat_val_to_idx(int(k)) for k in bins], counts)
        delta = np.maximum(cur - base, 0)
        return cur, delta, _hist_dict(cur), _hist_dict(delta)
    cur[idx] = counts
    delta = np.maximum(cur - base, 0)
    return cur, delta, BucketHist(BUCKET_NS, cur), BucketHist(BUCKET_NS, delta)


class _Part:
    """Metrics with histograms left empty (so Metrics.combine stays cheap) plus the read and
    write histograms as bucket arrays; ``metrics()`` gives the finished Metrics, made once."""

    __slots__ = ("m", "rd", "wr", "_done")

    def __init__(self, m: Metrics, rd: np.ndarray, wr: np.ndarray, done: Metrics | None = None) -> None:
        self.m, self.rd, self.wr, self._done = m, rd, wr, done

    def metrics(self) -> Metrics:
        if self._done is None:
            self._done = replace(self.m, read_hist=_hist_dict(self.rd), write_hist=_hist_dict(self.wr))
        return self._done

    @staticmethod
    def combine(parts: Sequence[_Part]) -> _Part:
        return _Part(
            Metrics.combine(p.m for p in parts),
            sum((p.rd for p in parts), _NO_HIST),
            sum((p.wr for p in parts), _NO_HIST),
        )

    @staticmethod
    def sum(parts: Sequence[_Part]) -> _Part:
        """Roll-up; one child is passed on as it is (its numbers are the sum)."""
        return parts[0] if len(parts) == 1 else _Part.combine(parts)


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
    hist: np.ndarray = field(default_factory=lambda: _NO_HIST)

    def goes_down_from(self, base: _Dir) -> bool:
        """The counters were reset (ramp_time ended). Runtime alone is no sign: fio's final report
        can carry a runtime 1 ms shorter than the last interim one (seen on fio 3.31)."""
        return self.ios < base.ios or self.bytes < base.bytes or self.lat_n < base.lat_n


_ZERO_DIR = _Dir()


def _read_dir(d: Mapping[str, Any]) -> tuple[_Dir, Mapping[str, int], str | None]:
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


def _interval_max(cur: _Dir, base: _Dir, delta: np.ndarray, n: int) -> float:
    """delta: this interval's histogram as bucket counts."""
    if n <= 0:
        return 0.0
    if cur.lat_max_ns > base.lat_max_ns:
        return cur.lat_max_ns
    nz = delta.nonzero()[0]
    if len(nz):
        return min(float(BUCKET_NS[nz[-1]]), cur.lat_max_ns)
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
        parts = self.measure(job)
        return None if parts is None else (parts[0].metrics(), parts[1].metrics())

    def measure(self, job: Mapping[str, Any]) -> tuple[_Part, _Part] | None:
        """Like update(), with histograms left as arrays for the roll-up."""
        (rd, rd_bins, rd_src), (wr, wr_bins, wr_src) = (
            _read_dir(job.get("read") or {}),
            _read_dir(job.get("write") or {}),
        )
        errors = _errors(job)
        runtime = max(rd.runtime_ms, wr.runtime_ms)
        if runtime == 0 and errors == 0:
            return None  # laying out files / not started
        if rd.ios + wr.ios > 0 and rd.lat_n + wr.lat_n == 0:
            return None  # ramp_time: fio counts I/O but records no latency yet
        if rd.goes_down_from(self._base["read"]) or wr.goes_down_from(self._base["write"]):
            self._reset()
        self.hist_source = self.hist_source or rd_src or wr_src
        b_rd, b_wr = self._base["read"], self._base["write"]
        d_runtime = max(rd.runtime_ms - b_rd.runtime_ms, wr.runtime_ms - b_wr.runtime_ms)

        job_rt = int(job.get("job_runtime") or 0)
        usr, sys_ = float(job.get("usr_cpu") or 0.0), float(job.get("sys_cpu") or 0.0)
        usr_ms, sys_ms = usr * job_rt / 100.0, sys_ * job_rt / 100.0
        b_usr_ms, b_sys_ms, b_job_rt = self._base_cpu
        d_job_rt = job_rt - b_job_rt
        iv_fields: dict[str, Any] = {
            "seconds": max(d_runtime, 0) / 1000.0,
            "errors": max(errors - self._base_errors, 0),
            "usr_cpu": max(usr_ms - b_usr_ms, 0.0) * 100.0 / d_job_rt if d_job_rt > 0 else 0.0,
            "sys_cpu": max(sys_ms - b_sys_ms, 0.0) * 100.0 / d_job_rt if d_job_rt > 0 else 0.0,
        }
        wh_fields: dict[str, Any] = {
            "seconds": runtime / 1000.0,
            "errors": errors,
            "usr_cpu": usr,
            "sys_cpu": sys_,
        }
        iv_hists: dict[str, Any] = {}
        wh_hists: dict[str, Any] = {}
        deltas: list[np.ndarray] = []
        for dd, c, base, bins in (("read", rd, b_rd, rd_bins), ("write", wr, b_wr, wr_bins)):
            c.hist, delta, wh_hists[f"{dd}_hist"], iv_hist = _job_hists(bins, base.hist)
            iv_hists[f"{dd}_hist"] = iv_hist
            deltas.append(delta)
            d_n = c.lat_n - base.lat_n
            iv_fields.update(
                _dir_fields(
                    dd,
                    c.ios - base.ios,
                    c.bytes - base.bytes,
                    (c.runtime_ms - base.runtime_ms) or d_runtime,
                    max(c.lat_sum_ns - base.lat_sum_ns, 0.0) if d_n > 0 else 0.0,
                    d_n,
                    _interval_max(c, base, delta, d_n),
                )
            )
            wh_fields.update(
                _dir_fields(dd, c.ios, c.bytes, c.runtime_ms, c.lat_sum_ns, c.lat_n, c.lat_max_ns)
            )
        self._base = {"read": rd, "write": wr}
        self._base_errors = errors
        self._base_cpu = (usr_ms, sys_ms, job_rt)
        return (
            _Part(Metrics(**iv_fields), deltas[0], deltas[1], done=Metrics(**iv_fields, **iv_hists)),
            _Part(Metrics(**wh_fields), rd.hist, wr.hist, done=Metrics(**wh_fields, **wh_hists)),
        )

    def _reset(self) -> None:
        self._base = {"read": _ZERO_DIR, "write": _ZERO_DIR}
        self._base_errors = 0
        self._base_cpu = (0.0, 0.0, 0)
        self.resets += 1


_FIELD_NAMES = {
    dd: tuple(f"{dd}_{x}" for x in ("ios", "bytes", "iops", "bps", "lat_sum_ns", "lat_n", "lat_max_ns"))
    for dd in ("read", "write")
}


def _dir_fields(
    dd: str, ios: int, nbytes: int, rt_ms: int, lat_sum: float, lat_n: int, lat_max: float
) -> dict[str, Any]:
    """One direction's Metrics fields; rates are counts over the direction's own runtime."""
    values = (ios, nbytes, _rate(ios, rt_ms), _rate(nbytes, rt_ms), lat_sum, lat_n, lat_max)
    return dict(zip(_FIELD_NAMES[dd], values, strict=True))


# --- roll-up --------------------------------------------------------------------------------------
def _max_disk_util(disk_util: Sequence[Mapping[str, Any]]) -> float | None:
    utils = [float(d["util"]) for d in disk_util if "util" in d]
    return max(utils) if utils else None


class StepTelemetry:
    """All managers of one test step. ``job_map``: fio job name -> (manager, worker_key, target_key);
    job names must be unique across the step (numjobs clones share their name and are summed).
    ALL is summed per slot of the step's ``interval`` grid (:mod:`app.engine.sampling.all_clock`)."""

    def __init__(
        self,
        job_map: Mapping[str, tuple[str, str, str]],
        interval: float = 1.0,
        disks: DiskContext | None = None,
    ) -> None:
        self._map = dict(job_map)
        self.disks = DiskTracker(disks, interval)
        self._managers = list(dict.fromkeys(m for m, _, _ in self._map.values()))
        self._trackers: dict[tuple[str, str, int], JobTracker] = {}
        self._t0: float | None = None
        self.all_clock = AllClock(interval, self._managers)
        self._final: set[str] = set()
        self._latest: dict[tuple[str, str | None, str | None, str], Sample] = {}
        self.unmapped: set[tuple[str, str]] = set()  # (manager, job name) reported but not in job_map
        self.hist_sources: set[str] = set()  # which fio histogram fed the percentiles
        # manager -> when its measured I/O began (time.monotonic()), one rule for every fio version and for
        # local fio: a report's arrival less the runtime fio put in it, the least of its interim reports
        # (the report that got through fastest bounds it best; transport delay only makes it later)
        self.io_start: dict[str, float] = {}
        # manager -> seconds fio spent before its I/O began, from its first report (written while it laid out
        # test files: runtime 0) to its I/O's start (a later report's arrival less its runtime); at least that
        self.layout_s: dict[str, float] = {}
        self._waiting_since: dict[str, float] = {}  # manager -> its first report, while none shows I/O
        self._running: set[str] = set()  # managers whose I/O has begun
        self._last_at: dict[str, float] = {}  # manager -> its newest report's time on fio's clock

    def update(self, snap: Snapshot) -> list[Sample]:
        """Samples for ``snap.manager``'s targets, workers, the manager and ALL (in that order);
        empty while none of its jobs is measuring yet."""
        mgr = snap.manager
        self._clock(snap)
        t = snap.received - self._t0 if self._t0 is not None else 0.0
        if snap.final:
            self._final.add(mgr)
        disks = self.disks.update(snap)
        targets: dict[tuple[str, str], list[tuple[_Part, _Part]]] = {}
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
            result = tracker.measure(job)
            if tracker.hist_source:
                self.hist_sources.add(tracker.hist_source)
            if result is not None:
                targets.setdefault((where[1], where[2]), []).append(result)
        if not targets:
            return []

        levels: list[tuple[str, str, str | None, _Part, _Part]] = []
        by_worker: dict[str, list[tuple[_Part, _Part]]] = {}
        for (worker, target), parts in targets.items():
            iv, wh = _Part.sum([p[0] for p in parts]), _Part.sum([p[1] for p in parts])
            levels.append(("target", target, worker, iv, wh))
            by_worker.setdefault(worker, []).append((iv, wh))
        workers = [
            (w, _Part.sum([p[0] for p in ps]), _Part.sum([p[1] for p in ps])) for w, ps in by_worker.items()
        ]
        levels.extend(("worker", w, w, iv, wh) for w, iv, wh in workers)
        m_iv = _Part.combine([iv for _, iv, _ in workers])
        m_wh = _Part.combine([wh for _, _, wh in workers])
        m_iv.m.disk_util = disks.interval_util()  # the busiest disk in this window
        m_wh.m.disk_util = _max_disk_util(snap.disk_util)  # fio's own, over the step so far
        # every level on fio's clock: the report's samples go where its jobs' runtime puts them, as ALL's
        # second does, not at its arrival (``t``), which a slow or bunching link delays
        fio_t = m_wh.m.seconds
        at = self.all_clock.fio_time(mgr, fio_t)
        last = self._last_at.get(mgr)
        if last is not None and at <= last and (m_iv.m.seconds > 0 or m_iv.m.ios or m_iv.m.errors):
            # a report of its own at its slowest job's time (another job went on, or fio's final report
            # came 1 ms short of the last one): a moment of its own, so that the store keeps both
            at = last + _TICK_S
        self._last_at[mgr] = at
        out = [
            Sample(mgr, lv, key, at, iv.metrics(), wh.metrics(), snap.final, w)
            for lv, key, w, iv, wh in levels
        ]
        m_sample = Sample(mgr, "manager", mgr, at, m_iv.metrics(), m_wh.metrics(), snap.final, disks=disks)
        if not snap.final:  # (a final report may carry its predecessor's arrival time)
            start = snap.received - m_wh.m.seconds
            self.io_start[mgr] = min(start, self.io_start.get(mgr, start))
        out.append(m_sample)
        due = self.all_clock.add(mgr, t, m_sample.interval, m_sample.whole, fio_t=fio_t, at=at)
        for s in out:
            s.late = self.all_clock.was_late  # came after ALL had shown its second: marked, not moved
            self._latest[(s.level, s.manager, s.worker, s.key)] = s
        if snap.final:
            due += self.all_clock.done(mgr)
        return out + self._all_samples(due)

    def _all_samples(self, due: list[tuple[float, Metrics, Metrics]]) -> list[Sample]:
        all_final = all(m in self._final for m in self._managers)
        out = []
        several = len(self._managers) > 1
        for i, (t, iv, wh) in enumerate(due):
            s = Sample(
                None,
                "all",
                ALL_KEY,
                t,
                iv,
                wh,
                all_final and i == len(due) - 1,
                late=several and self.all_clock.is_late(t),
            )
            key = (s.level, s.manager, s.worker, s.key)
            latest = self._latest.get(key)
            if latest is None or t >= latest.t:  # a late second sent again is not the step's latest
                self._latest[key] = s
            out.append(s)
        return out

    def _clock(self, snap: Snapshot) -> None:
        """Start the step's clock at the first report whose jobs run (or failed); note fio's time before."""
        mgr = snap.manager
        if mgr in self._running:
            return
        runtime_ms = max(
            (int((j.get(d) or {}).get("runtime") or 0) for j in snap.jobs for d in ("read", "write", "trim")),
            default=0,
        )
        if runtime_ms == 0 and not any(_errors(j) for j in snap.jobs):
            self._waiting_since.setdefault(mgr, snap.received)  # laying out files / not started
            return
        self._running.add(mgr)
        if self._t0 is None:
            self._t0 = snap.received
        if mgr in self._waiting_since:
            self.layout_s[mgr] = max(snap.received - runtime_ms / 1000.0 - self._waiting_since[mgr], 0.0)

    def manager_done(self, manager: str, failed: bool = False) -> list[Sample]:
        """A manager ended (even without a final report): ALL slots stop waiting for it. A manager that
        ``failed`` counts in ALL's whole-step numbers with its I/Os over the step's time."""
        return self._all_samples(self.all_clock.done(manager, failed=failed and manager not in self._final))

    def tick(self, now: float) -> list[Sample]:
        """ALL samples for slots overdue at ``now`` (time.monotonic(), like Snapshot.received)."""
        return [] if self._t0 is None else self._all_samples(self.all_clock.tick(now - self._t0))

    def flush(self) -> list[Sample]:
        """The ALL samples still held back (at the end of the step)."""
        return self._all_samples(self.all_clock.flush())

    def final_results(self) -> list[Sample]:
        """The latest sample of every target, worker and manager of every manager, then ALL.
        ``whole`` holds the step's results; ``final`` says whether they come from fio's final
        report (False for a manager that was killed or went silent)."""
        order = {level: i for i, level in enumerate(LEVELS)}
        latest = dict(self._latest)
        all_key = ("all", None, None, ALL_KEY)
        if all_key in latest:  # the step's ALL: every manager's latest whole-step numbers
            latest[all_key] = replace(latest[all_key], whole=self.all_clock.whole())
        return sorted(
            latest.values(),
            key=lambda s: (
                s.manager is None,
                self._managers.index(s.manager) if s.manager else 0,
                order[s.level],
            ),
        )
