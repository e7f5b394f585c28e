"""A run leaves its trace in the log file: each fio process's command, pid and exit code, the connection
to a fio server and the protocol agreed, the child process that reads remote managers, and why a
manager failed. Real fio, real `fio --server` on 127.0.0.x, the real CLI in its own process."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from app.diagnostics import ENV_DIR, LOG_NAME
from app.model import planfile
from app.model.plan import LOCAL, SpecLine, Target
from tests.helpers import grid

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")]


def _plan(tmp_path, host: str = LOCAL, target: str | None = None):
    plan = grid(1, 1, 1, qd=1)
    plan.specs[0].lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]  # 4 KiB random read
    plan.managers[0].host = host
    plan.managers[0].workers[0].targets = [Target(target or str(tmp_path / "iobw.tst"))]
    path = tmp_path / "plan.json"
    planfile.save(plan, path)
    return path


def _cli(tmp_path, *args) -> tuple[subprocess.CompletedProcess, str]:
    logs = tmp_path / "logs"
    env = {**os.environ, ENV_DIR: str(logs)}
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "--db", str(tmp_path / "r.db"), *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    log = logs / LOG_NAME
    return out, log.read_text(encoding="utf-8") if log.exists() else ""


def test_a_local_run_logs_fio_started_and_ended_with_its_pid(tmp_path):
    out, log = _cli(
        tmp_path, "run", _plan(tmp_path), "--run-time", "1", "--engine", "null", "--test-file-size", "1M"
    )
    assert out.returncode == 0, out.stderr
    started = re.search(
        r"INFO app\.engine\.transports\.local_fio: manager (\S+): fio started, pid (\d+): (\S*fio\S*) "
        r"--output-format=json\+ .*\.fio$",
        log,
        re.M,
    )
    assert started, log
    name, pid = started[1], started[2]
    assert re.search(
        rf"INFO app\.engine\.transports\.local_fio: manager {name}: fio pid {pid} ended, exit code 0$",
        log,
        re.M,
    ), log
    assert re.search(r"INFO app\.engine\.run\.runner: run '.*' started: 1 steps, managers .*", log), log
    assert re.search(r"INFO app\.engine\.run\.runner: run '.*' ended: complete$", log, re.M), log


def test_a_remote_run_logs_the_connection_the_protocol_and_the_reader_process(tmp_path, fio_server):
    host, port, _proc = fio_server("127.0.0.2")
    out, log = _cli(
        tmp_path,
        "run",
        _plan(tmp_path, f"{host}:{port}", str(tmp_path / "remote.tst")),
        "--run-time",
        "1",
        "--engine",
        "null",
        "--test-file-size",
        "1M",
    )
    assert out.returncode == 0, out.stderr
    reader = re.search(
        r"(\d+) INFO app\.engine\.transports\.remote_host: remote managers' reader started, pid (\d+): ", log
    )
    assert reader, log
    child = reader[2]
    assert child != reader[1]
    # the child process writes its own lines into the same file
    assert re.search(
        rf"^\S+ \S+ {child} INFO app\.engine\.transports\.fioproto\.client: connected to {host}:{port}$",
        log,
        re.M,
    ), log
    assert re.search(
        rf"^\S+ \S+ {child} INFO app\.engine\.transports\.fioproto\.client: {host}:{port}: protocol \d+, "
        r"fio-\S+ on ",
        log,
        re.M,
    ), log
    assert re.search(rf"remote managers' reader pid {child} ended, exit code 0$", log, re.M), log


def test_a_server_that_cannot_be_reached_is_logged_with_why(tmp_path):
    from tests.fio_servers import free_port

    port = free_port("127.0.0.2")  # nothing listens there
    out, log = _cli(
        tmp_path,
        "run",
        _plan(tmp_path, f"127.0.0.2:{port}", str(tmp_path / "remote.tst")),
        "--run-time",
        "1",
        "--engine",
        "null",
        "--test-file-size",
        "1M",
    )
    assert out.returncode != 0 and "nothing is listening" in out.stderr
    assert re.search(
        rf"WARNING fiometer: fiometer run: .*nothing is listening on 127\.0\.0\.2:{port}", log
    ), log


def test_the_recording_and_the_window_s_run_session_say_what_they_did(tmp_path):
    """The window's run (RunSession: runner, recorder, Iometer's file) in the log: the run recorded, its end,
    and where it was appended. Real fio, null engine, 1 s."""
    import logging
    import platform

    from app.engine.run.endpoint import ManagerEndpoint
    from app.engine.run.runner import RunListener, Runner, RunOptions
    from app.engine.transports.local_fio import LocalFio
    from app.session.run_session import RunSession

    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = records.append
    app_log = logging.getLogger("app")
    level = app_log.level
    app_log.addHandler(handler)
    app_log.setLevel(logging.INFO)
    try:
        fio = shutil.which("fio") or "fio"
        endpoints = {"M1": ManagerEndpoint("M1", platform.system(), lambda: LocalFio("M1", fio), LOCAL, "")}
        plan, _problems = planfile.load(_plan(tmp_path))
        options = RunOptions(run_time=1, engine="null", file_size=1 << 20)
        runner = Runner(plan, endpoints, RunListener(), options)
        results = tmp_path / "results.csv"
        end = RunSession(runner, RunListener(), tmp_path / "r.db", results_file=results).run()
    finally:
        app_log.removeHandler(handler)
        app_log.setLevel(level)
    assert end.status == "complete"
    said = [r.getMessage() for r in records]  # by the recorder's and the session's own loggers (app.*)
    db = tmp_path / "r.db"
    assert f"recording run {end.run_id} (1 step(s)) in {db}" in said, said
    assert any(m.startswith(f"run {end.run_id} recorded: complete, ") for m in said), said
    assert f"run {end.run_id} appended to {results}" in said, said
    assert f"run session ended: complete (run {end.run_id}, stored in {db})" in said, said
    by = {r.getMessage(): r.name for r in records}  # two subsystems, each with its own logger
    recorder, session = (
        by[f"recording run {end.run_id} (1 step(s)) in {db}"],
        by[f"run {end.run_id} appended to {results}"],
    )
    assert recorder.startswith("app.") and session.startswith("app.") and recorder != session
