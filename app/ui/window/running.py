"""Run jobs: arming writes, Start / Stop / Stop all, and what the window shows while a test runs."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QMainWindow

from app.engine.devices import disks
from app.model.plan import LOCAL, Plan
from app.model.units import format_bytes
from app.model.validation import Problem, validate
from app.ui.run.results_file_prompt import CANCELLED, ask_results_file, describe
from app.ui.run.run_controller import RUNNING

if TYPE_CHECKING:
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QDockWidget, QTabWidget

    from app.ui.plan.network_tab import NetworkTargetsTab
    from app.ui.plan.plan_document import PlanDocument
    from app.ui.plan.setup_tab import SetupTab
    from app.ui.plan.specs_tab import SpecsTab
    from app.ui.plan.targets_tab import TargetsTab
    from app.ui.plan.topology import TopologyTree
    from app.ui.run.live_data import LiveResults
    from app.ui.run.results_tab import ResultsTab
    from app.ui.run.run_controller import RunController
    from app.ui.window.files import PlanFiles
    from app.ui.window.status import RunStatus


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
    return f"{risk.manager}: {risk.path}" + (f" ({what})" if what else "") + f" — {risk.reason}"


class RunningMixin(QMainWindow):
    lost: dict[str, str]  # managers whose fio failed in this run: cause (replaced per run)
    failures: list[str]  # what failed, for the run's end summary (replaced per run)
    run_options: Any  # RunOptions for the next Start (tests, screenshots); None = plan's own
    run_endpoints: dict[str, Any] | None

    def _init_running(self) -> None:
        """Each window's own run state (never shared through class attributes)."""
        self.lost = {}
        self.failures = []
        self.run_options = None
        self.run_endpoints = None

    if TYPE_CHECKING:  # what MainWindow and the other mixins provide (declared for mypy only: at run time
        # a definition here would shadow theirs in MainWindow's method order)
        doc: PlanDocument
        live: LiveResults
        controller: RunController
        files: PlanFiles
        _close_after_run: bool
        action_map: dict[str, QAction]
        topology: TopologyTree
        tabs: QTabWidget
        targets_tab: TargetsTab
        network_tab: NetworkTargetsTab
        specs_tab: SpecsTab
        setup_tab: SetupTab
        results_tab: ResultsTab
        status: RunStatus
        messages_dock: QDockWidget

        def add_message(self, text: str, level: str = "info") -> None: ...
        def show_problem(self, title: str, text: str) -> None: ...
        def ask(self, title: str, text: str, action: str = "Yes") -> bool: ...

    def _connect_controller(self) -> None:
        c = self.controller
        c.state_changed.connect(self._on_run_state)
        c.refused.connect(lambda text: self.show_problem("Cannot start the test", text))
        c.finished.connect(self._on_run_finished)
        c.tick.connect(self._update_status)

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
        if not self.ask("Targets would be written", self.arm_text(risks), "Overwrite and start"):
            return False
        in_use = [r for r in risks if r.in_use]
        if in_use:
            return self.ask(
                "Disks in use",
                "These disks are in use; writing corrupts what is on them:\n\n"
                + "\n".join(f"• {r.manager}: {r.path} — {r.use}" for r in in_use)
                + "\n\nAre you absolutely sure?",
                "Corrupt them and start",
            )
        return True

    def create_folders(self, folders: list[str]) -> bool:
        """New test files need these folders; fio would create them silently, so Fiometer asks."""
        return self.ask(
            "Folders do not exist",
            "The test files go into folders that do not exist:\n\n"
            + "\n".join(f"• {f}" for f in folders)
            + "\n\nCreate them?",
            "Create folders and start",
        )

    def plan_errors(self) -> list:
        """The plan's errors in the user's words (each names its spec, manager, worker or target)."""
        return plan_errors(self.doc.plan)

    def start_curve(self, p99_max_ms: float, metric: str = "iops", max_load: int = 0) -> bool:
        """`fiometer curve` from Test Setup: for each access spec the highest load whose p99 keeps the limit."""
        from app.engine.run.curve_runner import CurveRunner

        def make(plan, endpoints, listener, options):
            return CurveRunner(
                plan,
                endpoints,
                listener,
                options,
                p99_max_ms=p99_max_ms,
                metric=metric,
                max_load=max_load or None,
            )

        return self.start_run(make)

    def start_run(self, make=None) -> bool:
        """``make``: builds another kind of runner (start_curve's)."""
        make = make if callable(make) else None  # an action's triggered(bool) may pass its checked state
        if self.controller.running:
            return False
        plan = self.doc.plan
        errors = self.plan_errors()
        if errors:
            self.show_problem("The plan has errors", "\n".join(str(p) for p in errors))
            return False
        results_file = ask_results_file(
            self, plan, getattr(self, "last_results_file", None)
        )  # as Iometer asks
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
        )
        if listener is None:
            return False
        if isinstance(results_file, Path):
            self.last_results_file = results_file
            self.add_message(describe(results_file))
        for note in self.controller.runner.notes if self.controller.runner else []:
            self.add_message(note, "warning")  # what could not be verified on remote managers
        self.lost = {}
        self._show_lost()
        self.failures = []
        self.live.clear()
        self.results_tab.validity.hide()  # the last run's notes are not this one's
        self.results_tab.charts.clear_marks()
        self.results_tab.redraw(force=True)
        listener.stepStarted.connect(self._on_step_started)
        listener.samplesArrived.connect(self._on_samples)
        listener.messageArrived.connect(self._on_run_message)
        listener.stepFinished.connect(self._on_step_finished)
        listener.managerFinished.connect(self._on_manager_finished)
        self.tabs.setCurrentWidget(self.results_tab)
        self.add_message(f"Run started: {self.controller.progress.steps} step(s)")
        return True

    def _on_step_started(self, index: int, offset: float, step: Any) -> None:
        self.live.start_step(offset, f"{index + 1}: {step.spec_label}")

    def _on_samples(self, _index: int, offset: float, samples: list) -> None:
        self.live.defer(offset, samples)  # fed when the window redraws (its tick), every batch at once

    def _on_run_message(self, _step: Any, message: Any) -> None:
        level = getattr(message, "level", "info")
        text = getattr(message, "text", str(message))
        who = getattr(message, "manager", "")
        self.add_message(f"{who}: {text}" if who else text, level)
        if level == "error":
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
        self.add_message(
            f"Manager {name} failed in step {step.index + 1}: {self.lost[name]}. Its numbers are no "
            "longer current; the other managers go on.",
            "error",
        )
        self.messages_dock.show()
        self.statusBar().showMessage(f"Manager {name} failed: {self.lost[name]}", 15000)
        self._show_lost()

    def _show_lost(self) -> None:
        self.topology.lost = dict(self.lost)
        self.topology.rebuild(self.doc.plan)
        self.results_tab.mark_lost(self.lost)

    def _on_step_finished(self, outcome: Any) -> None:
        step = outcome.step
        self.add_message(f"Step {step.index + 1} ({step.spec_label}): {outcome.status}")

    def stop_run(self) -> None:
        self.controller.stop_step()

    def stop_all(self) -> None:
        if self.controller.state == RUNNING:
            self.controller.stop()
        else:  # pressed again while stopping: end at once
            self.controller.abort()

    def _on_run_state(self, _state: str) -> None:
        self._update_actions()
        self._update_status()

    def _on_run_finished(self, status: str) -> None:
        self.results_tab.redraw(force=True)
        self.results_tab.charts.fit_x_to_data()  # the whole run, edge to edge (no room ahead any more)
        summary = self.controller.last_summary
        self.add_message(f"Run {status}" + (f": {summary.text()}" if summary else ""))
        if self.failures:
            self.add_message(
                f"What failed in this run ({len(self.failures)}):\n"
                + "\n".join(f"• {f}" for f in self.failures),
                "error",
            )
            self.messages_dock.show()
        rec = self.controller.recorder
        if rec is not None and rec.run_id is not None:
            self.results_tab.validity.set_notes(rec.notes)  # whether the figures measure the storage
            self._say_curve(rec.run_id)
            self.add_message(
                f"Stored as run {rec.run_id} in {self.controller.stored_in}: open it in History "
                "(View > History)"
            )
        self.statusBar().showMessage(f"Run {status}", 10000)
        if self._close_after_run:
            self.close()

    def _say_curve(self, run_id: int) -> None:
        """A load search's answer, per access spec, in the messages (its table is in History and reports)."""
        from app.analysis.curve import curve_lines
        from app.store import get_run, open_store
        from app.store.errors import StoreError

        try:
            with open_store(self.controller.db_path) as store:
                said = curve_lines(get_run(store, run_id))
        except StoreError:
            return
        for line in said:
            self.add_message(f"Curve: {line}")

    def _update_status(self) -> None:
        self.status.show_progress(self.controller)

    def _update_actions(self) -> None:
        from app.ui import actions as A

        running = self.controller.running
        sel = self.topology.selection
        errors = self.plan_errors()
        A.update_enabled(
            self.action_map,
            {
                A.IDLE: not running,
                A.RUNNING: running,
                A.STOPPABLE: self.controller.state == RUNNING,
                A.WORKER: sel.is_worker,
                A.MANAGER: sel.manager is not None and not sel.is_worker,
                A.NOT_ALL: not sel.is_all,
                A.ICF_WRITER: self.files.icf_writer,
                A.VALID: not errors,
            },
        )
        start = self.action_map["start"]
        start.setToolTip(
            "Start the test (F5)"
            if not errors
            else "Fix the plan's errors first:\n"
            + "\n".join(f"\u2022 {p}" for p in errors[:10])
            + (f"\n\u2026 and {len(errors) - 10} more" if len(errors) > 10 else "")
        )
        for tab in (self.targets_tab, self.network_tab, self.specs_tab, self.setup_tab):
            tab.setEnabled(not running)
