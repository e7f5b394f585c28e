"""A Transport that runs fio on this machine and streams its JSON reports.

fio runs as ``fio --output-format=json+ --status-interval=<s> <jobfile>`` with pipes. Two reader
threads (stdout: documents + text, stderr: text), a waiter thread and a watchdog thread feed one
queue; ``events()`` turns it into Snapshot / Message / Finished in the caller's thread.

fio never marks its final document, so the newest document is held back for a moment
(``min(0.25 s, interval/4)``): if fio exits meanwhile it is the final one. If fio exits later than
that, the last document is sent once more with ``final=True`` (telemetry sees a zero-length
interval). A run that was killed has no final document.

On POSIX fio's job processes call ``setsid()`` and keep running (holding the stdout pipe) when
the main fio process is killed, so a hard stop kills the job processes too; on Linux they are
found through /proc and remembered while the run lasts. If Fiometer itself is killed, an
``orphan_guard`` ends fio and its jobs at once (Linux), and the private job folder it leaves in
the temporary directory is removed when the next Fiometer starts (``workdirs``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import queue
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from app.engine.devices import sys_disk_stats
from app.engine.guards import orphan_guard, workdirs
from app.engine.jobs import windows_paths
from app.engine.transports.fio_binary import FioNotFound, find_fio, fio_version
from app.engine.transports.fio_json_stream import FioJsonStream, JsonDocument, Piece, TextLine
from app.engine.transports.fio_messages import translate
from app.engine.transports.fio_stop import (
    ready_for_stop,
    stop_signal,
    stops_by_trigger_file,
    trigger_file_arg,
)
from app.engine.transports.transport import Event, Finished, Message, Snapshot, TransportError
from app.engine.transports.windows_console import send_break

log = logging.getLogger(__name__)
STOPPED_RC = 128  # fio's exit code after SIGINT/SIGTERM (backend.c exit_value = 128)
# fio ends within ~50 ms of a stop signal or trigger file. If it still runs this long after Stop (a
# hung job, a fio that ignores the stop), it is ended, so Stop always stops.
STOP_GRACE_S = 15.0
MAX_MESSAGES_PER_KIND = 20  # e.g. one "I/O error" line per failed I/O with continue_on_error
FIRST_REPORT_GRACE = 30.0  # seconds the watchdog allows before fio's first report, at least
_CREATE_NEW_PROCESS_GROUP = 0x00000200


# --- small OS-specific pieces (take the OS name so both branches are tested everywhere) ----------
def _fio_bytes(jobs: Any) -> tuple[int, int]:
    """fio's bytes read and written so far, over the jobs of one report."""
    read = write = 0
    for j in jobs if isinstance(jobs, list) else []:
        if isinstance(j, dict):
            r, w = j.get("read"), j.get("write")
            read += int(r.get("io_bytes") or 0) if isinstance(r, dict) else 0
            write += int(w.get("io_bytes") or 0) if isinstance(w, dict) else 0
    return read, write


def _fio_runtime_ms(jobs: Any) -> float:
    """The longest job's runtime so far (fio's clock, ms), over the jobs of one report; 0 if none says."""
    times = [j.get("job_runtime") for j in jobs if isinstance(j, dict)] if isinstance(jobs, list) else []
    return float(max((t for t in times if isinstance(t, int | float)), default=0))


def _ramping(jobs: Any) -> bool:
    """Whether a job of this report is in its ramp-up: fio counts its I/O but records no latency yet."""
    for j in jobs if isinstance(jobs, list) else []:
        for d in (j.get(k) for k in ("read", "write")) if isinstance(j, dict) else ():
            if not isinstance(d, dict) or not d.get("total_ios"):
                continue
            lat = [d.get(k) for k in ("lat_ns", "clat_ns")]
            if not any(isinstance(x, dict) and x.get("N") for x in lat):
                return True
    return False


def _version_of(fio: Path) -> str | None:
    try:
        return fio_version(fio)
    except FioNotFound:
        return None


