"""The protocol side of one run: server messages in, Fiometer transport events out. No sockets.

fio's server pushes, per status interval: JOB_OPT messages, one TS per job (or per group with
group_reporting), one GS per group, then DU per disk. The report is complete once its GS/DU
messages have stopped coming; it is emitted as a :class:`Snapshot` when the next report starts,
when the run ends, or after a short settle time. The end of a run is STOP{error, signal}
followed by QUIT; a job file fio rejects ends with TEXT errors and QUIT but no STOP.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import orjson

from app.engine.common.message_gate import MessageGate
from app.engine.common.plausible import implausible

from ..transport import Event, Finished, Message, Snapshot
from .commands import LOG_ERR, Op, parse_job_opt, parse_start, parse_stop, parse_text
from .decode import decode_du, du_to_json, ts_to_json
from .frames import Packet
from .layouts import Layout
from .tstat import DecodeError, GroupRunStats, ThreadStat, parse_ts


class _Parsed(NamedTuple):
    """One job's TS as parsed, and the job options sent with it."""

    ts: ThreadStat
    rs: GroupRunStats
    options: dict[str, str] | None


# The server's signal numbers, named by the server's OS rather than this one (Windows Python's signal module
# has no SIGKILL): these have the same numbers on Linux, the BSDs and macOS.
_POSIX_SIGNALS = {
    1: "SIGHUP",
    2: "SIGINT",
    3: "SIGQUIT",
    4: "SIGILL",
    6: "SIGABRT",
    8: "SIGFPE",
    9: "SIGKILL",
    11: "SIGSEGV",
    13: "SIGPIPE",
    14: "SIGALRM",
    15: "SIGTERM",
}


def _signal_name(sig: int) -> str:
    return _POSIX_SIGNALS.get(sig, f"signal {sig}")


