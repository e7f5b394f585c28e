"""What a run tells whoever follows it (``RunListener``), and how its steps ended (``StepOutcome``,
``RunSummary``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from app.engine.jobs.jobfile import JobFile
from app.engine.jobs.sequence import Step
from app.engine.run.endpoint import ManagerEndpoint
from app.engine.sampling.telemetry import Sample
from app.engine.transports.transport import Finished, Message
from app.model.plan import Plan


@dataclass
class StepOutcome:
    step: Step
    status: str  # complete | stopped | partial | failed
    results: list[Sample]  # whole-step numbers per level, from fio's final reports
    finished: dict[str, Finished]
    raw_output: dict[str, str | None]
    started: float
    ended: float
    job_started: dict[str, float] = field(default_factory=dict)  # manager -> its I/O's start (time.time())
    refused: bool = False  # no manager's fio started (a check or a start refused them all): nothing ran

    @property
    def counted_as(self) -> str:
        """How the run's summary counts this step: its status, or 'refused' when no fio started."""
        return "refused" if self.refused else self.status

    @property
    def start_spread(self) -> float | None:
        """Seconds between the first and the last manager's I/O start (``io_start_times``)."""
        times = list(self.job_started.values())
        return max(times) - min(times) if len(times) > 1 else None


def io_start_times(io_start: dict[str, float]) -> dict[str, float]:
    """Each manager's I/O start (StepTelemetry.io_start, monotonic) as time.time()."""
    offset = time.time() - time.monotonic()
    return {n: t + offset for n, t in io_start.items()}


@dataclass
class RunSummary:
    """How many of a run's planned steps completed, were stopped, failed, or never ran."""

    planned: int
    complete: int = 0
    stopped: int = 0
    failed: int = 0
    refused: int = 0  # steps that failed before any fio started: they did not run

    @property
    def ran(self) -> int:
        return self.complete + self.stopped + self.failed

    @property
    def skipped(self) -> int:
        return self.planned - self.ran - self.refused

    def text(self) -> str:
        """e.g. '2 of 4 steps ran (1 complete, 1 stopped); 2 skipped'."""
        parts = [
            f"{n} {what}"
            for n, what in ((self.complete, "complete"), (self.stopped, "stopped"), (self.failed, "failed"))
            if n
        ]
        ran = f"{self.ran} of {self.planned} step{'s' if self.planned != 1 else ''} ran"
        return (
            ran
            + (f" ({', '.join(parts)})" if parts else "")
            + (f"; {self.refused} refused before fio started" if self.refused else "")
            + (f"; {self.skipped} skipped" if self.skipped else "")
        )


def summarize(statuses: list[str], planned: int) -> RunSummary:
    """The summary of steps that ended with ``statuses`` (complete | stopped | partial | failed | refused:
    ``StepOutcome.counted_as``)."""
    out = RunSummary(planned)
    for status in statuses:
        if status == "refused":
            out.refused += 1
        elif status == "complete":
            out.complete += 1
        elif status == "stopped":
            out.stopped += 1
        else:
            out.failed += 1
    return out


class RunListener:
    """Override what you need. All calls come from the runner thread, in order."""

    def run_prepared(self, jobfiles: list[dict[str, JobFile]]) -> None:
        """Before ``run_started``: the job files of every step the run may run, as its checks passed them
        (per step, by manager; a load search's every candidate). Where each target is comes from here."""

    def run_started(self, plan: Plan, steps: list[Step], endpoints: dict[str, ManagerEndpoint]) -> None: ...
    def step_started(self, step: Step, jobfiles: dict[str, JobFile]) -> None: ...
    def samples(self, step: Step, samples: list[Sample]) -> None: ...
    def message(self, step: Step | None, message: Message) -> None: ...
    def manager_finished(self, step: Step, finished: Finished) -> None:
        """A manager's fio ended in this step (``finished.ok`` False: failed or lost), as it happens."""

    def step_finished(self, outcome: StepOutcome) -> None: ...
    def run_finished(self, status: str) -> None: ...