def popen_options(os_name: str) -> dict[str, Any]:
    """Windows: own process group, so CTRL_BREAK_EVENT reaches fio alone. POSIX: own session, so a
    Ctrl+C in the terminal of the CLI reaches Fiometer (which then stops fio) and not fio directly;
    and SIGPIPE stays ignored (Python ignores it; restore_signals would reset it): if Fiometer dies,
    fio's next report hits a closed pipe, and with SIGPIPE at its default fio's main process dies
    at once, leaving its job processes (own sessions) running to the end of their run time."""
    if os_name == "Windows":
        return {"creationflags": _CREATE_NEW_PROCESS_GROUP}
    posix = {"start_new_session": True, "restore_signals": False}
    if os_name == "Linux":
        return {**posix, "preexec_fn": _die_with_parent}
    return posix


def _die_with_parent() -> None:
    """In the fio child (Linux): SIGTERM it if Fiometer dies, so a killed app leaves no fio writing on.

    fio then ends its jobs as after Stop. The kernel ties this to the thread that started fio, which
    is the runner's thread for the whole run."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)


def watchdog_seconds(status_interval: float, override: float | None) -> float:
    return override if override is not None else max(10.0, 5.0 * status_interval)


def status_interval_arg(seconds: float) -> str:
    """fio's --status-interval value: whole seconds as is, otherwise milliseconds ('250ms')."""
    if seconds <= 0:
        raise ValueError("status interval must be positive")
    if float(seconds).is_integer():
        return str(int(seconds))
    return f"{max(1, round(seconds * 1000))}ms"


def finish_event(
    manager: str,
    returncode: int,
    *,
    stop_requested: bool = False,
    aborted: bool = False,
    watchdog_after: float | None = None,
    first_error: str | None = None,
    got_documents: bool = True,
    stop_overdue_after: float | None = None,
    stop_unreachable: bool = False,
) -> Finished:
    """The one Finished for a run, with the reason in plain words when it is not ok. ``stop_unreachable``:
    Stop could not reach fio and it was ended at once (Windows), a stop with its last report's numbers."""

    def fail(reason: str) -> Finished:
        return Finished(manager, ok=False, reason=reason, returncode=returncode)

    if stop_unreachable:
        if not got_documents:
            return fail("Stop came before fio's first report, and fio could only be ended: no numbers")
        return Finished(manager, ok=True, returncode=returncode, stopped=True)

    if stop_overdue_after is not None:
        return Finished(
            manager,
            ok=False,
            returncode=returncode,
            stopped=True,
            reason=f"fio did not end within {stop_overdue_after:g} s of Stop and was killed; "
            "the numbers of its last report are kept",
        )

    if watchdog_after is not None:
        if not got_documents:
            return fail(f"fio printed no report within {watchdog_after:g} s of starting and was stopped")
        return fail(f"fio stopped reporting for {watchdog_after:g} s and was stopped")
    if aborted:
        return fail("the step was aborted: fio was killed; samples so far are kept")
    if returncode == 0 or (returncode == STOPPED_RC and stop_requested):
        if not got_documents:
            return fail(first_error or "fio ended without reporting any numbers")
        return Finished(manager, ok=True, returncode=returncode, stopped=stop_requested)
    if returncode == STOPPED_RC:
        return fail("fio was interrupted from outside Fiometer (SIGINT/SIGTERM); its numbers so far are kept")
    if returncode < 0:
        return fail(f"fio was killed (signal {-returncode}) mid-step; samples so far are kept")
    if first_error:
        return fail(f"fio failed (exit code {returncode}): {first_error}")
    return fail(f"fio failed with exit code {returncode}")


# --- Linux process tree (fio's job processes are setsid() children of the main process) ----------
def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # field 22, starttime


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError, ValueError):
            out.extend(int(c) for c in (task / "children").read_text().split())
    return out


