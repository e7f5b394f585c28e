"""Run jobs: Start / Stop / Stop all, arming writes, and what the window shows while a test runs."""

from __future__ import annotations

import contextlib
import functools
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QDockWidget, QWidget

from app.engine.devices import disks
from app.engine.guards.held_targets import describe_object, device_words
from app.engine.run.curve_runner import LOAD_SEARCH
from app.live.data import LiveResults
from app.model.plan import LOCAL, Plan
from app.model.units import format_bytes
from app.model.validation import Problem, validate
from app.ui.plan.plan_document import PlanDocument
from app.ui.plan.topology import TopologyTree
from app.ui.run.results_file_prompt import CANCELLED, ask_results_file, describe
from app.ui.run.results_tab import ResultsTab
from app.ui.run.run_driver import RUNNING, QtRunListener, RunDriver
from app.ui.run.run_feedback import step_text
from app.ui.user_desk import UserDesk
from app.ui.window.status import RunStatus

if TYPE_CHECKING:
    from collections.abc import Sequence

    from app.engine.run.runner import ManagerEndpoint, RunListener, Runner, RunOptions
    from app.engine.transports.transport import Message
    from app.live.data import LiveSample
    from app.model.pts import PtsSetup

    # builds another kind of runner for Start (a load search's): (plan, endpoints, listener, options)
    MakeRunner = Callable[[Plan, dict[str, ManagerEndpoint], RunListener | None, RunOptions], Runner]


def plan_errors(plan: Plan) -> list[Problem]:
    """The plan's errors in the user's words (each names its spec, manager, worker or target): Start waits
    until there are none."""
    return [p for p in validate(plan) if p.severity == "error"]


def describe_risk(risk: Any, local: bool) -> str:
    """'manager: path (3.0 MiB file) — reason', with a local disk's size and model from the disk list."""
    what = ""
    if local:
        try:
            st = os.stat(risk.path)
        except OSError:
            st = None
        if st is not None and stat.S_ISREG(st.st_mode):
            what = f"{format_bytes(st.st_size)} file"
        else:
            d = next((d for d in disks.list_disks() if d.path == risk.path), None)
            if d is not None:
                what = f"{format_bytes(d.size_bytes)} disk, {d.model or 'model unknown'}, {d.state}"
    else:
        what = "on a remote manager"
    obj, backing = getattr(risk, "obj", None), getattr(risk, "backing", None)
    if obj is not None:  # the object the answer arms: another one under the same name is asked about again
        kind, a, b = obj
        ident = f"{device_words(a)}, inode {b}" if kind == "file" else describe_object(obj)
        what += (", " if what else "") + ident
    if backing is not None:
        what += f", a loop device over {describe_object(backing)}"
    return f"{risk.manager}: {risk.path}" + (f" ({what})" if what else "") + f" — {risk.reason}"


