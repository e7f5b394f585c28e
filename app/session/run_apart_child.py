"""The process that runs a run for the window (:mod:`app.session.run_apart` starts it): ``python -m app.session.run_apart_child``.

It reads one ``("run", RunRequest)`` from stdin, builds the endpoints and the runner again from the plan and the
armed options (the same checks as the window made, made again here, at Start), runs it with the store's
recorder (:class:`~app.session.run_session.RunSession`) and writes every listener call to stdout, then ``("end",
RunEnd)``. Later messages on stdin are commands: ``("stop_step",)``, ``("stop",)``, ``("abort",)``; stdin
closing (the window gone) aborts the run.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

from app.analysis.iometer_update_log import IometerUpdateLog
from app.engine.run.managers import ManagerError, build_endpoints
from app.engine.run.runner import RunListener, Runner, RunRefused
from app.engine.transports.remote_host_child import LOG_FILE_ENV, log_to, read_message, write_message
from app.engine.transports.transport import Message
from app.session.run_session import RunEnd, RunRequest, RunSession, needed_managers, shown_endpoints


class PipeListener(RunListener):
    """Every listener call as one message to the window (any thread may call: one write at a time)."""

    def __init__(self, out: BinaryIO, prepare_samples: Callable[[list[Any]], Any] | None = None) -> None:
        self._out, self._prepare = out, prepare_samples
        self._lock = threading.Lock()
        self.broken = False  # the window is gone: nothing more is written

    def send(self, message: tuple[Any, ...]) -> None:
        with self._lock:
            if self.broken:
                return
            try:
                write_message(self._out, message)
            except (OSError, ValueError):
                self.broken = True

    def run_started(self, plan, steps, endpoints) -> None:  # noqa: ANN001
        self.send(("call", "run_started", (plan, steps, shown_endpoints(endpoints))))

    def step_started(self, step, jobfiles) -> None:  # noqa: ANN001
        self.send(("call", "step_started", (step, jobfiles)))

    def samples(self, step, samples) -> None:  # noqa: ANN001
        self.send(("call", "samples", (step, self._prepare(samples) if self._prepare else samples)))

    def message(self, step, message) -> None:  # noqa: ANN001
        self.send(("call", "message", (step, message)))

    def manager_finished(self, step, finished) -> None:  # noqa: ANN001
        self.send(("call", "manager_finished", (step, finished)))

    def step_finished(self, outcome) -> None:  # noqa: ANN001
        self.send(("call", "step_finished", (outcome,)))

    def run_finished(self, status: str) -> None:
        self.send(("call", "run_finished", (status,)))


def _commands(stream: BinaryIO, runner: Runner) -> None:
    """The window's Stop, Stop All and Abort; its pipe closing (the window gone) aborts the run."""
    while True:
        try:
            (command,) = read_message(stream)
        except (EOFError, OSError, ValueError):
            runner.abort()
            return
        if command == "stop_step":
            runner.stop_step()
        elif command == "stop":
            runner.stop()
        elif command == "abort":
            runner.abort()


def make_runner(request: RunRequest) -> Runner:
    """The endpoints and the runner, again, from what the window prepared (ManagerError, RunRefused)."""
    endpoints = build_endpoints(request.plan, needed=needed_managers(request.plan))
    try:
        runner = (request.make or Runner)(request.plan, endpoints, None, request.options)
        runner.prepare()
        return runner
    except BaseException:
        for ep in endpoints.values():  # SSH sessions already started
            if ep.close is not None:
                ep.close()
        raise


def serve(commands: BinaryIO, out: BinaryIO) -> RunEnd:
    kind, request = read_message(commands)
    assert kind == "run" and isinstance(request, RunRequest), kind
    display = PipeListener(out, request.prepare_samples)
    try:
        runner = make_runner(request)
    except (ManagerError, RunRefused) as e:  # something changed since the window checked it
        display.message(None, Message("", f"The run did not start: {e}", "error"))
        end = RunEnd("failed")
        display.send(("end", end))
        return end
    log = IometerUpdateLog(request.update_log) if request.update_log is not None else None
    session = RunSession(runner, display, request.db_path, request.record, request.results_file, log)
    threading.Thread(target=_commands, args=(commands, runner), daemon=True, name="fiometer-commands").start()
    end = session.run()  # (the update log closes itself at the run's end)
    display.send(("end", end))
    return end


def main() -> None:
    """Messages go out on the original stdout; anything else printed goes to stderr. Ctrl-C in a terminal
    reaches the whole process group: the window decides what it means, not this child."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    log_to(os.environ.get(LOG_FILE_ENV))
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(sys.stdin.buffer, out)
    out.close()
    logging.shutdown()
    sys.stderr.flush()
    os._exit(0)  # not the interpreter's shutdown: the commands thread is blocked reading stdin


if __name__ == "__main__":
    main()
