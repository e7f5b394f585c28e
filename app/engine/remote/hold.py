"""An ``ssh://`` manager's targets, checked and held on its host by the local rules themselves.

Over the user's ``ssh``, ``python3`` on that host is sent a short loader (``BOOT``) and then, on its standard
input, the source of the modules that hold the local rules (``MODULES``: placement, the loop-stack rules of
``linux_devices``, ``held_targets``, ``file_marks``) and a request for ``remote_there``:

- ``place_there`` (before the run): each target examined there as ``placement.place_local`` examines one
  here; the Placement comes back (with the host's name and Fiometer's marker as read there), so the run's
  arming rules (``safety.job_risk``) decide on it as on a local target.
- ``hold_there`` (at each step's start): the targets opened, verified against what was checked and armed,
  laid out if new, and held by that process while fio runs; fio, on the same host, opens
  ``/proc/<pid>/fd/N``. After the step, ``HeldThere.adopt`` stamps the files fio was given (only while their
  names still lead to them) and returns their facts for ``safety.CreatedFiles``.

Without ``python3`` there (or its sources, in a build that ships none), ``RemoteUnavailable`` says so, and
the host counts as a plain fio server (``guards.unverified``).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import queue
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.engine.guards.file_marks import Facts
from app.engine.guards.held_targets import Arming, HoldRefused
from app.engine.jobs.placement import Placement
from app.engine.remote.there import placement_from

if TYPE_CHECKING:
    from app.engine.jobs.jobfile import JobFile

log = logging.getLogger(__name__)

MODULES = (
    "app.model.plan",
    "app.engine.jobs.windows_paths",
    "app.engine.jobs.geometry",
    "app.engine.jobs.targets",
    "app.engine.devices.disks",
    "app.engine.devices.linux_devices",
    "app.engine.devices.sector_sizes",
    "app.engine.jobs.placement",
    "app.engine.guards.file_marks",
    "app.engine.guards.held_targets",
    "app.engine.remote.there",
)

BOOT = r"""
import json, sys, types
first = json.loads(sys.stdin.readline())
for name, src in first["modules"]:
    parts = name.split(".")
    for i in range(1, len(parts)):
        pkg = ".".join(parts[:i])
        if pkg not in sys.modules:
            m = types.ModuleType(pkg)
            m.__path__ = []
            sys.modules[pkg] = m
            if i > 1:
                setattr(sys.modules[".".join(parts[: i - 1])], parts[i - 1], m)
    mod = types.ModuleType(name)
    mod.__file__ = "<fiometer " + name + ">"
    sys.modules[name] = mod
    setattr(sys.modules[".".join(parts[:-1])], parts[-1], mod)
    exec(compile(src, mod.__file__, "exec"), mod.__dict__)
sys.modules["app.engine.remote.there"].main(first["request"])
"""

ANSWER_S = 30.0  # the answer to a request (a layout may take longer: it is waited for while it writes)

Start = Callable[[], "subprocess.Popen[str]"]
"""Starts ``python3 -c BOOT`` on the manager's host with text pipes for stdin and stdout."""


class RemoteUnavailable(Exception):
    """The rules could not run on that host (no python3, ssh failed, no sources here); str() says why."""


_sources: list[tuple[str, str]] = []


def sources() -> list[tuple[str, str]]:
    """(module name, source) of MODULES, in the order they load. Raises RemoteUnavailable."""
    if not _sources:
        try:
            for name in MODULES:
                file = importlib.import_module(name).__file__
                _sources.append((name, Path(str(file)).read_text(encoding="utf-8")))
        except (OSError, TypeError) as e:
            _sources.clear()
            raise RemoteUnavailable(f"this build of Fiometer carries no sources to send ({e})") from e
    return list(_sources)