class LocalFio:
    """Runs one fio job file for one manager on this machine (see module doc)."""

    def __init__(
        self,
        name: str,
        fio_path: str | os.PathLike[str] | None = None,
        workdir: str | os.PathLike[str] | None = None,
        watchdog: float | None = None,
        first_report_grace: float = FIRST_REPORT_GRACE,
        stop_grace: float = STOP_GRACE_S,
    ) -> None:
        """``fio_path`` is the user's setting (None: search); ``workdir`` is fio's working
        directory and where the job file is written (None: a private temp dir, removed after);
        ``watchdog`` in seconds (None: max(10 s, 5 x status interval); math.inf disables); before
        fio's first report the watchdog waits at least ``first_report_grace`` (fio reports only
        once it has created all its jobs, which takes seconds for hundreds of jobs)."""
        self.name = name
        self._fio_path = fio_path
        self._workdir = Path(workdir) if workdir is not None else None
        self._watchdog_override = watchdog
        self._first_report_grace = first_report_grace
        self._stop_grace = stop_grace
        self._stop_deadline: float | None = None
        self._stop_overdue: float | None = None
        self._stop_unreachable = False  # Windows: no route to ask fio to stop; ended at once (_send_stop)
        self._version: str | None = None  # fio's version, asked on Windows only (how to stop it)
        self._os = platform.system()
        self._proc: subprocess.Popen[bytes] | None = None
        self._q: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self._lock = threading.Lock()
        self._exited = threading.Event()
        self._abandon = threading.Event()  # readers give up on pipes held open by strays
        self._children: dict[int, str] = {}  # pid -> start time, to kill job processes safely
        self._counts: dict[str, int] = {}
        self._first_error: str | None = None
        self._stop_requested = False
        self._stop_lock = threading.Lock()
        self._stop_pending = False  # asked to stop, the signal not sent yet (fio did not catch it yet)
        self._aborted = False
        self._watchdog_after: float | None = None
        self._started = 0.0
        self._last_doc: float | None = None
        self._hold = 0.25
        self._jobfile: Path | None = None
        self._trigger: Path | None = None  # Windows: the file whose creation stops fio (fio_stop)
        self._tmpdir: Path | None = None
        self._events_taken = False
        self._guard: orphan_guard.OrphanGuard | None = None
        # descriptors fio inherits (its job names them /proc/self/fd/N: engine.held_targets), and the disks
        # under them, whose statistics fio cannot find through such a name (sys_disk_stats)
        self.pass_fds: tuple[int, ...] = ()
        self.disks: tuple[str, ...] = ()
        self._disk_base: dict[str, tuple[tuple[int, ...], float]] = {}
        # per disk: the kernel's counters (sys_disk_stats), our clock (s) and fio's (ms) at fio's first
        # report after its ramp-up, where the kernel window starts
        self._kernel_base: dict[str, tuple[tuple[int, ...], float, float] | None] = {}
        self._fio_base: tuple[int, int] | None = None  # fio's bytes read, written at that report
        self._fio_last: tuple[int, int] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    # liveness (Transport): a local fio's reports come whole through a pipe; its watchdog is its own
    @property
    def bytes_received(self) -> int | None:
        return None

    @property
    def last_heard(self) -> float | None:
        return None

    @property
    def job_started_at(self) -> float | None:
        return None

    @property
    def fio_side(self) -> None:
        return None

    @property
    def dropped_note(self) -> str | None:
        return None

    # --- Transport -------------------------------------------------------------------------
    def start(self, job_text: str, *, status_interval: float = 1.0) -> None:
        if self._proc is not None:
            raise RuntimeError("LocalFio.start() called twice")
        try:
            fio = find_fio(self._fio_path)
        except FioNotFound as e:
            raise TransportError(str(e)) from e
        interval_arg = status_interval_arg(status_interval)
        workdir = self._workdir
        try:
            if workdir is None:
                workdirs.sweep_once()  # job folders a killed Fiometer left behind
                workdir = self._tmpdir = workdirs.make_workdir()
            else:
                workdir.mkdir(parents=True, exist_ok=True)
            fd, jobfile = tempfile.mkstemp(prefix="fiometer-", suffix=".fio", dir=workdir)
            with os.fdopen(fd, "w", encoding=windows_paths.job_encoding(self._os), newline="\n") as f:
                f.write(job_text)
        except UnicodeEncodeError as e:
            self._cleanup_files()
            raise TransportError(
                f"the job names {job_text[e.start : e.end]!r}, which this Windows' ANSI code page (the one "
                "fio.exe reads its job file in) cannot hold; rename that folder or file"
            ) from e
        except OSError as e:
            self._cleanup_files()
            raise TransportError(
                f"cannot write the fio job file in {workdir or tempfile.gettempdir()}: {e}"
            ) from e
        self._jobfile = Path(jobfile)
        args = [str(fio), "--output-format=json+", f"--status-interval={interval_arg}", jobfile]
        self._version = _version_of(fio) if self._os == "Windows" else None
        if stops_by_trigger_file(self._os, self._version):
            self._trigger = self._jobfile.with_suffix(".stop")
            args.insert(-1, trigger_file_arg(self._trigger))
        self._hold = min(0.25, status_interval / 4)
        watchdog = watchdog_seconds(status_interval, self._watchdog_override)
        for disk in self.disks:
            counters = sys_disk_stats.read(disk)
            if counters is not None:
                self._disk_base[disk] = (counters, time.monotonic())
        try:
            self._proc = subprocess.Popen(
                args,
                cwd=workdir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=self.pass_fds,
                **popen_options(self._os),
            )
        except OSError as e:
            self._cleanup_files()
            log.warning("manager %s: cannot start fio (%s): %s", self.name, fio, e)
            raise TransportError(f"cannot start fio ({fio}): {e}") from e
        log.info("manager %s: fio started, pid %d: %s", self.name, self._proc.pid, " ".join(args))
        self._guard = orphan_guard.guard(self._proc.pid, jobfile, self._os)
        self._started = time.monotonic()
        readers = [
            threading.Thread(target=self._read_stdout, name=f"fio-out-{self.name}", daemon=True),
            threading.Thread(target=self._read_stderr, name=f"fio-err-{self.name}", daemon=True),
        ]
        for t in readers:
            t.start()
        threading.Thread(
            target=self._wait, args=(readers,), name=f"fio-wait-{self.name}", daemon=True
        ).start()
        threading.Thread(
            target=self._watch, args=(watchdog,), name=f"fio-dog-{self.name}", daemon=True
        ).start()

    def events(self) -> Iterator[Event]:
        """Blocking; ends after exactly one Finished. Meant to be iterated once."""
        if self._proc is None:
            raise RuntimeError("LocalFio.events() before start()")
        if self._events_taken:
            return
        self._events_taken = True
        pending: tuple[Any, ...] | None = None  # newest document, not yet known to be the last
        last: tuple[Any, ...] | None = None
        while True:
            try:
                item = self._q.get(timeout=self._hold if pending else None)
            except queue.Empty:
                assert pending is not None
                yield self._snapshot(pending, final=False)
                last, pending = pending, None
                continue
            tag = item[0]
            if tag == "doc":
                if pending is not None:
                    yield self._snapshot(pending, final=False)
                    last = pending
                pending = item
            elif tag == "msg":
                yield item[1]
            else:  # "exit"
                rc = item[1]
                ended_itself = (
                    rc >= 0
                    and not self._aborted
                    and self._watchdog_after is None
                    and self._stop_overdue is None
                )
                final_doc = pending or last
                if final_doc is not None and ended_itself:
                    yield self._snapshot(final_doc, final=True)
                elif pending is not None:
                    yield self._snapshot(pending, final=False)
                yield finish_event(
                    self.name,
                    rc,
                    stop_requested=self._stop_requested,
                    aborted=self._aborted,
                    watchdog_after=self._watchdog_after,
                    first_error=self._first_error,
                    got_documents=final_doc is not None,
                    stop_overdue_after=self._stop_overdue,
                    stop_unreachable=self._stop_unreachable,
                )
                return

    def stop(self) -> None:
        proc = self._proc
        if proc is None or self._exited.is_set():
            return
        self._stop_requested = True
        if self._stop_deadline is None:
            self._stop_deadline = time.monotonic() + self._stop_grace
        self._stop_pending = True
        self._send_stop()

    def _send_stop(self) -> None:
        """The stop signal, once fio catches it (``fio_stop.ready_for_stop``; until then its watch retries):
        sent earlier, it ends fio with no numbers at all."""
        proc = self._proc
        with self._stop_lock:
            if proc is None or not self._stop_pending or self._exited.is_set():
                return
            if not ready_for_stop(proc.pid, self._os, self._last_doc is not None):
                return
            self._stop_pending = False
        if self._trigger is not None:
            try:
                self._trigger.touch()
            except OSError as e:  # fio is then ended after the grace, its last report's numbers kept
                log.warning(
                    "manager %s: cannot create fio's trigger file %s: %s", self.name, self._trigger, e
                )
            return
        if self._os != "Windows":
            with contextlib.suppress(OSError):  # fio already gone
                proc.send_signal(stop_signal(self._os))
            return
        if send_break(proc.pid):  # CTRL_BREAK through a console fio shares (windows_console)
            return
        # No way to ask this fio to stop (fio 3.41/3.42 crash on their trigger file; no console reaches it, as
        # under Wine): waiting out the grace would only let the step run on. fio is ended now and the step is
        # stopped with the numbers of its last report, at most one status interval old.
        self._stop_unreachable = True
        self._message(
            f"fio {self._version or ''}".rstrip()
            + " cannot be asked to stop from here (no console reaches it, and fio "
            "3.41/3.42 crash on their stop file): it was ended at once; the step keeps the numbers of fio's "
            "last report. fio 3.40 or 3.43+ (or Fiometer's command line in a terminal) stop with fio's final report.",
            "warning",
        )
        self._kill_tree()

    def abort(self) -> None:
        if self._proc is None or self._exited.is_set() or self._proc.poll() is not None:
            return
        self._aborted = True
        self._kill_tree()

    # --- threads -----------------------------------------------------------------------------
    def _chunks(self, stream: Any) -> Iterator[bytes]:
        fd = stream.fileno()
        while True:
            if self._os != "Windows":  # select() on pipes is POSIX only; Windows has no strays
                ready, _, _ = select.select([fd], [], [], 0.2)
                if not ready:
                    if self._abandon.is_set():
                        return
                    continue
            try:
                data = os.read(fd, 1 << 16)
            except OSError:
                return
            if not data:
                return
            yield data

    def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        splitter = FioJsonStream()
        for chunk in self._chunks(self._proc.stdout):
            for piece in splitter.feed(chunk):
                self._piece(piece)
        for piece in splitter.close():
            self._piece(piece)
        if splitter.incomplete_at_eof:
            self._message("fio's last report was cut off and is not used", "warning")

    def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        rest = b""
        for chunk in self._chunks(self._proc.stderr):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                self._text(line.decode("utf-8", errors="replace"))
        self._text(rest.decode("utf-8", errors="replace"))

    def _piece(self, piece: Piece) -> None:
        if isinstance(piece, TextLine):
            self._text(piece.text)
            return
        assert isinstance(piece, JsonDocument)
        try:
            doc = orjson.loads(piece.text)  # ~2x json.loads on fio's reports (benchmarks/bench_telemetry.py)
        except ValueError:  # orjson.JSONDecodeError is one
            self._message("a fio report could not be read and was skipped", "warning")
            return
        now = time.monotonic()
        self._last_doc = now
        text = piece.text
        if self._disk_base and isinstance(doc, dict) and not doc.get("disk_util"):
            doc["disk_util"] = self._disk_util(now)
            text = orjson.dumps(doc).decode("utf-8")
        if (
            isinstance(doc, dict)
            and doc.get("disk_util")
            and self._kernel_window(doc["disk_util"], now, doc.get("jobs"))
        ):
            text = orjson.dumps(doc).decode("utf-8")
        self._q.put(("doc", doc, text, now))

    def _kernel_window(self, disks: list[Any], now: float, jobs: Any) -> bool:
        """Add to each disk of a report the kernel's counters since fio's first report (request sizes: fio
        before 3.36 counts no sectors), with fio's own bytes over the same window. fio zeroes its counters
        when a ramp-up ends: the window starts again there, so both count measured I/O only. Whether any
        was added.

        The window is as long as the shorter of our clock and fio's since that report: fio's last report
        comes after its jobs stopped (files closed, totals summed: up to a few hundred ms on a loaded
        machine), and that idle tail would dilute every rate (r/s 2 % low against iostat's)."""
        moved = _fio_bytes(jobs)
        runtime = _fio_runtime_ms(jobs)
        ramping = _ramping(jobs)
        if ramping or (
            self._fio_last is not None and (moved[0] < self._fio_last[0] or moved[1] < self._fio_last[1])
        ):
            self._kernel_base.clear()  # in the ramp-up, or it just ended: the window starts later
        self._fio_last = moved
        if ramping:
            return False
        if not self._kernel_base:
            self._fio_base = moved
        base_bytes = self._fio_base or moved
        added = False
        for entry in disks:
            name = entry.get("name") if isinstance(entry, dict) else None
            if not isinstance(name, str) or "read_sectors" in entry:
                continue
            if name not in self._kernel_base:
                counters = sys_disk_stats.read(name)
                self._kernel_base[name] = (counters, now, runtime) if counters is not None else None
            base = self._kernel_base[name]
            counters = sys_disk_stats.read(name) if base is not None else None
            if base is None or counters is None:
                continue
            elapsed_ms = (now - base[1]) * 1000.0
            if runtime > base[2] > 0:
                elapsed_ms = min(elapsed_ms, runtime - base[2])
            window = sys_disk_stats.window_entry(base[0], counters, elapsed_ms)
            window["fio_read_bytes"] = moved[0] - base_bytes[0]
            window["fio_write_bytes"] = moved[1] - base_bytes[1]
            entry[sys_disk_stats.KERNEL_WINDOW] = window
            added = True
        return added

    def _disk_util(self, now: float) -> list[dict[str, str | int | float]]:
        out = []
        for disk, (base, since) in self._disk_base.items():
            counters = sys_disk_stats.read(disk)
            if counters is not None:
                out.append(sys_disk_stats.fio_entry(disk, base, counters, (now - since) * 1000.0))
        return out

    def _text(self, line: str) -> None:
        line = line.strip()
        if not line:
            return
        tr = translate(line)
        with self._lock:
            n = self._counts[tr.kind] = self._counts.get(tr.kind, 0) + 1
            if tr.level == "error" and self._first_error is None:
                self._first_error = tr.text
        if n <= MAX_MESSAGES_PER_KIND:
            self._message(tr.text, tr.level)
        elif n == MAX_MESSAGES_PER_KIND + 1:
            self._message("more messages like the one above are not shown", "warning")

    def _message(self, text: str, level: str) -> None:
        self._q.put(("msg", Message(self.name, text, level)))

    def _wait(self, readers: list[threading.Thread]) -> None:
        assert self._proc is not None
        rc = self._proc.wait()
        log.info("manager %s: fio pid %d ended, exit code %d", self.name, self._proc.pid, rc)
        self._exited.set()
        if self._guard is not None:
            self._guard.release()
        if rc < 0:  # killed: its job processes may live on and keep the pipes open
            self._kill_children()
        for t in readers:
            t.join(timeout=3.0)
        if any(t.is_alive() for t in readers):
            self._abandon.set()
            for t in readers:
                t.join(timeout=1.0)
        for pipe in (self._proc.stdout, self._proc.stderr):
            if pipe is not None and not any(t.is_alive() for t in readers):
                pipe.close()
        self._cleanup_files()
        self._q.put(("exit", rc))

    def _watch(self, limit: float) -> None:
        next_scan = 0.0
        while not self._exited.wait(0.05 if self._stop_pending else 0.2):
            now = time.monotonic()
            self._send_stop()
            if now >= next_scan:
                self._remember_children()
                next_scan = now + 0.5
            if self._stop_deadline is not None and now > self._stop_deadline:
                self._stop_overdue = self._stop_grace
                log.warning(
                    "manager %s: fio did not stop within %g s of being asked; killing it",
                    self.name,
                    self._stop_grace,
                )
                self._kill_tree()
                return
            last = self._last_doc
            allowed = limit if last is not None else max(limit, self._first_report_grace)
            if now - (last if last is not None else self._started) > allowed:
                self._watchdog_after = allowed
                log.warning("manager %s: no report from fio for %g s; killing it", self.name, allowed)
                self._kill_tree()
                return

    # --- helpers -----------------------------------------------------------------------------
    def _snapshot(self, item: tuple[Any, ...], *, final: bool) -> Snapshot:
        _, doc, text, received = item
        return Snapshot(
            manager=self.name,
            received=received,
            jobs=doc.get("jobs", []),
            disk_util=doc.get("disk_util") or [],
            final=final,
            raw=text if final else None,
            fio_ms=doc.get("timestamp_ms"),
        )

    def _remember_children(self) -> None:
        if self._os != "Linux" or self._proc is None:
            return
        for pid in _children(self._proc.pid):
            if pid not in self._children:
                st = _start_time(pid)
                if st is not None:
                    self._children[pid] = st

    def _kill_children(self) -> None:
        for pid, started in list(self._children.items()):
            if _start_time(pid) == started:  # still the same process, not a reused pid
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def _kill_tree(self) -> None:
        assert self._proc is not None
        self._remember_children()
        with contextlib.suppress(OSError):
            self._proc.kill()
        if self._os != "Windows":
            self._kill_children()

    def _cleanup_files(self) -> None:
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
        else:
            for leftover in (self._jobfile, self._trigger):
                if leftover is not None:
                    with contextlib.suppress(OSError):
                        leftover.unlink()
