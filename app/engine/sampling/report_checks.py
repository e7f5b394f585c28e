"""Plausibility checks on fio's reports before any number is used.

A report from a broken or hostile server (or a decoding mistake) can hold values no fio run can
produce: NaN, negative or huge counters, runtimes longer than the step has lasted, I/O counters
going backwards. Each would otherwise surface far away (a traceback in the store, "internal
error", a plot off the scale). ``ReportChecker.check`` names the first impossible value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

MAX_COUNTER = 1 << 62  # far above any real count; below SQLite's signed 64-bit integers
RUNTIME_SLACK_MS = 5_000  # fio's clocks and ours start at slightly different moments
DIRECTIONS = ("read", "write", "trim")
COUNTERS = ("io_bytes", "total_ios", "runtime")
LATENCIES = ("lat_ns", "clat_ns", "slat_ns")


def _bad_number(value: Any, *, integer: bool) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return True
    if isinstance(value, float) and not math.isfinite(value):
        return True
    return value < 0 or (integer and value >= MAX_COUNTER)


def _bad_direction(where: str, dd: str, d: Mapping[str, Any], elapsed_s: float | None) -> str | None:
    """The first impossible value in one direction's numbers (counters, latencies, a runtime longer than
    the step has lasted), or None. ``where``: 'job X'; ``dd``: the direction."""
    for key in COUNTERS:
        v = d.get(key, 0)
        if _bad_number(v, integer=True):
            return f"{where}: {dd}.{key} = {v!r} (not a count between 0 and 2^62)"
    for lat in LATENCIES:
        stat = d.get(lat)
        if not isinstance(stat, Mapping):
            continue
        for key in ("N", "mean", "max", "min"):
            if key in stat and _bad_number(stat[key], integer=key == "N"):
                return f"{where}: {dd}.{lat}.{key} = {stat[key]!r} (not a finite, non-negative number)"
    runtime = int(d.get("runtime", 0))
    if elapsed_s is not None and runtime > elapsed_s * 1000 + RUNTIME_SLACK_MS:
        return f"{where}: {dd}.runtime = {runtime} ms, but the step has run for only {elapsed_s:.1f} s"
    return None


class ReportChecker:
    """One manager's reports of one step, in order. ``ramp`` allows each job one reset of its
    counters (fio zeroes them when ramp_time ends)."""

    def __init__(self, *, ramp: bool = False) -> None:
        self.ramp = ramp
        self._last: dict[tuple[str, int, str], tuple[int, int]] = {}
        self._resets: set[tuple[str, int]] = set()

    def check(self, jobs: Sequence[Mapping[str, Any]], *, elapsed_s: float | None = None) -> str | None:
        """The first impossible value as 'job X: read.total_ios = -1 (why)', or None."""
        seen: dict[str, int] = {}
        updates: dict[tuple[str, int, str], tuple[int, int]] = {}
        for job in jobs:
            name = str(job.get("jobname"))
            idx = seen[name] = seen.get(name, -1) + 1
            where = f"job {name!r}"
            for key in ("usr_cpu", "sys_cpu", "job_runtime"):
                if key in job and _bad_number(job[key], integer=False):
                    return f"{where}: {key} = {job[key]!r} (not a finite, non-negative number)"
            reset = False
            for dd in DIRECTIONS:
                d = job.get(dd)
                if not isinstance(d, Mapping):
                    continue
                bad = _bad_direction(where, dd, d, elapsed_s)
                if bad is not None:
                    return bad
                cur = (int(d.get("total_ios", 0)), int(d.get("io_bytes", 0)))
                prev = self._last.get((name, idx, dd))
                if prev is not None and (cur[0] < prev[0] or cur[1] < prev[1]):
                    if not self.ramp or (name, idx) in self._resets:
                        which = "total_ios" if cur[0] < prev[0] else "io_bytes"
                        i = 0 if which == "total_ios" else 1
                        return f"{where}: {dd}.{which} went backwards from {prev[i]} to {cur[i]}"
                    reset = True
                updates[(name, idx, dd)] = cur
            if reset:
                self._resets.add((name, idx))
        self._last.update(updates)
        return None