class RunDecoder:
    """Turns the server's messages for one run into Snapshot / Message / Finished events (the protocol
    decoder; a run *session* is app.session's: a run with its recorder).

    ``settle`` is how long a report whose GS arrived is held back waiting for more DU/GS (and
    for STOP, so the last report can be marked final) before it is emitted anyway.
    """

    def __init__(
        self,
        manager: str,
        layout: Layout,
        host: str,
        port: int,
        *,
        settle: float = 0.25,
        fio_version: str = "",
        clock: Callable[[], float] = time.monotonic,
        shown_as: str | None = None,
    ) -> None:
        self.shown_as = shown_as  # how messages name the server when not by host:port
        self.manager = manager
        self.layout = layout
        self.host = host
        self.port = port
        self.settle = settle
        self.fio_version = fio_version
        self._clock = clock
        self.finished = False
        self.stop_requested = False
        self.jobs_expected: int | None = None
        self.stat_outputs: int | None = None
        self.global_options: dict[str, str] = {}
        self.reports = 0  # snapshots emitted
        self.starts = 0  # START messages: one for the JOBLINE, one for the accepted job file
        self._stop: tuple[int, int] | None = None
        self._errors: list[str] = []
        self._pending: list[_Parsed] = []  # the report being received; its jobs are made when it is emitted
        self._last_report: list[_Parsed] = []  # the last one emitted: a late STOP makes it final
        self._pending_du: list[dict[str, Any]] = []
        self._pending_time = 0.0
        self._job_opts: dict[int, dict[str, str]] = {}
        self._group_seen = False
        self._flush_at: float | None = None
        self._last: Snapshot | None = None
        self._quit_seen = False
        self.gate = MessageGate(clock=clock)
        self.job_started_at: float | None = None  # time.time(): fio's job_start (3.36+) or SERVER_START
        self._job_start_exact = False

    # --- input ---------------------------------------------------------------------------

    def on_packet(self, pkt: Packet) -> list[Event]:
        if self.finished:
            return []
        out: list[Event] = []
        now = self._clock()
        handle = self._ON_OP.get(pkt.opcode)
        if handle is None:  # PROBE (handled by the client), ETA (keepalive), ADD_JOB, IOLOG: nothing to do
            return out
        try:
            handle(self, pkt, out, now)
        except (DecodeError, struct.error) as e:  # lengths and counts that do not fit the message
            self._pending, self._pending_du = [], []
            out.append(
                self._finish(
                    False, f"manager {self.where} sent a message Fiometer cannot read ({e}); its step failed"
                )
            )
        return out

    # One handler per kind of server message: (session, packet, events out, now).

    def _on_ts(self, pkt: Packet, out: list[Event], now: float) -> None:
        if self._group_seen:
            out += self._flush(final=False)
        parsed = _Parsed(*parse_ts(pkt.payload, self.layout), self._job_opts.pop(len(self._pending), None))
        self._pending.append(parsed)
        self._pending_time = now
        start_ms = parsed.ts.job_start  # 0 before fio 3.36, which does not send it
        if start_ms > 0 and not self._job_start_exact:
            self.job_started_at, self._job_start_exact = start_ms / 1000.0, True

    def _on_job_opt(self, pkt: Packet, out: list[Event], now: float) -> None:
        if self._group_seen:
            out += self._flush(final=False)
        opt = parse_job_opt(pkt.payload)
        if opt.is_global:
            self.global_options[opt.name] = opt.value
        else:
            self._job_opts.setdefault(opt.index, {})[opt.name] = opt.value

    def _on_gs(self, pkt: Packet, out: list[Event], now: float) -> None:
        self._group_seen = True
        self._flush_at = now + self.settle

    def _on_du(self, pkt: Packet, out: list[Event], now: float) -> None:
        raw = decode_du(pkt.payload)
        du = du_to_json(raw, self.layout.features, hostname=self.host, port=self.port)
        du.update(msec=raw["msec"], io_ticks=raw["io_ticks"])  # the disk's own clock: exact live windows
        self._pending_du.append(du)
        if self._group_seen:
            self._flush_at = now + self.settle

    def _on_text(self, pkt: Packet, out: list[Event], now: float) -> None:
        text = parse_text(pkt.payload)
        body = text.text.rstrip("\n")
        if body.strip() and self.gate.admit(body):
            level = "error" if text.level >= LOG_ERR else "info"
            if level == "error":
                self._errors.append(body.strip())
            out.append(Message(self.manager, body, level))

    def _on_start(self, pkt: Packet, out: list[Event], now: float) -> None:
        self.jobs_expected, self.stat_outputs = parse_start(pkt.payload)
        self.starts += 1

    def _on_server_start(self, pkt: Packet, out: list[Event], now: float) -> None:
        if self.job_started_at is None:
            self.job_started_at = time.time()

    def _on_stop(self, pkt: Packet, out: list[Event], now: float) -> None:
        self._stop = parse_stop(pkt.payload)
        # A backend killed by a signal printed no end-of-run numbers: nothing is final then.
        out += self._flush(final=self._stop[1] == 0)

    def _on_quit(self, pkt: Packet, out: list[Event], now: float) -> None:
        self._quit_seen = True
        out += self._flush(final=self._stop is None or self._stop[1] == 0)
        out.append(self._finish_quit())

    _ON_OP: ClassVar[dict[int, Callable[[RunDecoder, Packet, list[Event], float], None]]] = {
        Op.TS: _on_ts,
        Op.JOB_OPT: _on_job_opt,
        Op.GS: _on_gs,
        Op.DU: _on_du,
        Op.TEXT: _on_text,
        Op.START: _on_start,
        Op.SERVER_START: _on_server_start,
        Op.STOP: _on_stop,
        Op.QUIT: _on_quit,
    }

    def on_tick(self) -> list[Event]:
        """Emit a held report once its settle time is over."""
        if self._flush_at is not None and self._clock() >= self._flush_at:
            return self._flush(final=False)
        return []

    def next_deadline(self) -> float | None:
        return self._flush_at

    def on_disconnect(self) -> list[Event]:
        """The connection ended without QUIT."""
        if self.finished:
            return []
        if self._stop is not None:  # STOP arrived, only QUIT is missing: the run did end
            out = self._flush(final=self._stop[1] == 0)
            return out + [self._finish_quit()]
        out = self._flush(final=False)
        return out + [self._finish(False, self.lost_reason())]

    def on_silence(self, seconds: float) -> list[Event]:
        if self.finished:
            return []
        out = self._flush(final=False)
        reason = f"manager {self.where} stopped answering for {seconds:.0f} s mid-step; samples so far kept"
        return out + [self._finish(False, reason)]

    def on_error(self, reason: str) -> list[Event]:
        if self.finished:
            return []
        out = self._flush(final=False)
        return out + [self._finish(False, reason)]

    @property
    def ended_by_server(self) -> bool:
        """The server ended the run itself (QUIT, or STOP then end of stream)."""
        return self._quit_seen or (self._stop is not None and self.finished)

    def on_stopped_before_run(self) -> list[Event]:
        if self.finished:
            return []
        return [self._finish(True, "stopped before the job started", stopped=True)]

    def on_abort(self) -> list[Event]:
        if self.finished:
            return []
        return [self._finish(False, "stopped at once; fio's final numbers were not collected", stopped=True)]

    @property
    def where(self) -> str:
        """'name (host:port)', or just 'host:port' when the manager is named after its address."""
        addr = self.shown_as or (
            f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
        )
        return addr if self.manager == addr else f"{self.manager} ({addr})"

    def lost_reason(self) -> str:
        return f"lost connection to manager {self.where} mid-step; samples so far kept"

    # --- output --------------------------------------------------------------------------

    def _flush(self, *, final: bool) -> list[Event]:
        self._flush_at = None
        self._group_seen = False
        if not self._pending:
            if final and self._last is not None and not self._last.final:
                # The last report went out before STOP arrived; repeat it marked final (local fio
                # can also print the same numbers twice at the end).
                snap = Snapshot(
                    self.manager,
                    self._last.received,
                    self._jobs(self._last_report, final=True),
                    self._last.disk_util,
                    True,
                )
                snap.raw = self._raw(snap)
                self._last = snap
                return [snap]
            return []
        try:
            jobs = self._jobs(self._pending, final=final)
        except (ArithmeticError, ValueError, IndexError, struct.error) as e:  # values no fio run produces
            self._pending, self._pending_du = [], []
            return [
                self._finish(
                    False, f"manager {self.where} sent a report Fiometer cannot read ({e}); its step failed"
                )
            ]
        snap = Snapshot(self.manager, self._pending_time, jobs, self._pending_du, final)
        bad = implausible(snap.jobs, snap.disk_util)
        if bad is not None:  # the one place a server's numbers enter: none reaches a sink
            self._pending, self._pending_du = [], []
            return [
                self._finish(False, f"manager {self.where} sent an impossible value: {bad}; its step failed")
            ]
        if final:
            snap.raw = self._raw(snap)
        self._last_report = self._pending
        self._pending = []
        self._pending_du = []
        self._job_opts = {}
        self._last = snap
        self.reports += 1
        return [snap]

    def _jobs(self, report: list[_Parsed], *, final: bool) -> list[dict[str, Any]]:
        """A report's jobs as the stock client prints them. fio's percentile lists only in the final one
        (kept as fio's output): live samples take their percentiles from the bins."""
        return [
            ts_to_json(
                p.ts,
                p.rs,
                self.layout.features,
                hostname=self.host,
                port=self.port,
                job_options=p.options,
                percentiles=final,
            )
            for p in report
        ]

    def _raw(self, snap: Snapshot) -> str:
        """The final numbers as one JSON document shaped like the stock client's output."""
        doc = {
            "fio version": self.fio_version,
            "timestamp": int(time.time()),
            "global options": dict(self.global_options),
            "client_stats": snap.jobs,
            "disk_util": snap.disk_util,
        }
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode()  # json's indent is pure Python: 30x

    def _finish(self, ok: bool, reason: str = "", *, stopped: bool | None = None) -> Finished:
        self.finished = True
        # like a local fio's exit status: the server reports its backend's in STOP
        returncode = self._stop[0] if self._stop is not None and not self._stop[1] else None
        return Finished(
            self.manager, ok, reason, returncode, self.stop_requested if stopped is None else stopped
        )

    def _finish_quit(self) -> Finished:
        where = self.where
        if self._stop is None:
            if self._errors:
                return self._finish(False, f"fio on {where} did not run the job: {self._errors[0]}")
            if not self.reports:
                return self._finish(False, f"fio on {where} ended without running the job")
            return self._finish(True)
        error, sig = self._stop
        if sig:
            return self._finish(
                False, f"fio on {where} was killed by {_signal_name(sig)}; samples so far kept"
            )
        if error:
            detail = f": {self._errors[0]}" if self._errors else ""
            return self._finish(False, f"fio on {where} exited with status {error}{detail}")
        return self._finish(True)