class _Session:
    """One ``python3`` on the host: requests on its stdin, one JSON line per answer on its stdout."""

    def __init__(self, start: Start, request: dict[str, Any]):
        try:
            self.proc = start()
        except OSError as e:
            raise RemoteUnavailable(f"ssh could not be started: {e}") from e
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True, name="fiometer-ssh-rules").start()
        self.send({"modules": sources(), "request": request})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, data: dict[str, Any]) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(data) + "\n")
            self.proc.stdin.flush()
        except OSError as e:
            raise RemoteUnavailable(f"the session on that host ended ({e})") from e

    def answer(self, timeout: float, cancelled: Callable[[], bool] = lambda: False) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=0.25)
                break
            except queue.Empty:
                if cancelled() or (time.monotonic() > deadline and timeout > 0):
                    self.close()
                    raise RemoteUnavailable("no answer from that host in time") from None
        if line is None:
            err = self._stderr()
            raise RemoteUnavailable(err or f"the program on that host ended (status {self.proc.poll()})")
        try:
            data = json.loads(line)
        except ValueError as e:
            raise RemoteUnavailable(f"the answer from that host was not understood: {line[:200]!r}") from e
        if not isinstance(data, dict):
            raise RemoteUnavailable("the answer from that host was not understood")
        return data

    def _stderr(self) -> str:
        with contextlib.suppress(Exception):
            self.proc.wait(5)
            text = self.proc.stderr.read() if self.proc.stderr else ""
            lines = [ln for ln in text.strip().splitlines() if ln.strip()]
            return lines[-1] if lines else ""
        return ""

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.proc.stdin:
                self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        for pipe in (self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):
                if pipe:
                    pipe.close()


def place_there(start: Start, host: str, targets: list[tuple[str, bool]]) -> dict[str, Placement | str]:
    """Each (path, named as a device) examined on the host: its Placement (``host`` set, the marker as read
    there) or why it cannot be a target. Raises RemoteUnavailable."""
    session = _Session(start, {"mode": "place", "targets": [list(t) for t in targets]})
    try:
        placed = session.answer(ANSWER_S).get("placed")
    finally:
        session.close()
    if not isinstance(placed, dict):
        raise RemoteUnavailable("the answer from that host was not understood")
    out: dict[str, Placement | str] = {}
    for path, d in placed.items():
        if "error" in d:
            out[path] = str(d["error"])
        else:
            out[path] = placement_from({**d, "host": host})
    return out


@dataclass
class HeldThere:
    """One step's targets held open on the host: the job text naming ``/proc/<pid>/fd/N`` there, Fiometer's
    files among them (adopted after the step), what was laid out and said."""

    text: str
    files: list[str] = field(default_factory=list)
    laid_out: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    session: _Session | None = None

    def adopt(self) -> dict[str, Facts]:
        """After the step: the facts of Fiometer's files there, freshly stamped; then let go."""
        if self.session is None:
            return {}
        try:
            self.session.send({"adopt": self.files})
            adopted = self.session.answer(ANSWER_S).get("adopted")
        except RemoteUnavailable as e:
            log.warning("test files on that host not adopted: %s", e)
            adopted = {}
        finally:
            self.close()
        return adopted if isinstance(adopted, dict) else {}

    def close(self) -> None:
        session, self.session = self.session, None
        if session is not None:
            session.close()


def hold_there(
    start: Start,
    jf: JobFile,
    arming: Arming,
    known: dict[str, Facts],
    cancelled: Callable[[], bool] = lambda: False,
) -> HeldThere:
    """Open, verify and lay out ``jf``'s targets on the host, held until ``adopt``/``close``. ``known``: the
    created-files record's facts of those paths on that host. Raises HoldRefused (nothing held, nothing
    written) or RemoteUnavailable."""
    jobs = [
        {
            "path": j.path,
            "target_name": j.target_name,
            "is_device": j.is_device,
            "writes": j.writes,
            "network": j.network,
            "offset": j.offset,
            "size": j.size,
            "placement": {k: v for k, v in asdict(j.placement).items() if k not in ("host", "marker")}
            if j.placement is not None
            else None,
        }
        for j in jf.jobs
    ]
    request = {
        "mode": "hold",
        "text": jf.text,
        "jobs": jobs,
        "arming": {"objects": arming.objects, "in_use": sorted(arming.in_use)},
        "known": known,
    }
    session = _Session(start, request)
    try:
        got = session.answer(0, cancelled)  # laying a test file out takes what writing it takes
    except BaseException:
        session.close()
        raise
    said = [str(s) for s in got.get("said", [])]
    if "refused" in got:
        session.close()
        raise HoldRefused(str(got["refused"]))
    pid = got.get("pid")
    if not isinstance(pid, int):
        session.close()
        raise RemoteUnavailable("the answer from that host was not understood")
    text = str(got["text"]).replace("filename=/proc/self/fd/", f"filename=/proc/{pid}/fd/")
    return HeldThere(text, list(got.get("files", [])), list(got.get("laid_out", [])), said, session)
