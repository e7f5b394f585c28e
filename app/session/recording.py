"""Every run lands in the store: a RunListener that records plan, managers, steps, samples and results.

Used by the CLI and the GUI alike. Samples are committed per interval, so a run whose process dies
keeps everything up to the last interval (the store marks it interrupted when next opened).
"""

from __future__ import annotations

import contextlib
import logging
import traceback
from collections.abc import Callable

from app.engine.devices.disks import disk_of
from app.engine.devices.environment import machine_facts, target_facts
from app.engine.jobs.jobfile import JobFile, client_workers, target_key, target_paths, worker_key
from app.engine.jobs.sequence import Step
from app.engine.run.runner import ManagerEndpoint, RunListener, StepOutcome, summarize
from app.engine.sampling.file_allocation import written_bytes
from app.engine.sampling.host_cpu import busy_pct, cpu_times
from app.engine.transports.transport import Message
from app.model import planfile
from app.model.plan import Plan
from app.model.spec_words import spec_text
from app.store.database import Store
from app.store.errors import StoreError
from app.store.recorder import Recorder, host_facts
from app.store.records import ManagerInfo, ResultRow, SampleRow, TargetInfo, WorkerInfo

log = logging.getLogger(__name__)

STEP_STATUS = {"complete": "complete", "stopped": "stopped", "partial": "failed", "failed": "failed"}


