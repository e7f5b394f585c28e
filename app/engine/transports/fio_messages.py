"""fio's text messages (stderr, and non-JSON lines on stdout) in plain words for the user.

Local and remote transports see the same texts (a fio server forwards them), so both use this.
Unknown lines are passed through unchanged as warnings: losing a message is worse than showing
fio's own wording.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Translated:
    text: str
    level: str  # info | warning | error
    kind: str  # a family of messages, so a flood of one kind can be capped


# fio: pid=19432, err=1/file:filesetup.c:805, func=open(/x/y.dat), error=Operation not permitted
_PID_ERR = re.compile(r"^fio: pid=\d+, err=(?P<err>\d+)/file:[^,]*, func=(?P<func>.*), error=(?P<msg>.*)$")
_OPEN = re.compile(r"^open\((?P<path>.*)\)$")

_EISDIR = 21


def _pid_err(m: re.Match[str]) -> Translated:
    err, func, msg = int(m["err"]), m["func"], m["msg"].strip()
    opened = _OPEN.match(func)
    if opened:
        return Translated(f"cannot open target {opened['path']}: {msg}", "error", "target")
    if err == _EISDIR:
        return Translated(
            f"a target is a directory, not a file ({msg}); give a file name inside it", "error", "target"
        )
    if func == "total_file_size":
        return Translated(f"fio cannot find the size of a target: {msg}", "error", "target")
    if func == "io_u error":
        return Translated(f"an I/O failed and its job stopped: {msg} (error {err})", "error", "io")
    return Translated(f"a fio job failed in {func}: {msg} (error {err})", "error", "job")


def _io_u_error(m: re.Match[str]) -> Translated:
    detail = f"{m['op']} of {m['len']} bytes at offset {m['off']}"
    return Translated(f"I/O error on target {m['path']}: {m['msg']} ({detail})", "error", "io")


_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], Translated]]] = [
    (_PID_ERR, _pid_err),
    (
        re.compile(r"^Bad option <(?P<opt>.*)>$"),
        lambda m: Translated(f"fio rejected option {m['opt']} in the job file", "error", "option"),
    ),
    (
        re.compile(r"^Did you mean (?P<opt>.*)\?$"),
        lambda m: Translated(f"(fio suggests option {m['opt']} instead)", "info", "option"),
    ),
    (
        re.compile(r"^fio: job (?P<job>.*) dropped$"),
        lambda m: Translated(f"fio dropped job {m['job']} because of the error above", "error", "job"),
    ),
    (
        re.compile(r"^fio: engine (?P<engine>.*) not loadable$"),
        lambda m: Translated(
            f"fio cannot load the I/O engine {m['engine']} on this machine", "error", "engine"
        ),
    ),
    (
        re.compile(r"^fio: failed to load engine$"),
        lambda m: Translated("fio could not start because an I/O engine is missing", "error", "engine"),
    ),
    (
        re.compile(r"^fio: file:\S+, func=dlopen, error=(?P<msg>.*)$"),
        lambda m: Translated(f"fio cannot load an I/O engine library: {m['msg']}", "error", "engine"),
    ),
    (
        re.compile(r"^(?P<job>.*): you need to specify size=$"),
        lambda m: Translated(
            f"job {m['job']}: the target does not exist yet, so fio needs a size (size=) to create it",
            "error",
            "target",
        ),
    ),
    (
        re.compile(
            r"^fio: io_u error on file (?P<path>.*): (?P<msg>[^:]*): (?P<op>\w+) offset=(?P<off>\d+), buflen=(?P<len>\d+)$"
        ),
        _io_u_error,
    ),
    (
        re.compile(r"^fio: looks like your file system does not support direct=1/buffered=0$"),
        lambda m: Translated(
            "the file system of a target does not support direct I/O (direct=1)", "error", "target"
        ),
    ),
    (  # fio's own words: a refusal that still ends with exit code 0
        re.compile(r"^fio: (?P<path>.*) appears mounted, and 'allow_mounted_write' isn't set\. Aborting\.$"),
        lambda m: Translated(m.string, "error", "target"),
    ),
    (
        re.compile(r"^fio: terminating on signal (?P<sig>\d+)$"),
        lambda m: Translated(f"fio is ending its jobs (signal {m['sig']})", "info", "signal"),
    ),
]


def translate(line: str) -> Translated:
    """Plain words for one line of fio text (fio's wording as a warning when not recognised)."""
    line = line.strip()
    for pattern, make in _RULES:
        m = pattern.match(line)
        if m:
            return make(m)
    return Translated(line, "warning", "other")
