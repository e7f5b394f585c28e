"""One run, recorded: the runner, the store's recorder first among its listeners, Iometer's files, and what
a load search or a PTS test found kept with its run.

The same for `fiometer run / curve / pts` (on the calling thread, ``isolate=False``) and the window, whether
on a thread of its process (``RunDriver``) or in a process of its own (:mod:`app.session.run_apart`, for
large fan-outs): what the window sees is the ``display`` listener's calls either way.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from app.analysis.iometer_update_log import IometerUpdateLog, append_results_file
from app.diagnostics import report_unexpected
from app.engine.jobs.sequence import expand
from app.engine.run.curve_runner import CurveRunner
from app.engine.run.pts_runner import PtsRunner
from app.engine.run.runner import ManagerEndpoint, RunListener, Runner, RunOptions, RunSummary
from app.engine.transports.transport import Message
from app.model.plan import Plan
from app.session.recording import Fanout, StoreRecorder
from app.store import StoreError, open_store
from app.store.database import Store
from app.store.run_extras import CURVE, PTS, save_extra

log = logging.getLogger(__name__)

# (plan, endpoints, listener, options) -> a runner; a class or a functools.partial of one crosses processes
MakeRunner = Callable[..., Runner]


def needed_managers(plan: Plan) -> set[str]:
    """The managers some step of ``plan`` runs on (all of them when the plan does not expand)."""
    try:
        return {plan.managers[mi].name for s in expand(plan) for mi in s.managers()}
    except ValueError:  # too long, or a plan with errors: the runner refuses it with the reason
        return {m.name for m in plan.managers}


def shown_endpoints(endpoints: dict[str, ManagerEndpoint]) -> dict[str, ManagerEndpoint]:
    """The endpoints as the window may see them from a run in a process of its own: without what reaches the
    managers (functions, sessions; defined here, not in that process's main module, so that they unpickle)."""
    return {
        name: replace(ep, make_transport=_gone, close=None, python_there=None, prepare=None)
        for name, ep in endpoints.items()
    }


def _gone() -> Any:
    raise RuntimeError("this manager is reached from the run's own process")


@dataclass
class RunEnd:
    """What the window learns when a run has ended (the recorder's and the runner's last word)."""

    status: str = "failed"  # complete | stopped | failed
    summary: RunSummary | None = None
    run_id: int | None = None  # the stored run, None when nothing was stored
    notes: list[Any] = field(default_factory=list)  # its validity notes
    stored_in: Path | None = None
    store_failure: str | None = None  # the store fault that ended the run, if one did (what it said)


# what a kind of runner found, kept with its run (app.store.run_extras) once it has ended
_EXTRAS: tuple[tuple[type[Runner], str], ...] = ((PtsRunner, PTS), (CurveRunner, CURVE))


class RunSession:
    """Runs ``runner`` with the recorder (when ``record``) and ``display`` as its listeners, then appends the
    run to Iometer's results file.

    ``isolate`` (the window): a store fault ends the run once said, any other listener fault is logged and
    the run goes on. Without it (the command line) a listener's fault ends the run at once (the runner ends
    fio); a store fault is then kept in ``RunEnd.store_failure``, anything else is raised. ``store``: a store
    opened already (so that one that cannot be opened refuses the run first), used instead of ``db_path``
    and closed at the end. ``tags`` go with the stored run."""

    def __init__(
        self,
        runner: Runner,
        display: RunListener,
        db_path: str | Path | None,
        record: bool = True,
        results_file: Path | None = None,
        update_log: IometerUpdateLog | None = None,
        *,
        store: Store | None = None,
        tags: list[str] | None = None,
        isolate: bool = True,
    ) -> None:
        self.runner, self.display, self.db_path, self.record = runner, display, db_path, record
        self.results_file, self.update_log = results_file, update_log
        self.store, self.tags, self.isolate = store, tags or [], isolate
        self.fanout = runner.listener = Fanout(display, isolate=isolate, on_error=self._listener_failed)
        if update_log is not None:
            self.fanout.add(update_log)
        self.recorder: StoreRecorder | None = None
        self.stored_in: Path | None = None
        self.store_failure: StoreError | None = None
        self.status = "failed"

    @property
    def store_failed(self) -> bool:
        return self.store_failure is not None

    def run(self) -> RunEnd:
        """Run and record (on the calling thread: the store connection belongs to it). The recorder sees every
        callback before the display does."""
        store = self._open_store()
        try:
            self.status = self.runner.run()
            self._keep_extra(store)
            self._write_results_file(store)
        except Exception as e:  # an engine crash ends the run visibly, never silently
            if not self.isolate:  # the command line: a listener's fault has ended the run (fio ended)
                if not isinstance(e, StoreError):
                    raise  # said by the command line as it exits
                self.store_failure = self.store_failure or e  # the run keeps what was recorded before it
                self.status = "failed"
                return self.end()
            self.fanout.message(None, Message("", report_unexpected(e, "the run"), "error"))
            self.fanout.run_finished("failed")
            self.status = "failed"
        finally:
            if store is not None:
                store.close()
        log.info("run session ended: %s (run %s, stored in %s)", self.status, self.run_id, self.stored_in)
        return self.end()

    def _open_store(self) -> Store | None:
        """The store the run is recorded in, the recorder first among the listeners (None: not recorded)."""
        store = self.store
        if self.record and store is None:
            try:
                store = open_store(self.db_path)
            except StoreError as e:
                log.error("run session: results are not being stored: %s", e)
                self.fanout.message(None, Message("", f"results are not being stored: {e}", "error"))
        if store is not None:
            self.recorder = StoreRecorder(store, tags=self.tags)
            self.fanout.add(self.recorder, first=True)
            self.stored_in = store.path
        return store

    def _keep_extra(self, store: Store | None) -> None:
        """What a load search or a PTS test found, kept with its run."""
        if store is None or not self.run_id:
            return
        for kind, key in _EXTRAS:
            if isinstance(self.runner, kind):
                with contextlib.suppress(StoreError):
                    save_extra(store, self.run_id, key, self.runner.record())  # type: ignore[attr-defined]
                return

    def stop_step(self) -> None:
        self.runner.stop_step()

    def stop(self) -> None:
        self.runner.stop()

    def abort(self) -> None:
        self.runner.abort()

    @property
    def run_id(self) -> int | None:
        return self.recorder.run_id if self.recorder is not None else None

    def end(self) -> RunEnd:
        rec = self.recorder
        notes = list(rec.notes) if rec else []
        failure = None if self.store_failure is None else str(self.store_failure)
        return RunEnd(self.status, self.runner.summary, self.run_id, notes, self.stored_in, failure)

    def _write_results_file(self, store: Any) -> None:
        """After the run: say where the per-update file is and append the run to the results file."""
        per_update = self.update_log
        if per_update is not None and per_update.failure is None:
            self.fanout.message(
                None,
                Message(
                    "",
                    f"Iometer per-update results: {per_update.path} ({per_update.updates_written} update(s))",
                    "info",
                ),
            )
        if self.results_file is None or store is None or not self.run_id:
            return
        from app.store.queries import get_run

        try:
            append_results_file(self.results_file, get_run(store, self.run_id))
        except (OSError, StoreError) as e:
            log.error("run %s not appended to %s: %s", self.run_id, self.results_file, e)
            self.fanout.message(
                None,
                Message(
                    "",
                    f"The run is stored but cannot be appended to {self.results_file}: "
                    f"{e}; File > Export Iometer results.csv writes it",
                    "error",
                ),
            )
            return
        log.info("run %s appended to %s", self.run_id, self.results_file)
        self.fanout.message(None, Message("", f"Iometer results appended to {self.results_file}", "info"))

    def _listener_failed(self, callback: str, error: Exception) -> None:
        """A listener raised (runner thread). A store fault (disk full, read-only or locked database) is said
        once and ends the run, which keeps what was recorded; anything else is logged and the run goes on."""
        if isinstance(error, StoreError):
            if self.store_failure is None:
                self.store_failure = error
                self.display.message(
                    None,
                    Message("", f"results can no longer be stored, so the run is ended: {error}", "error"),
                )
                self.runner.stop()
        elif isinstance(error, OSError) and self.update_log is not None and error is self.update_log.failure:
            log.error(
                "Iometer's per-update file %s can no longer be written: %s", self.update_log.path, error
            )
            self.display.message(  # the run goes on: every update is still stored
                None,
                Message(
                    "",
                    f"Iometer's per-update file {self.update_log.path} can no longer be written: {error}",
                    "error",
                ),
            )
        else:
            report_unexpected(error, f"recording ({callback})")


@dataclass
class RunRequest:
    """What a run in a process of its own needs there (picklable): the plan and armed options as the window
    prepared them; the endpoints are built again there (an SSH session or a socket cannot cross)."""

    plan: Plan
    options: RunOptions
    make: MakeRunner | None
    db_path: str | Path | None
    record: bool
    results_file: Path | None
    update_log: Path | None  # Iometer's per-update file (Record Last Update Results), opened by the window
    # computed from each batch of samples in the run's process, before it goes to the window (a module-level
    # function: pickled by name), e.g. the chart rows of the live display
    prepare_samples: Callable[[list[Any]], Any] | None = None
