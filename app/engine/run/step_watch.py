"""Is each manager of a step making progress, and will the step end on time? (Qt-free, no I/O.)

Liveness is judged by progress, never by the mere arrival of messages (an fio server answers its
ETA polls and may send text while its jobs are stuck):

- **Deadline**: a manager must be done by ramp + run time + ``grace`` after its jobs started
  (its first report with a runtime; a manager that never gets there: after RUN + ``SETUP_S``).
  Past it the manager is asked to stop; if it then ends with its final numbers it is only
  late (a slow link still delivering its reports), else it is aborted and fails once nothing has
  arrived for ``STOP_GRACE_S``, or ``LATE_DATA_S`` after the stop at the most, whatever arrives.
  So a step ends by ramp + run + grace + ``LATE_DATA_S`` at the latest, or ``BEHIND_S`` later for a
  manager that is behind: its reports still arrive but, on fio's own clock (the jobs' runtime), it
  has not yet reached its ramp + run time (a busy host whose reports arrive late). It is told once
  and waited for; if it has not ended by then, it is stopped as above, unless fio's clock in its
  reports still moves: then it is waited for until that clock passes the planned end + grace.
- **Stall**: reports keep coming but fio's I/O counters have not moved for ``stall_s``, or the
  server still answers (its ETA replies, text) but no report and no report data came for
  ``stall_s``: stopped, failed, and aborted ``STOP_GRACE_S`` later (a job process stopped or stuck
  in the kernel). A server that sends nothing at all is not judged here: it may be busy (its host
  short of CPU) and late; the transport's silence watchdog says so and waits up to its stated limit.
- **Impossible values** (:mod:`app.engine.sampling.report_checks`): the manager is aborted at once.
- **Late numbers**: no report for ``late_s`` while the step runs is said in a message ("data still
  arriving" when the transport counts received bytes), not treated as death: the transport's own
  silence watchdog (on bytes) decides that.

Whose clock: a transport that tells where its server is apart from its events (``fio_side``: when its
newest report arrived at the socket, fio's own clock in it, whether the server's part is over) is judged
by that, not by when its events got through our own queues: a loaded Fiometer that is seconds behind
with the data must not stop a server that reports on time. A server whose part is over is waited for
(its final numbers are on their way through our pipes), and so is one whose reader is behind (bytes
wait unread on its socket: the server may be blocked only by us), up to BEHIND_S past the deadline,
and after that for as long as our side still hands on its reports and they move (a loaded Fiometer
working through its backlog must not stop a server that did its part on time);
one whose reports reach the socket is not late, stalled for want of reports, or past its deadline
while its clock is short of the end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.engine.common.phase_bounds import DEFAULT, FINAL, RAMP, RUN, START, STOP, Bounds
from app.engine.sampling.report_checks import ReportChecker
from app.engine.transports.transport import ARRIVING_AGAIN, BEHIND, LATE, FioSide

SETUP_S = DEFAULT.setup  # from RUN to the first report with a runtime (file layout, job setup)
STOP_GRACE_S = DEFAULT.stop_grace  # from a forced stop to the abort
LATE_DATA_S = DEFAULT.late_data  # from the deadline's stop to the abort while data still arrives
BEHIND_S = DEFAULT.behind  # past the deadline, for a manager whose reports arrive but lag fio's own clock
MIN_GRACE_S = DEFAULT.grace


@dataclass
class Action:
    kind: str  # "message" | "stop" | "abort"
    manager: str
    text: str
    level: str = "warning"
    note: str | None = None  # a message's liveness kind (transport.Message.kind), where it is such a note


@dataclass
class _State:
    checker: ReportChecker
    running_since: float | None = None
    last_report: float | None = None
    counters: int | None = None
    changed_at: float | None = None
    late_since: float | None = None
    forced_at: float | None = None
    forced: str | None = None  # why it fails (a stall or an impossible value)
    overdue: str | None = None  # why it was stopped at the deadline
    bytes_last: int | None = None
    bytes_changed_at: float = 0.0
    bytes_seen: int | None = None  # received by the time of the last report
    bytes_ref: float | None = None
    fio_clock_s: float | None = None  # the newest report's job runtime on fio's clock (ramp included)
    # fio restarts its jobs' runtime at the ramp's end: the runtime last seen and the ramp added after it, per
    # source (the reports handled here, the transport's own note: each in order, one ahead of the other)
    raw_clock: dict[str, tuple[float, float]] = field(default_factory=dict)
    behind_said: bool = False
    clock_done_at: float | None = None  # when a report first showed fio's clock at the planned end
    clock_moved_at: float | None = None  # when fio's clock in its reports last moved forward
    heard_report: float | None = None  # the transport's own note of its newest report's arrival (fio_side)
    ended: bool = False  # the transport says the server's part is over (its events may still be queued)
    unread: bool = False  # the transport's reader is behind: bytes wait unread on the socket
    silent: bool = False  # the server sent nothing at all for a while (a host short of CPU, or gone)
    answering_from: float = 0.0  # when it answered again after such a silence
    done: bool = False


def io_counter(jobs: Sequence[Mapping[str, Any]]) -> int:
    """All I/Os of a report, both directions and every job."""
    return sum(int((j.get(d) or {}).get("total_ios") or 0) for j in jobs for d in ("read", "write"))


def _runtime(jobs: Sequence[Mapping[str, Any]]) -> int:
    return max(
        (int((j.get(d) or {}).get("runtime") or 0) for j in jobs for d in ("read", "write")), default=0
    )


def _job_clock(jobs: Sequence[Mapping[str, Any]]) -> float | None:
    """How long fio's jobs have run by fio's own clock (s, ramp included), where the report says."""
    ms = [int(j.get("job_runtime") or 0) for j in jobs if j.get("job_runtime") is not None]
    return max(ms) / 1000.0 if ms else None


class StepWatch:
    """``where``: manager name -> how to name it in messages (e.g. 'M1 (10.0.0.5:8765)')."""

    def __init__(
        self,
        where: Mapping[str, str],
        *,
        run_s: float,
        ramp_s: float,
        interval: float,
        ramp: bool,
        go_at: float,
        bounds: Bounds = DEFAULT,
    ) -> None:
        self.where = dict(where)
        self.b = bounds
        self.grace = bounds.grace_s(interval)
        self.limit = ramp_s + run_s + self.grace
        self.planned_s = ramp_s + run_s
        self.ramp_s = ramp_s
        self.stall_s = bounds.stall_s(interval)
        self.late_s = 2 * interval + 2.0
        self.interval = interval
        self.go_at = go_at
        self._m = {name: _State(ReportChecker(ramp=ramp)) for name in where}
        self._stop_asked_at: float | None = None

    def stop_asked(self, now: float) -> None:
        """Stop (or Stop All) was pressed: a manager that has not ended ``stop_grace`` after it, while
        nothing arrives from it (``late_data`` at most), is aborted, the phase named (stop). Managers whose
        transport counts no report bytes (a local fio) are ended by their transport's own stop grace."""
        if self._stop_asked_at is None:
            self._stop_asked_at = now

    def forced_reason(self, name: str, ok: bool = True) -> str | None:
        """Why a manager fails whatever it says (stall, impossible value); when it did not end well
        itself, also why it was stopped at the deadline."""
        st = self._m[name]
        return st.forced or (None if ok else st.overdue)

    def finished(self, name: str) -> None:
        self._m[name].done = True

    def on_snapshot(self, name: str, jobs: Sequence[Mapping[str, Any]], now: float) -> list[Action]:
        """Check a report; an 'abort' action means its numbers must not be used."""
        st = self._m[name]
        problem = st.checker.check(jobs, elapsed_s=max(now - self.go_at, 0.0))
        if problem is not None:
            return self._force(
                st,
                name,
                now,
                "abort",
                f"manager {self.where[name]} sent an impossible value: {problem}; its step failed",
            )
        out: list[Action] = []
        if st.late_since is not None:
            out.append(
                Action(
                    "message",
                    name,
                    f"numbers from {self.where[name]} arrived again after "
                    f"{now - st.late_since + self.late_s:.0f} s",
                    "info",
                    note=ARRIVING_AGAIN,
                )
            )
            st.late_since = None
        if (
            st.last_report is not None
            and now - st.last_report >= self.stall_s / 2
            and st.changed_at is not None
        ):
            st.changed_at = (
                now  # after a silence (a server without CPU) its counters could not move: count anew
            )
        st.last_report = now
        count = io_counter(jobs)
        reset = st.counters is not None and count < st.counters  # fio's counters restart at the ramp's end
        self._clock(st, self._ramp_counted(st, "report", _job_clock(jobs), reset), now)
        if st.running_since is None and (_runtime(jobs) > 0 or count > 0):
            st.running_since = now
        if count != st.counters:
            st.counters, st.changed_at = count, now
        return out

    def _ramp_counted(self, st: _State, source: str, raw: float | None, reset: bool = False) -> float | None:
        """fio's clock with the ramp included: fio's jobs' runtime starts again from 0 when ramp_time ends
        (seen as the runtime going back), after which the ramp is added to it."""
        if raw is None:
            return None
        last, base = st.raw_clock.get(source, (0.0, 0.0))
        if self.ramp_s > 0 and base == 0.0 and (reset or raw < last - 0.25):
            base = self.ramp_s
        st.raw_clock[source] = (raw, base)
        return raw + base

    def _clock(self, st: _State, clock: float | None, now: float) -> None:
        if clock is not None and (st.fio_clock_s is None or clock > st.fio_clock_s):
            st.fio_clock_s, st.clock_moved_at = clock, now
            if st.clock_done_at is None and self.planned_s > 0 and clock >= self.planned_s:
                st.clock_done_at = now

    def _heard(self, st: _State) -> float | None:
        """The newest report's time: processed here, or noted by the transport on arrival."""
        return max((t for t in (st.last_report, st.heard_report) if t is not None), default=None)

    def due(
        self,
        now: float,
        bytes_received: Mapping[str, int | None],
        last_heard: Mapping[str, float | None] | None = None,
        fio_side: Mapping[str, FioSide | None] | None = None,
    ) -> list[Action]:
        """``bytes_received``: report bytes so far per manager (None: not counted, e.g. a local fio);
        ``last_heard``: when (``now``'s clock) each remote manager last sent a byte of any kind;
        ``fio_side``: per manager, the transport's (report_at, fio_clock_s, ended, unread) where it tells them."""
        out: list[Action] = []
        for name, st in self._m.items():
            if st.done:
                continue
            got = bytes_received.get(name)
            if got != st.bytes_last:
                st.bytes_last, st.bytes_changed_at = got, now
            side = (fio_side or {}).get(name)
            if side is not None:
                report_at, clock, st.ended, st.unread = side
                if report_at is not None and (st.heard_report is None or report_at > st.heard_report):
                    st.heard_report = min(report_at, now)
                self._clock(st, self._ramp_counted(st, "side", clock), now)
            start = st.running_since if st.running_since is not None else self.go_at + self.b.setup
            if (
                (st.ended or st.unread)
                and not st.forced
                and (now < start + self.limit + self.b.behind or self._delivering(st, now))
            ):
                continue  # over at the server (its events are on their way to us), or our reader is behind
            self._user_stop(st, name, now, got)
            if st.forced_at is not None:
                quiet = now - st.bytes_changed_at >= self.b.stop_grace
                waited = now - st.forced_at
                if waited >= self.b.stop_grace and (st.forced or quiet or waited >= self.b.late_data):
                    out.append(Action("abort", name, st.forced or st.overdue or "", "error"))
                    st.done = True
                continue
            behind = now >= start + self.limit and self._behind(st, now, start)
            if behind and not st.behind_said:  # (the progress rules below still apply)
                st.behind_said = True
                out.append(
                    Action(
                        "message",
                        name,
                        (
                            f"manager {self.where[name]} is behind: {now - start:.0f} s after its jobs started, its "
                            f"newest report shows {st.fio_clock_s:.0f} s of {self.planned_s:g} s on fio's own clock "
                            f"(its reports arrive late); waiting up to {self.b.behind:g} s more for it to end, longer "
                            "while fio's clock in its reports still moves"
                        ),
                        note=BEHIND,
                    )
                )
            if now >= start + self.limit and not behind:
                st.overdue, st.forced_at = (
                    (
                        f"manager {self.where[name]} was still running {self.limit:g} s after its jobs started "
                        f"(ramp + run time + {self.grace:g} s grace; phase: {self.phase(name, now)}) and did "
                        f"not end when asked (phase: {STOP}); it was stopped"
                    )
                    if st.running_since is not None
                    else (
                        f"manager {self.where[name]} did not begin its I/O within {self.b.setup:g} s + ramp + "
                        f"run time + {self.grace:g} s grace of the step's start (phase: {START}) and did not "
                        f"end when asked (phase: {STOP}); it was stopped"
                    ),
                    now,
                )
                out.append(
                    Action(
                        "stop",
                        name,
                        f"manager {self.where[name]} is still running {self.limit:g} s after "
                        "its jobs started; asking it to stop",
                    )
                )
                continue
            stuck = self._stuck(st, name, now, got, (last_heard or {}).get(name))
            if stuck:
                out += stuck
                continue
            heard = self._heard(st)
            last = heard if heard is not None else self.go_at
            if st.bytes_ref != last:
                st.bytes_seen, st.bytes_ref = got, last
            if heard is not None and st.late_since is None and now - last >= self.late_s:
                st.late_since = now
                arriving = got is not None and st.bytes_seen is not None and got > st.bytes_seen
                why = "data still arriving" if arriving else "nothing new received"
                out.append(
                    Action(
                        "message",
                        name,
                        f"numbers from {self.where[name]} are late: last report "
                        f"{now - last:.0f} s ago ({why})",
                        note=LATE,
                    )
                )
        return out

    def _user_stop(self, st: _State, name: str, now: float, got: int | None) -> None:
        """From a Stop on, the stop's bound applies (see ``stop_asked``)."""
        if self._stop_asked_at is None or st.forced_at is not None or got is None:
            return
        st.overdue = (
            f"manager {self.where[name]} did not end when Stop was pressed (phase: {STOP}, in its "
            f"{self.phase(name, now)}): nothing arrived from it for {self.b.stop_grace:g} s after the Stop "
            "(job processes stopped or stuck?); it was ended, its numbers so far kept"
        )
        # quiet is judged on report data: a server reporting less often than the grace is given two reports
        st.forced_at = self._stop_asked_at + max(0.0, 2 * self.interval - self.b.stop_grace)

    def phase(self, name: str, now: float) -> str:
        """Where manager ``name`` is in its step: start (no I/O yet), ramp, run, final report (fio's clock at
        its planned end), or stop (asked to stop)."""
        st = self._m[name]
        if st.forced_at is not None:
            return STOP
        if st.running_since is None:
            return START
        clock = st.fio_clock_s
        if clock is not None and clock < self.ramp_s:
            return RAMP
        if self.planned_s <= 0 or clock is None or clock < self.planned_s:
            return RUN
        return FINAL

    def _stuck(
        self, st: _State, name: str, now: float, got: int | None, byte_at: float | None
    ) -> list[Action]:
        """The progress rules: I/O counters that stay put while reports come, or no report (and no report
        data) while the server still answers, for the stall limit, in any phase from the start on."""
        phase = self.phase(name, now)
        if (
            st.counters
            and st.changed_at is not None
            and st.last_report is not None
            and st.last_report > st.changed_at
            and now - st.changed_at >= self.stall_s
        ):
            return self._force(
                st,
                name,
                now,
                "stop",
                f"manager {self.where[name]} made no progress for {now - st.changed_at:.0f} s "
                f"(phase: {phase}): fio's I/O counters stayed at {st.counters} while its reports kept coming "
                "(job processes stopped or stuck?); it was stopped",
            )
        answering = (
            byte_at is None or now - byte_at < self.stall_s / 2
        )  # (ETA polls are answered each second)
        if not answering:
            st.silent = True
        elif st.silent:  # answering again: the time it was silent is not counted against its reports
            st.silent, st.answering_from = False, now
        quiet_s = now - max(st.bytes_changed_at, self._heard(st) or 0.0, st.answering_from)
        if got is not None and quiet_s >= self.stall_s and answering:
            since = "" if self._heard(st) is not None else " since the step's start"
            return self._force(
                st,
                name,
                now,
                "stop",
                f"manager {self.where[name]} sent no report and no report data for {quiet_s:.0f} s{since} "
                f"(phase: {phase}; its server still answers: job processes stopped or stuck?); it was stopped",
            )
        return []

    def _behind(self, st: _State, now: float, start: float) -> bool:
        """Still reporting, but not yet at its planned end on fio's clock, or there less than the grace ago
        (its final report is on its way, like anyone's): within BEHIND_S of the deadline, or later while
        fio's clock in its reports still moves (our side works through a backlog; the server's own clock
        bounds the wait: past its planned end + grace it is stopped)."""
        heard = self._heard(st)
        if (
            self.planned_s <= 0
            or st.fio_clock_s is None
            or heard is None
            or now - heard >= self.stall_s
            or (now >= start + self.limit + self.b.behind and not self._clock_moving(st, now))
        ):
            return False
        return st.clock_done_at is None or now < st.clock_done_at + self.grace

    def _clock_moving(self, st: _State, now: float) -> bool:
        """fio's clock in this manager's reports moved within the stall limit."""
        return st.clock_moved_at is not None and now - st.clock_moved_at < self.stall_s

    def _delivering(self, st: _State, now: float) -> bool:
        """Our side still hands on this manager's reports, and they move (fio's clock or its I/O counters)
        within the stall limit: a server whose part is over (or whose bytes wait on our socket) is waited
        for past BEHIND_S while the backlog in our own pipes shrinks; its finite backlog bounds the wait."""
        return (
            st.last_report is not None
            and now - st.last_report < self.stall_s
            and (
                self._clock_moving(st, now)
                or (st.changed_at is not None and now - st.changed_at < self.stall_s)
            )
        )

    def _force(self, st: _State, name: str, now: float, kind: str, reason: str) -> list[Action]:
        st.forced, st.forced_at = reason, now
        if kind == "abort":
            st.done = True
        return [Action(kind, name, reason, "error")]
