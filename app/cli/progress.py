"""`fiometer run`'s live progress line and final results tables (a Qt-free RunListener)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from app.cli.common import escape_controls
from app.engine.jobs.sequence import Step
from app.engine.run.curve_runner import LOAD_SEARCH
from app.engine.run.runner import ManagerEndpoint, RunListener, StepOutcome
from app.engine.transports.transport import Message
from app.model.metrics import Metrics
from app.model.plan import Plan


def fmt_num(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v:,.{digits}f}"


def brief(m: Metrics) -> str:
    """The live line's numbers, three significant digits; no response time without completed I/Os (a
    dash, not "0.000 ms"), and no IOPS of zero beside a moving MB/s (bytes before completions: a dash)."""
    from app.report.tables import fmt_sig

    done = bool(m.ios)
    iops = fmt_sig(m.iops) if done or not m.mbps else "-"
    lat = f"{fmt_sig(m.lat_mean_ms)} ms" if done and m.lat_mean_ms else "- ms"
    return f"{iops} IOPS {fmt_sig(m.mbps)} MB/s {lat}"


TABLE_COLUMNS = (
    "Step",
    "Access specification",
    "QD",
    "Level",
    "IOPS",
    "MB/s",
    "MiB/s",
    "Avg ms",
    "Max ms",
    "p99 ms",
    "Errors",
)


def results_rows(outcome: StepOutcome) -> list[list[str]]:
    """Iometer's headline columns for the ALL and MANAGER levels of one step."""
    step = outcome.step
    rows = []
    ordered = sorted(
        (s for s in outcome.results if s.level in ("all", "manager")), key=lambda s: (s.level != "all", s.key)
    )
    for s in ordered:
        m = s.whole
        rows.append(
            [
                str(step.index + 1),
                step.spec_label,
                "/".join(map(str, step.queue_depths)),
                "ALL" if s.level == "all" else s.key,
                fmt_num(m.iops),
                fmt_num(m.mbps),
                fmt_num(m.mibps),
                fmt_num(m.lat_mean_ms, 3),
                fmt_num(m.lat_max_ms, 3),
                fmt_num(m.percentile_ms(99), 3),
                str(m.errors),
            ]
        )
    return rows


def format_table(header: tuple[str, ...], rows: list[list[str]], numeric: set[int] | None = None) -> str:
    """Columns padded to their widest cell; ``numeric`` ones (by default all but the access specification
    and level) right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    if numeric is None:
        numeric = {i for i, h in enumerate(header) if h not in ("Access specification", "Level")}

    def line(cells) -> str:
        return "  ".join(
            c.rjust(w) if i in numeric else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


class ProgressPrinter(RunListener):
    """The live line of `fiometer run`. Text from plans and fio is written with control characters
    escaped; only the printer's own line-clearing sequence reaches the terminal raw."""

    def __init__(self, out: TextIO | None = None):
        self.out = out if out is not None else sys.stdout
        self.tty = self.out.isatty()
        self.step_seconds = 0  # ramp-up + run time of the current step, as its job file says; 0: until Stop
        self.ramp_seconds = 0  # the current step's ramp-up, as its job file says
        self.fio_seconds: float | None = None  # the step's time on fio's clock, from its managers' reports
        self.steps: list[Step] = []
        self.step_start = 0.0
        self.latest: dict[str, Metrics] = {}
        self.outcomes: list[StepOutcome] = []
        self.plan: Plan | None = None
        self._told: set[tuple[int, str]] = (
            set()
        )  # (step index, manager) whose failure was printed as it happened

    def _print(self, text: str, transient: bool = False) -> None:
        if self.tty:
            control = getattr(self.out, "write_control", self.out.write)
            control("\r\x1b[2K")
        self.out.write(escape_controls(text) + ("" if self.tty and transient else "\n"))
        self.out.flush()

    def run_started(self, plan: Plan, steps: list[Step], endpoints: dict[str, ManagerEndpoint]) -> None:
        self.plan, self.steps = plan, steps
        hosts = ", ".join(
            f"{e.name} on {e.host}" + (f" (fio {e.fio_version})" if e.fio_version else "")
            for e in endpoints.values()
        )
        self._print(f"Running {plan.name!r}: {len(steps)} steps; managers: {hosts}")

    def step_started(self, step: Step, jobfiles) -> None:
        self.step_start = time.monotonic()
        self.step_seconds = max((jf.step_seconds for jf in jobfiles.values()), default=0)
        self.ramp_seconds = max((jf.ramp_up for jf in jobfiles.values()), default=0)
        self.fio_seconds = None
        self.latest = {}
        self._print(
            f"Step {step.index + 1}/{len(self.steps)}: {step.spec_label}, "
            f"QD {'/'.join(map(str, step.queue_depths))}, {step.target_count} targets"
        )

    def samples(self, step: Step, samples) -> None:
        for s in samples:
            if s.level in ("manager", "all"):
                self.latest["ALL" if s.level == "all" else s.key] = s.interval
            if s.level == "manager":
                self.fio_seconds = max(self.fio_seconds or 0.0, self.ramp_seconds + s.whole.seconds)
        elapsed = self.elapsed()
        limit = self.step_seconds
        when = f"{elapsed:5.0f}s" + (
            f"/{limit}s" if limit and elapsed <= limit + 0.5 else f" ({limit}s planned)" if limit else ""
        )
        parts = [f"{k}: {brief(m)}" for k, m in self.latest.items() if k != "ALL"]
        if len(parts) > 1 and "ALL" in self.latest:
            parts.append(f"ALL: {brief(self.latest['ALL'])}")
        self._print(f"  [{step.index + 1}/{len(self.steps)} {when}] " + " | ".join(parts), transient=True)

    def elapsed(self) -> float:
        """How far the step is, on fio's clock: the ramp-up and the longest measured runtime in the managers'
        reports (the time fio is given counts from its I/O's start, not from this process starting fio: a
        loaded machine must not show a step running over). Wall time since the step began, before any report."""
        return self.fio_seconds if self.fio_seconds is not None else time.monotonic() - self.step_start

    def message(self, step: Step | None, message: Message) -> None:
        if message.kind == LOAD_SEARCH:  # each load a load search measured, against its p99 limit
            self._print(f"  load search: {message.text}")
        elif message.level in ("warning", "error"):
            who = f"manager {message.manager}: " if message.manager else ""
            self._print(f"  {message.level}: {who}{message.text}")

    def manager_finished(self, step: Step, finished) -> None:
        """A manager that failed is printed when it fails, not at the end of its step."""
        if not finished.ok and not finished.stopped:
            self._told.add((step.index, finished.manager))
            elapsed = time.monotonic() - self.step_start
            self._print(
                f"  [{step.index + 1}/{len(self.steps)} {elapsed:5.0f}s] manager {finished.manager} "
                f"failed: {finished.reason}"
            )

    def step_finished(self, outcome: StepOutcome) -> None:
        self.outcomes.append(outcome)
        spread = outcome.start_spread
        started = f" (managers' I/O started within {spread * 1000:.0f} ms)" if spread is not None else ""
        self._print(f"  step {outcome.step.index + 1} {outcome.status}{started}")
        for name, f in outcome.finished.items():
            if not f.ok and (outcome.step.index, name) not in self._told:
                self._print(f"  manager {name} failed: {f.reason}")

    def run_finished(self, status: str) -> None:
        self._print(f"\nRun {status}. Results (whole step, response time = fio total latency lat_ns):")
        rows = [r for o in self.outcomes for r in results_rows(o)]
        self._print(format_table(TABLE_COLUMNS, rows))
