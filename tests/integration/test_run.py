"""The runner and `fiometer run` with real fio (null engine or small files)."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from app.engine.run.managers import build_endpoints
from app.engine.run.runner import RunListener, Runner, RunOptions
from app.model import planfile
from app.model.plan import LOCAL, SpecLine, Target
from tests.helpers import grid, prepared

pytestmark = pytest.mark.fio


def two_manager_plan(tmp_path):
    plan = grid(2, 1, 2, qd=4)
    plan.specs[0].lines = [SpecLine(4096, 100, 70, 100, 0, 1, 4096, 0)]
    for m in plan.managers:
        m.host = LOCAL
        for w in m.workers:
            w.targets = [Target(str(tmp_path / f"{m.name}-{i}.tst")) for i in range(2)]
    return plan


class Collect(RunListener):
    def __init__(self):
        self.all_samples = []
        self.samples_seen = 0
        self.messages = []
        self.outcomes = []

    def samples(self, step, samples):
        self.samples_seen += 1
        self.all_samples.extend(samples)

    def message(self, step, message):
        self.messages.append(message)

    def step_finished(self, outcome):
        self.outcomes.append(outcome)


def test_two_local_managers_in_one_step_all_equals_sum(tmp_path):
    plan = two_manager_plan(tmp_path)
    listener = Collect()
    runner = prepared(Runner(plan, build_endpoints(plan), listener, RunOptions(run_time=2, engine="null")))
    assert runner.run() == "complete"
    (outcome,) = listener.outcomes
    assert set(outcome.finished) == {"M1", "M2"} and all(f.ok for f in outcome.finished.values())
    final = {(s.level, s.key): s.whole for s in outcome.results}
    m1, m2, everything = final[("manager", "M1")], final[("manager", "M2")], final[("all", "ALL")]
    assert m1.iops > 0 and m2.iops > 0
    assert everything.iops == pytest.approx(m1.iops + m2.iops, rel=1e-9)
    assert everything.ios == m1.ios + m2.ios
    assert {k for (lvl, k) in final if lvl == "target"} == {"w1.t1", "w1.t2"}
    assert outcome.raw_output["M1"] and outcome.raw_output["M2"]  # fio's final JSON kept
    live = [s for s in listener.all_samples if s.level == "all" and not s.final]
    assert len(live) >= 1


def test_stop_mid_step_keeps_final_numbers(tmp_path):
    plan = two_manager_plan(tmp_path)
    listener = Collect()
    runner = prepared(Runner(plan, build_endpoints(plan), listener, RunOptions(run_time=60, engine="null")))
    threading.Timer(2.5, runner.stop).start()
    t0 = time.monotonic()
    assert runner.run() == "stopped"
    assert time.monotonic() - t0 < 20
    (outcome,) = listener.outcomes
    assert outcome.status == "stopped"
    assert all(f.ok and f.stopped for f in outcome.finished.values())
    assert {s.key: s.whole.iops for s in outcome.results if s.level == "manager"}.keys() == {"M1", "M2"}


def test_unopenable_target_fails_the_step_in_plain_words(tmp_path):
    plan = grid(1, 1, 1)
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "adir"))]
    listener = Collect()
    runner = prepared(
        Runner(plan, build_endpoints(plan), listener, RunOptions(run_time=2, file_size=1 << 20))
    )
    (tmp_path / "adir").mkdir()  # after the run's checks: the step's own check refuses it before fio starts
    assert runner.run() == "failed"
    reason = listener.outcomes[0].finished["M1"].reason
    assert "is a folder" in reason and str(tmp_path / "adir") in reason and "nothing was written" in reason


def test_fio_killed_mid_step_keeps_samples_and_says_so(tmp_path):
    plan = two_manager_plan(tmp_path)
    listener = Collect()
    runner = prepared(Runner(plan, build_endpoints(plan), listener, RunOptions(run_time=30, engine="null")))

    def kill_m1():
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            t = runner._current.get("M1")
            if t is not None and t.pid and listener.samples_seen >= 2:
                os.kill(t.pid, signal.SIGKILL)
                time.sleep(1.5)
                runner.stop()
                return
            time.sleep(0.1)

    threading.Thread(target=kill_m1, daemon=True).start()
    runner.run()
    (outcome,) = listener.outcomes
    assert not outcome.finished["M1"].ok and "killed" in outcome.finished["M1"].reason
    assert outcome.finished["M2"].ok  # the other manager is not lost
    assert any(s.manager == "M1" and s.level == "manager" for s in listener.all_samples)


def test_cli_run_ctrl_c_stops_gracefully_and_prints_results(tmp_path):
    plan = two_manager_plan(tmp_path)
    path = tmp_path / "plan.json"
    planfile.save(plan, path)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app.cli",
            "run",
            str(path),
            "--run-time",
            "60",
            "--engine",
            "null",
            "--db",
            str(tmp_path / "r.db"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = []
    while True:
        line = proc.stdout.readline()
        lines.append(line)
        if "IOPS" in line or not line:
            break
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    text = "".join(lines) + out
    assert proc.returncode == 3, err  # stopped by the user (see the user guide's exit codes)
    assert "Run stopped" in text and "ALL" in text and "Traceback" not in err


def test_cli_refuses_unmapped_windows_target_and_unarmed_existing_file(tmp_path):
    from tests.helpers import shared_dir

    plan = shared_dir() / "icf" / "fourmix_2004.icf"
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "run", str(plan), "--run-time", "1"], capture_output=True, text=True
    )
    assert out.returncode == 2 and "'D:' is a Windows drive" in out.stderr and "--map" in out.stderr
    precious = tmp_path / "precious.dat"
    precious.write_bytes(b"data" * 1000)
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "run", str(plan), "--run-time", "1", "--map", f"D:={precious}"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "--allow-write 'D:'" in out.stderr
    assert precious.read_bytes() == b"data" * 1000


def test_cli_accepts_the_hint_as_cmd_exe_passes_it(tmp_path):
    """cmd.exe hands `--allow-write 'D:'` over with the quotes: the run is armed, not refused again."""
    from tests.helpers import shared_dir

    plan = shared_dir() / "icf" / "fourmix_2004.icf"
    precious = tmp_path / "precious.dat"
    precious.write_bytes(b"data" * 1000)
    base = [sys.executable, "-m", "app.cli", "run", str(plan), "--map", f"D:={precious}", "--run-time", "1"]
    refused = subprocess.run(base, capture_output=True, text=True)
    assert refused.returncode == 2 and "--allow-write 'D:'" in refused.stderr
    armed = subprocess.run(
        [
            *base,
            "--allow-write",
            "'D:'",
            "--db",
            str(tmp_path / "r.db"),
            "--test-file-size",
            "1M",
            "--ramp-up",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "--allow-write" not in armed.stderr, armed.stderr[-2000:]
    assert armed.returncode == 0, armed.stdout[-2000:] + armed.stderr[-2000:]


def test_stop_step_ends_one_step_and_the_run_goes_on(tmp_path):
    """Iometer's Stop: the current test ends with its numbers, the next one starts."""
    plan = two_manager_plan(tmp_path)
    plan.specs.append(plan.specs[0].__class__("T", plan.specs[0].lines))
    for m in plan.managers:
        for w in m.workers:
            w.specs = ["S", "T"]
    listener = Collect()
    runner = prepared(Runner(plan, build_endpoints(plan), listener, RunOptions(run_time=30, engine="null")))
    threading.Timer(2.5, runner.stop_step).start()
    threading.Timer(7.0, runner.stop_step).start()
    t0 = time.monotonic()
    assert runner.run() == "stopped"  # every step ran, but not to its end
    assert time.monotonic() - t0 < 25
    assert [o.status for o in listener.outcomes] == ["stopped", "stopped"]
    assert runner.summary.text() == "2 of 2 steps ran (2 stopped)"
    assert all(f.ok for o in listener.outcomes for f in o.finished.values())
    assert all(any(s.level == "all" for s in o.results) for o in listener.outcomes)
