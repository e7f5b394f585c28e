"""Plain values going into and coming out of the store. Metrics is the value type for measurements."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from app.model.metrics import Metrics
from app.process_owner import ProcessOwner


@dataclass(frozen=True)
class SampleRow:
    """One interval of one level, as telemetry produces it. ``manager`` is None for ALL.

    ``interval`` covers the last interval, ``whole`` the step so far. Samples keep the interval
    window's histograms; the whole window's histograms are kept only in the final results.
    """

    manager: str | None
    level: str  # "target" | "worker" | "manager" | "all"
    key: str
    t: float  # seconds since the step started
    interval: Metrics
    whole: Metrics


@dataclass(frozen=True)
class ResultRow:
    """A step's final numbers for one level, histograms included."""

    manager: str | None
    level: str
    key: str
    metrics: Metrics


@dataclass
class ManagerInfo:
    name: str
    address: str = "local"  # host:port of a fio server, or "local"
    os: str = ""
    fio_version: str = ""
    protocol: int | None = None


@dataclass
class WorkerInfo:
    manager: str
    key: str
    name: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class TargetInfo:
    manager: str
    worker: str  # the worker's key
    key: str
    name: str = ""
    path: str = ""
    details: dict[str, Any] = field(default_factory=dict)  # queue depth, size, direct I/O ...


@dataclass
class StepOutput:
    job_text: str | None = None
    raw_output: str | None = None


@dataclass
class MessageInfo:
    at: str
    level: str  # info | warning | error
    text: str
    manager: str | None = None
    step_id: int | None = None


@dataclass
class StepInfo:
    id: int
    run_id: int
    index: int
    spec_name: str
    spec_text: str
    queue_depth: int | None
    active_workers: list[Any]
    active_targets: list[Any]
    ramp_s: float
    run_s: float
    started: str
    ended: str | None
    status: str
    outputs: dict[str, StepOutput] = field(default_factory=dict)  # by manager name
    messages: list[MessageInfo] = field(default_factory=list)
    results: list[ResultRow] = field(default_factory=list)


@dataclass
class RunListing:
    """One stored run as the runs list shows it (``list_runs``); ``Run`` adds everything else. Not the
    engine's ``runner.RunSummary`` (how many steps ran, stopped, failed)."""

    id: int
    uuid: str
    name: str
    description: str
    status: str
    started: str
    ended: str | None
    plan_name: str
    plan_sha256: str
    notes: str
    tags: list[str]
    step_count: int


@dataclass
class Run(RunListing):
    plan_json: str = ""
    host: dict[str, Any] = field(default_factory=dict)
    owner: ProcessOwner | None = None
    managers: list[ManagerInfo] = field(default_factory=list)
    workers: list[WorkerInfo] = field(default_factory=list)
    targets: list[TargetInfo] = field(default_factory=list)
    steps: list[StepInfo] = field(default_factory=list)
    messages: list[MessageInfo] = field(default_factory=list)  # about the run, not one step

    def plan_setup(self) -> dict[str, Any]:
        """The test setup of the plan stored with the run ({} when it is missing or unreadable)."""
        try:
            setup = json.loads(self.plan_json or "{}").get("plan", {}).get("setup", {})
        except (ValueError, AttributeError):
            return {}
        return setup if isinstance(setup, dict) else {}

    @property
    def fio_versions(self) -> list[str]:
        return sorted({m.fio_version for m in self.managers if m.fio_version})