class StoreRecorder(RunListener):
    """Records a run. The first store fault (disk full, read-only or locked file) is raised to the
    runner, which ends the run; after it nothing more is attempted but marking the run failed, so the
    run is kept as far as it got."""

    def __init__(
        self,
        store: Store,
        tags: list[str] | None = None,
        name: str = "",
    ):
        self.recorder = Recorder(store)
        self._paths: dict[tuple[str, str], str] = {}  # (manager, target key) -> path, from the job files
        self.tags = tags or []
        self.name = name
        self.run_id: int | None = None
        self.plan: Plan | None = None
        self._step_ids: dict[int, int] = {}
        self._planned = 0
        self._statuses: list[str] = []
        self.failure: StoreError | None = None  # the store fault that ended recording, if any
        self._local: set[str] = set()  # managers running on this host
        self._facts: dict[tuple[int, str], dict] = {}  # (step, local manager) -> what only the run could see
        self.notes: list = []  # the run's validity notes, once it has ended

    def _recording(self) -> bool:
        return self.failure is None

    def _fault(self, e: StoreError) -> StoreError:
        if self.failure is None:
            self.failure = e
            log.error("recording of run %s stopped by a store fault: %s", self.run_id, e)
        return e

    def run_prepared(self, jobfiles: list[dict[str, JobFile]]) -> None:
        self._paths = target_paths(jobfiles)

    def run_started(self, plan: Plan, steps: list[Step], endpoints: dict[str, ManagerEndpoint]) -> None:
        self._planned = len(steps)
        try:
            self._run_started(plan, steps, endpoints)
        except StoreError as e:
            raise self._fault(e) from None
        log.info("recording run %s (%d step(s)) in %s", self.run_id, len(steps), self.recorder.store.path)

    def _run_started(self, plan: Plan, steps: list[Step], endpoints: dict[str, ManagerEndpoint]) -> None:
        self.plan = plan
        self._local = {ep.name for ep in endpoints.values() if ep.host == "local"}
        rec = self.recorder
        local = machine_facts()
        host = {
            **host_facts(),
            **local,
            "managers": {
                ep.name: {**(local if ep.host == "local" else ep.environment), "fio_version": ep.fio_version}
                for ep in endpoints.values()
            },
        }
        self.run_id = rec.begin_run(
            planfile.to_dict(plan),
            plan_name=plan.name,
            name=self.name or plan.name,
            description=plan.setup.description,
            tags=self.tags,
            host=host,
        )
        used = [m for m in plan.managers if m.name in endpoints]
        rec.add_managers(
            self.run_id,
            [
                ManagerInfo(ep.name, ep.host, ep.os_name, ep.fio_version, ep.protocol)
                for ep in endpoints.values()
            ],
        )
        workers, targets = [], []
        for m in used:
            for wi, w in enumerate(m.workers):
                workers.append(
                    WorkerInfo(
                        m.name,
                        worker_key(wi),
                        w.name,
                        {
                            "queue_depth": w.queue_depth,
                            "max_size": w.max_size,
                            "start_sector": w.start_sector,
                            "specs": w.specs,
                            "kind": w.kind,
                        },
                    )
                )
                for ti, t in enumerate(w.targets):
                    path = self._paths.get((m.name, target_key(wi, ti)), "")
                    details: dict[str, object] = {"direct": plan.setup.direct_io}
                    if path and endpoints[m.name].host == "local":
                        if disk := disk_of(path):
                            details["disk"] = disk  # the name fio's disk statistics use
                        details["environment"] = target_facts(path)
                    targets.append(
                        TargetInfo(m.name, worker_key(wi), target_key(wi, ti), t.name, path, details)
                    )
        for pi, key, name in client_workers(plan):  # Iometer's client workers of network workers, on partners
            if plan.managers[pi].name in endpoints:
                workers.append(WorkerInfo(plan.managers[pi].name, key, name, {"kind": "network_tcp client"}))
        rec.add_workers(self.run_id, workers)
        rec.add_targets(self.run_id, targets)

    def step_started(self, step: Step, jobfiles: dict[str, JobFile]) -> None:
        if self._recording():
            try:
                self._step_started(step, jobfiles)
            except StoreError as e:
                raise self._fault(e) from None

    def _step_started(self, step: Step, jobfiles: dict[str, JobFile]) -> None:
        assert self.run_id is not None and self.plan is not None
        specs = [self.plan.spec(name) for name in dict.fromkeys(w.spec for w in step.workers)]
        qds = step.queue_depths
        text = spec_text(s for s in specs if s is not None)
        first = next(iter(jobfiles.values()))
        step_id = self.recorder.begin_step(
            self.run_id,
            step.index,
            spec_name=step.spec_label,
            spec_text=text,
            queue_depth=qds[0] if len(qds) == 1 else None,
            active_workers=[[self.plan.managers[a.manager].name, worker_key(a.worker)] for a in step.workers],
            active_targets=[
                [self.plan.managers[a.manager].name, target_key(a.worker, t)]
                for a in step.workers
                for t in a.targets
            ],
            ramp_s=first.ramp_up,
            run_s=first.run_time,
        )
        self._step_ids[step.index] = step_id
        for name, jf in jobfiles.items():
            self.recorder.set_step_output(step_id, name, job_text=jf.text)
        self._jobfiles = jobfiles
        self._cpu_at_start = cpu_times()

    def samples(self, step: Step, samples) -> None:
        if self._recording():
            try:
                self._samples(step, samples)
            except StoreError as e:
                raise self._fault(e) from None

    def _samples(self, step: Step, samples) -> None:
        self.recorder.add_samples(
            self._step_ids[step.index],
            [SampleRow(s.manager, s.level, s.key, s.t, s.interval, s.whole) for s in samples],
        )

    def message(self, step: Step | None, message: Message) -> None:
        if self._recording():
            try:
                self._message(step, message)
            except StoreError as e:
                raise self._fault(e) from None

    def _message(self, step: Step | None, message: Message) -> None:
        assert self.run_id is not None
        self.recorder.add_message(
            self.run_id,
            message.text,
            level=message.level,
            manager=message.manager,
            step_id=self._step_ids.get(step.index) if step else None,
        )

    def step_finished(self, outcome: StepOutcome) -> None:
        if self._recording():
            try:
                self._step_finished(outcome)
            except StoreError as e:
                raise self._fault(e) from None

    def _step_finished(self, outcome: StepOutcome) -> None:
        step_id = self._step_ids[outcome.step.index]
        self._take_step_facts(outcome.step)
        self.recorder.add_step_results(
            step_id, [ResultRow(s.manager, s.level, s.key, s.whole) for s in outcome.results]
        )
        for name, raw in outcome.raw_output.items():
            if raw:
                self.recorder.set_step_output(step_id, name, raw_output=raw)
        errors = "; ".join(f"manager {n} failed: {f.reason}" for n, f in outcome.finished.items() if not f.ok)
        if outcome.status == "partial":
            errors += "; the other managers' results are kept"
        self.recorder.end_step(step_id, STEP_STATUS[outcome.status], error=errors or None)
        self._statuses.append(outcome.counted_as)

    def run_finished(self, status: str) -> None:
        if self.run_id is None:
            return
        if self.failure is not None:  # one attempt: a locked file would make each one wait again
            with contextlib.suppress(StoreError):
                self.recorder.end_run(self.run_id, "failed")  # else it is marked interrupted when next opened
            return
        try:
            summary = summarize(
                self._statuses, max(self._planned, len(self._statuses))
            )  # a search plans none
            self.recorder.add_message(
                self.run_id,
                f"Run {status}: {summary.text()}",
                level="info" if status == "complete" else "warning",
            )
            self.recorder.end_run(self.run_id, status)
        except StoreError as e:
            raise self._fault(e) from None
        log.info("run %s recorded: %s, %s", self.run_id, status, summary.text())
        with contextlib.suppress(StoreError):  # the run is kept whole; `show` works its notes out again
            self._record_validity()

    def _take_step_facts(self, step: Step) -> None:
        """What the validity notes need that only the run can see, taken as the step ends: how much of each local
        test file a reading job read was ever written (the file may be gone later), how busy the host's CPUs were."""
        host_cpu = busy_pct(getattr(self, "_cpu_at_start", None), cpu_times())
        for name, jf in getattr(self, "_jobfiles", {}).items():
            if name not in self._local:
                continue
            facts = self._facts.setdefault((step.index, name), {"allocation": {}})
            if host_cpu is not None:
                facts["host_cpu_pct"] = host_cpu
            for job in jf.jobs:
                if job.network or job.is_device or not job.size or job.writes:
                    continue
                written = written_bytes(job.path, job.offset, job.size)
                if written is not None:
                    facts["allocation"][job.name] = (written, job.size)

    def _record_validity(self) -> None:
        """Keep the run's validity notes with it; a fault in them never costs the run."""
        from app.analysis.validity import record_notes  # analysis reads the store the run was recorded in

        assert self.run_id is not None
        try:
            self.notes = record_notes(self.recorder.store, self.run_id, self._facts)
        except StoreError:
            raise
        except Exception:  # noqa: BLE001 - a rule's fault must not lose the run; say so in the run instead
            log.warning("validity notes of run %s could not be computed", self.run_id, exc_info=True)
            self.recorder.add_message(
                self.run_id,
                "validity notes could not be computed: "
                + traceback.format_exc(limit=3).strip().splitlines()[-1],
                level="warning",
            )


