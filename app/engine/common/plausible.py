"""Is a decoded fio report physically possible? One rule for every number a server can send (Qt-free).

Every number in a report (counters, bytes, times, latencies, percentiles, disk counters) is finite, not
negative, and below 2^53: 9 x 10^15 I/Os or bytes (8 PiB) in one step, or 104 days in nanoseconds, is far
beyond any real run, and a sum of 512 such values still fits the signed 64-bit integers of SQLite and of
the JSON writer, and a float64 exactly. A job's name is Fiometer's own ASCII text (a server's bytes that
were not UTF-8 show as U+FFFD). So a value that passes here cannot crash a sink (the store, JSON output,
export, pickling to the run's process), and one that does not fails its manager with the value named.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

MAX_VALUE = 1 << 53


def _bad(v: object) -> bool:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return False
    if isinstance(v, int):
        return not 0 <= v < MAX_VALUE
    if isinstance(v, float):
        return not (math.isfinite(v) and 0.0 <= v < MAX_VALUE)
    return not isinstance(v, Mapping | list | tuple)  # anything else: not a JSON value


def _any_bad(obj: object) -> bool:
    """Fast pass, no paths: does any number in ``obj`` break the rule?"""
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, Mapping):
            stack.extend(o.values())
        elif isinstance(o, list | tuple):
            stack.extend(o)
        elif _bad(o):
            return True
    return False


def _first_bad(obj: object, path: str) -> tuple[str, object] | None:
    """The first offending value in document order, with its path (a.b[2].c)."""
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            found = _first_bad(v, f"{path}.{k}" if path else str(k))
            if found is not None:
                return found
        return None
    if isinstance(obj, list | tuple):
        for i, v in enumerate(obj):
            found = _first_bad(v, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    return (path, obj) if _bad(obj) else None


def _shown(v: object) -> str:
    return repr(v) if isinstance(v, int | float) else f"a {type(v).__name__}"


def implausible(jobs: Sequence[Mapping[str, Any]], disks: Sequence[Mapping[str, Any]] = ()) -> str | None:
    """What in a report no fio run can produce, e.g. "job 'w1': read.io_bytes = 18446744073709551615 (not a
    number between 0 and 2^53)", or None."""
    for job in jobs:
        name = job.get("jobname")
        if not isinstance(name, str) or "\ufffd" in name:
            shown = repr(name)
            if isinstance(name, str) and len(name) > 40:
                shown = f"{name[:40]!r}… ({len(name)} characters)"
            return f"jobname = {shown} (not the job's UTF-8 name)"
        if _any_bad(job):
            found = _first_bad(job, "")
            if found is not None:
                path, v = found
                return f"job {name!r}: {path} = {_shown(v)} (not a number between 0 and 2^53)"
    for disk in disks:
        if _any_bad(disk):
            found = _first_bad(disk, "")
            if found is not None:
                path, v = found
                return f"disk {disk.get('name')!r}: {path} = {_shown(v)} (not a number between 0 and 2^53)"
    return None
