"""How long each phase of a step may take before its manager is given up on (Qt-free, no I/O).

A step's phases, in order, each with its bound (the user guide, §5, "Every phase is bounded"):

- **probe**: the short read-only fio jobs that check remote test files (before the run and before each
  step), and **layout**: the fio job that lays out a missing remote test file before the step. Both are
  judged by progress: no report for ``stall`` while the job runs (fio's reports stop when its job
  processes are stopped or stuck in the kernel, although the server still answers), no I/O for ``setup``
  before the first I/O, or I/O counters that stay put for ``stall`` once it began.
- **start** (RUN to the first report with I/O), **ramp**, **run** and **final report** (fio's clock at its
  planned end, the final numbers on their way): the step watch (``app.engine.run.step_watch``) stops a
  manager that sends no report for ``stall`` while its server answers, or whose counters stay put, and
  every manager at ramp + run + ``grace``.
- **stop**: a manager asked to stop is aborted ``stop_grace`` later (``late_data`` at most while report
  data still arrives).

Tests scale these down (``RunOptions.bounds``); the defaults are the documented limits.
"""

from __future__ import annotations

from dataclasses import dataclass

PROBE, LAYOUT, START, RAMP, RUN, FINAL, STOP = (
    "probe",
    "layout",
    "start",
    "ramp",
    "run",
    "final report",
    "stop",
)
PHASES = (PROBE, LAYOUT, START, RAMP, RUN, FINAL, STOP)


@dataclass(frozen=True)
class Bounds:
    """The limits, in seconds. ``stall`` and ``grace`` are at least these and at least 5 and 3 status
    intervals (:meth:`stall_s`, :meth:`grace_s`)."""

    stall: float = 10.0  # no report (server answering), or I/O counters unmoved, for this long: stuck
    grace: float = 10.0  # past ramp + run time: the step's deadline
    setup: float = 60.0  # from a job's start to its first I/O (fio laying out files, setting up its jobs)
    stop_grace: float = 5.0  # from a forced stop to the abort
    late_data: float = 20.0  # from the deadline's stop to the abort while data still arrives
    behind: float = 30.0  # past the deadline, for a manager whose reports arrive but lag fio's own clock

    def stall_s(self, interval: float) -> float:
        return max(self.stall, 5 * interval)

    def grace_s(self, interval: float) -> float:
        return max(self.grace, 3 * interval)


DEFAULT = Bounds()