class RunControl:
    """The window's side of a run: Start / Stop / Stop all (and a load search from Test Setup), the questions
    before a run writes, and what the window shows while it runs (live results, Messages, the status bar,
    failed managers marked in the Topology and Results Display). The run itself, the engine in a thread, is
    the ``RunDriver`` (ui/run/run_driver.py). It talks to the user through ``desk``, looked up at the
    time of use (tests replace the window's ``ask`` and ``show_problem``)."""

    def __init__(
        self,
        parent: QWidget,
        desk: UserDesk,
        doc: PlanDocument,
        live: LiveResults,
        controller: RunDriver,
        topology: TopologyTree,
        results_tab: ResultsTab,
        status: RunStatus,
        messages_dock: QDockWidget,
        show_tab: Callable[[QWidget], None],
    ):
        """``parent``: the results file dialog's parent; ``show_tab``: brings Results Display to the front."""
        self.parent = parent
        self.desk = desk
        self.doc = doc
        self.live = live
        self.controller = controller
        self.topology = topology
        self.results_tab = results_tab
        self.status = status
        self.messages_dock = messages_dock
        self.show_tab = show_tab
        self.lost: dict[str, str] = {}  # managers whose fio failed in this run: cause (replaced per run)
        self.failures: list[str] = []  # what failed, for the run's end summary (replaced per run)
        self.run_options: RunOptions | None = (
            None  # for the next Start (tests, screenshots); None: the plan's
        )
        self.run_endpoints: dict[str, ManagerEndpoint] | None = None  # None: from the plan's hosts
        self.last_results_file: Path | None = None  # Iometer's results file, offered again next time
        self.search_limit: float | None = None  # the p99 limit (ms) of the load search running, if one is
        c = controller
        c.refused.connect(lambda text: self.desk.show_problem("Cannot start the test", text))
        c.finished.connect(self._on_run_finished)
        c.state_changed.connect(lambda _state: self.update_status())
        c.tick.connect(self.update_status)

    def arm_text(self, risks: list[Any]) -> str:
        """What a run would overwrite, each target with its size and (for disks) model, as the question says it."""
        local = {m.name for m in self.doc.plan.managers if m.host == LOCAL}
        return (
            "This run WRITES to targets holding data; their contents will be overwritten:\n\n"
            + "\n".join(f"• {describe_risk(r, r.manager in local)}" for r in risks)
            + "\n\nCancel keeps them as they are."
        )

    def arm_writes(self, risks: list[Any]) -> bool:
        """Ask before writing to raw disks or existing files (the engine refuses unarmed writes); Cancel is
        the default of both questions."""
        if not self.desk.ask("Targets would be written", self.arm_text(risks), "Overwrite and start"):
            return False
        in_use = [r for r in risks if r.in_use]
        if in_use:
            return self.desk.ask(
                "Targets in use",
                "These disks or files are in use; writing corrupts what is on them or what uses them:\n\n"
                + "\n".join(f"• {r.manager}: {r.path} — {r.use}" for r in in_use)
                + "\n\nAre you absolutely sure?",
                "Corrupt them and start",
            )
        return True

    def create_folders(self, folders: list[str]) -> bool:
        """New test files need these folders; fio would create them silently, so Fiometer asks."""
        return self.desk.ask(
            "Folders do not exist",
            "The test files go into folders that do not exist:\n\n"
            + "\n".join(f"• {f}" for f in folders)
            + "\n\nCreate them?",
            "Create folders and start",
        )

    def arm_hosts(self, hosts: list[tuple[str, str]]) -> set[str]:
        """The plain fio servers this run may write on without verification: a checkbox per manager, none
        ticked; Cancel is the default."""
        from app.ui.run.unverified_hosts import ask_hosts

        return ask_hosts(hosts, self.parent)

    def start_curve(self, p99_max_ms: float, metric: str = "iops", max_load: int = 0) -> bool:
        """`fiometer curve` from Test Setup: for each access spec the highest load whose p99 keeps the limit."""
        from app.engine.run.curve_runner import CurveRunner

        # a partial of the class (not a closure): it crosses to a run in a process of its own
        make = functools.partial(CurveRunner, p99_max_ms=p99_max_ms, metric=metric, max_load=max_load or None)
        self.search_limit = p99_max_ms
        started = self.start_run(make)
        if not started:
            self.search_limit = None
        return started

    # a PTS round's end (app.engine.run.pts_runner.PtsRoundMessage): (round, figure, the decision so far);
    # the window plots it in Test Setup's PTS box
    round_shown: Callable[[int, float | None, str], None] | None = None

    def pts_round(self, message: Message) -> None:
        from app.engine.run.pts_runner import PtsRoundMessage

        if isinstance(message, PtsRoundMessage) and self.round_shown is not None:
            self.round_shown(message.round, message.value, message.text)

    def start_pts(self, setup: PtsSetup) -> bool:
        """`fiometer pts` from Test Setup: the PTS test's own sequence on one raw device, stored as a run."""
        import getpass

        from app.engine.devices.device_facts import device_facts
        from app.engine.run.pts_runner import PtsRunner
        from app.model.pts import build_plan

        facts = device_facts(setup.target) if setup.target else None
        if facts is None or facts.capacity <= 0:
            self.desk.show_problem(
                "Not a raw block device",
                f"{setup.target or 'No device'}: the PTS tests a raw block device (e.g. /dev/nvme1n1) whose "
                "capacity the host tells; give the device itself.",
            )
            return False
        with contextlib.suppress(OSError, KeyError):
            setup.tested_by = setup.tested_by or getpass.getuser()
        plan = build_plan(setup, facts.capacity, facts.logical_sector)
        make = functools.partial(PtsRunner, setup=setup, device=facts.as_dict())
        return self.start_run(make, plan)

    def start_run(self, make: MakeRunner | None = None, plan: Plan | None = None) -> bool:
        """``make``: builds another kind of runner (start_curve's); ``plan``: run this one instead of the
        document's (a PTS test's own)."""
        make = make if callable(make) else None  # an action's triggered(bool) may pass its checked state
        if self.controller.running:
            return False
        if make is None:
            self.search_limit = None  # an ordinary run (start_curve sets the limit of a load search's)
        plan = plan if isinstance(plan, Plan) else self.doc.plan
        errors = plan_errors(plan)
        if errors:
            self.desk.show_problem("The plan has errors", "\n".join(str(p) for p in errors))
            return False
        results_file = ask_results_file(self.parent, plan, self.last_results_file)  # as Iometer asks
        if results_file == CANCELLED:
            return False
        listener = self.controller.start(
            plan,
            self.run_options,
            self.run_endpoints,
            self.arm_writes,
            self.create_folders,
            make,
            results_file=results_file,
            connect=self._connect,
            arm_hosts=self.arm_hosts,
        )
        if listener is None:
            return False
        if isinstance(results_file, Path):
            self.last_results_file = results_file
            self.desk.add_message(describe(results_file))
        for note in self.controller.runner.notes if self.controller.runner else []:
            self.desk.add_message(note, "warning")  # what could not be verified on remote managers
        self.show_tab(self.results_tab)
        self.desk.add_message(f"Run started: {self.controller.progress.steps} step(s)")
        return True

    def _connect(self, listener: QtRunListener) -> None:
        """The run is prepared and has not gone yet: the last run's view is cleared and this one's handlers
        connected, so that no event of it (its first step's start above all) is emitted to nobody."""
        self.lost = {}
        self._show_lost()
        self.failures = []
        self.live.clear()
        self.results_tab.validity.hide()  # the last run's notes are not this one's
        self.results_tab.now.clear()
        if self.search_limit is not None:
            self.results_tab.load_search.begin(self.search_limit)
        else:
            self.results_tab.load_search.hide()
        self.results_tab.charts.clear_marks()
        self.results_tab.redraw(force=True)
        listener.stepStarted.connect(self._on_step_started)
        listener.samplesArrived.connect(self._on_samples)
        listener.messageArrived.connect(self._on_run_message)
        listener.stepFinished.connect(self._on_step_finished)
        listener.managerFinished.connect(self._on_manager_finished)

    def _on_step_started(self, index: int, offset: float, step: Any) -> None:
        self.live.start_step(offset, f"{index + 1}: {step.spec_label}")
        total = self.controller.progress.steps
        self.results_tab.now.running(step_text(index, total, step, self.search_limit is not None))
        self.update_status()  # the status bar's step with it, whichever order the run's signals come in

    def _on_samples(self, _index: int, offset: float, samples: Sequence[LiveSample]) -> None:
        self.live.defer(offset, samples)  # fed when the window redraws (its tick), every batch at once

    def _on_run_message(self, _step: Any, message: Message) -> None:
        who = message.manager
        if message.kind == LOAD_SEARCH:
            self.results_tab.load_search.tried(message.text)
            self.desk.add_message(f"Load search: {message.text}", message.level)
            return
        self.desk.add_message(f"{who}: {message.text}" if who else message.text, message.level)
        self.pts_round(message)
        if message.level == "error":
            self.messages_dock.show()

    def _on_manager_finished(self, step: Any, finished: Any) -> None:
        """A manager's fio ended; one that failed is marked at once, with its cause, everywhere it shows."""
        if finished.ok or finished.stopped or self.controller.state != RUNNING:
            return  # Stop, Stop all and abort end managers on purpose
        name = finished.manager
        self.lost[name] = finished.reason or "fio failed"
        self.failures.append(
            f"step {step.index + 1} ({step.spec_label}): manager {name} failed: {self.lost[name]}"
        )
        self.desk.add_message(
            f"Manager {name} failed in step {step.index + 1}: {self.lost[name]}. Its numbers are no "
            "longer current; the other managers go on.",
            "error",
        )
        self.messages_dock.show()
        self.desk.statusBar().showMessage(f"Manager {name} failed: {self.lost[name]}", 15000)
        self._show_lost()

    def _show_lost(self) -> None:
        self.topology.lost = dict(self.lost)
        self.topology.rebuild(self.doc.plan)
        self.results_tab.mark_lost(self.lost)

    def _on_step_finished(self, outcome: Any) -> None:
        step = outcome.step
        self.desk.add_message(f"Step {step.index + 1} ({step.spec_label}): {outcome.status}")

    def stop_run(self) -> None:
        self.controller.stop_step()

    def stop_all(self) -> None:
        if self.controller.state == RUNNING:
            self.controller.stop()
        else:  # pressed again while stopping: end at once
            self.controller.abort()

    def _on_run_finished(self, status: str) -> None:
        self.results_tab.redraw(force=True)
        self.results_tab.now.ended(status)
        self.results_tab.charts.fit_x_to_data()  # the whole run, edge to edge (no room ahead any more)
        summary = self.controller.last_summary
        self.desk.add_message(f"Run {status}" + (f": {summary.text()}" if summary else ""))
        if self.failures:
            self.desk.add_message(
                f"What failed in this run ({len(self.failures)}):\n"
                + "\n".join(f"• {f}" for f in self.failures),
                "error",
            )
            self.messages_dock.show()
        rec = self.controller.run_end
        if rec is not None and rec.run_id is not None:
            self.results_tab.validity.set_notes(rec.notes)  # whether the figures measure the storage
            self._say_curve(rec.run_id, status)
            self.desk.add_message(
                f"Stored as run {rec.run_id} in {self.controller.stored_in}: open it in History "
                "(View > History)"
            )
        elif self.search_limit is not None:  # not stored: no answer to give
            self.results_tab.load_search.finished([], status)
        self.desk.statusBar().showMessage(f"Run {status}", 10000)

    def _say_curve(self, run_id: int, status: str) -> None:
        """A load search's answer, per access spec: the result panel in the Results Display and the messages
        (History's run view and reports show it too)."""
        from app.analysis.curve import curve_of
        from app.store import get_run, open_store
        from app.store.errors import StoreError

        try:
            with open_store(self.controller.db_path) as store:
                results = curve_of(get_run(store, run_id))
        except StoreError:
            results = []
        if self.search_limit is not None:
            self.results_tab.load_search.finished(results, status)
        for r in results:
            self.desk.add_message(f"Curve: {r.sentence()}")

    def update_status(self) -> None:
        self.status.show_progress(self.controller)