class Fanout(RunListener):
    """Send every callback to several listeners (e.g. the progress display and the store), in order.

    ``isolate``: a listener that raises is reported (to ``on_error``, else a traceback on stderr) and the
    others still get the call, so a recorder bug cannot stop a run or its display (the window uses this).
    """

    def __init__(
        self,
        *listeners: RunListener,
        isolate: bool = False,
        on_error: Callable[[str, Exception], None] | None = None,
    ):
        self.listeners = list(listeners)
        self.isolate = isolate
        self.on_error = on_error  # (callback, error) for an isolated listener's failure; default: traceback

    def add(self, listener: RunListener, first: bool = False) -> None:
        if first:
            self.listeners.insert(0, listener)
        else:
            self.listeners.append(listener)

    def _each(self, callback: str, *args) -> None:
        for listener in list(self.listeners):
            if not self.isolate:
                getattr(listener, callback)(*args)
                continue
            try:
                getattr(listener, callback)(*args)
            except Exception as e:
                if self.on_error is not None:
                    self.on_error(callback, e)
                else:
                    traceback.print_exc()

    def run_prepared(self, *args) -> None:
        self._each("run_prepared", *args)

    def run_started(self, *args) -> None:
        self._each("run_started", *args)

    def step_started(self, *args) -> None:
        self._each("step_started", *args)

    def samples(self, *args) -> None:
        self._each("samples", *args)

    def message(self, *args) -> None:
        self._each("message", *args)

    def manager_finished(self, *args) -> None:
        self._each("manager_finished", *args)

    def step_finished(self, *args) -> None:
        self._each("step_finished", *args)

    def run_finished(self, *args) -> None:
        self._each("run_finished", *args)
