"""Truthful outcomes with real fio: a job fio refused fails its step in fio's words, a step ended by Stop
is `stopped` with its numbers, the run says how many steps ran, and the exit code follows."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from app.engine.jobs.jobfile import JobFile
from app.engine.run.managers import build_endpoints
from app.engine.run.runner import Runner, RunOptions, summarize
from app.model import planfile
from app.model.plan import LOCAL, AccessSpec, SpecLine, Target
from app.session.recording import Fanout, StoreRecorder
from app.store import get_run, list_runs, open_store
from tests.helpers import grid, prepared
from tests.integration.test_run import Collect

pytestmark = pytest.mark.fio


def _root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture
def mounted_loop(tmp_path):
    """A loop device holding a mounted ext4 file system (needs root, as CI has)."""
    if not _root() or not shutil.which("losetup") or not shutil.which("mkfs.ext4"):
        pytest.skip("a mounted loop device needs root, losetup and mkfs.ext4")
    image = tmp_path / "fs.img"
    with open(image, "wb") as f:
        f.truncate(32 << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    dev = subprocess.run(
        ["losetup", "-f", "--show", str(image)], check=True, capture_output=True, text=True
    ).stdout.strip()
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        subprocess.run(["mount", dev, str(mnt)], check=True, capture_output=True)
    except subprocess.CalledProcessError:
        subprocess.run(["losetup", "-d", dev], capture_output=True)
        pytest.skip("cannot mount a loop device here")
    yield dev
    subprocess.run(["umount", str(mnt)], capture_output=True)
    subprocess.run(["losetup", "-d", dev], capture_output=True)


def _point_job_at(jf: JobFile, path: str) -> None:
    """Send the (only) job of ``jf`` to ``path``, past Fiometer's own target checks: what is tested here
    is what happens when fio itself refuses, whatever the safety rules let through."""
    (job,) = jf.jobs
    jf.text = jf.text.replace(f"filename={job.path}", f"filename={path}")
    job.path, job.is_device = path, True


def test_fio_refusing_a_mounted_device_fails_the_step_in_its_own_words(tmp_path, mounted_loop):
    plan = grid(1, 1, 1)
    plan.specs[0].lines = [SpecLine(4096, 100, 0, 100, 0, 1, 0, 0)]  # random writes
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "f.tst"))]
    runner = prepared(
        Runner(plan, build_endpoints(plan), None, RunOptions(run_time=2, engine="null", file_size=1 << 20))
    )
    (files,) = runner.jobfiles
    _point_job_at(files["M1"], mounted_loop)
    collect = Collect()
    with open_store(tmp_path / "r.db") as store:
        recorder = StoreRecorder(store)
        runner.listener = Fanout(collect, recorder)
        # fio ends with exit code 0 after refusing: only the missing I/O tells
        assert runner.run() == "failed"
    (outcome,) = collect.outcomes
    assert outcome.status == "failed"
    reason = outcome.finished["M1"].reason
    assert "appears mounted, and 'allow_mounted_write' isn't set" in reason  # fio's own words
    assert f"fio did no I/O on {mounted_loop}" in reason
    assert runner.summary.text() == "1 of 1 step ran (1 failed)"
    with open_store(tmp_path / "r.db") as store:
        run = get_run(store, recorder.run_id)
    assert run.status == "failed" and run.steps[0].status == "failed"
    assert any(
        "appears mounted" in m.text and mounted_loop in m.text and m.level == "error"
        for m in run.steps[0].messages
    )
    assert any("1 of 1 step ran (1 failed)" in m.text for m in run.messages)


def test_a_step_whose_jobs_did_io_is_not_failed_by_the_no_io_check(tmp_path):
    plan = grid(1, 1, 2)
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / f"f{i}.tst")) for i in range(2)]
    collect = Collect()
    runner = prepared(
        Runner(plan, build_endpoints(plan), collect, RunOptions(run_time=1, engine="null", file_size=1 << 20))
    )
    assert runner.run() == "complete"
    assert [o.status for o in collect.outcomes] == ["complete"]


@pytest.fixture
def immutable_file(tmp_path):
    if not _root() or not shutil.which("chattr"):
        pytest.skip("an immutable file needs root and chattr")
    path = tmp_path / "locked.tst"
    path.write_bytes(b"\0" * (1 << 20))
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode:
        pytest.skip("this file system has no immutable flag")
    yield path
    subprocess.run(["chattr", "-i", str(path)], capture_output=True)


def test_cli_run_where_fio_refuses_a_target_exits_1_and_names_it(tmp_path, immutable_file):
    plan = grid(1, 1, 1)
    plan.specs[0].lines = [SpecLine(4096, 100, 0, 100, 0, 1, 0, 0)]
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(immutable_file))]
    path = tmp_path / "plan.json"
    planfile.save(plan, path)
    db = tmp_path / "r.db"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "run",
            str(path),
            "--run-time",
            "2",
            "--db",
            str(db),
            "--test-file-size",
            "1M",
            "--allow-write",
            str(immutable_file),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    # fio's own words (fio cuts its line short after a long path, hence "Operation not")
    assert f"cannot open target {immutable_file}: Operation not" in text and "Traceback" not in text
    assert "Run failed: 0 of 1 step ran; 1 refused before fio started." in out.stdout  # not "ran (1 failed)"
    with open_store(db) as store:
        (summary,) = list_runs(store)
        run = get_run(store, summary.id)
    assert run.status == "failed" and run.steps[0].status == "failed"
    assert any(str(immutable_file) in m.text and m.level == "error" for m in run.steps[0].messages)


def _three_step_plan(tmp_path):
    plan = grid(1, 1, 2)
    plan.specs += [AccessSpec(n, plan.specs[0].lines) for n in ("T", "U")]
    plan.managers[0].host = LOCAL
    w = plan.managers[0].workers[0]
    w.specs = ["S", "T", "U"]
    w.targets = [Target(str(tmp_path / f"f{i}.tst")) for i in range(2)]
    return plan


def test_stop_is_stopped_with_numbers_and_the_run_counts_what_ran(tmp_path):
    """Stop (GUI Esc) ends step 1 and step 2 runs; Stop All ends step 2 and skips step 3."""
    plan = _three_step_plan(tmp_path)
    collect = Collect()
    runner = prepared(
        Runner(plan, build_endpoints(plan), None, RunOptions(run_time=60, engine="null", file_size=1 << 20))
    )

    reported: list[int] = []  # the step index of every batch of samples

    class Steps(Collect):
        def samples(self, step, samples):
            reported.append(step.index)
            super().samples(step, samples)

    collect = Steps()

    def press(index: int, action) -> None:  # once step ``index`` has reported numbers twice
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if reported.count(index) >= 2:
                action()
                return
            time.sleep(0.1)

    with open_store(tmp_path / "r.db") as store:
        recorder = StoreRecorder(store)
        runner.listener = Fanout(collect, recorder)
        presser = threading.Thread(target=lambda: (press(0, runner.stop_step), press(1, runner.stop)))
        presser.start()
        status = runner.run()
        presser.join()
    assert status == "stopped"
    assert [o.status for o in collect.outcomes] == ["stopped", "stopped"]
    for o in collect.outcomes:  # fio's final numbers are kept
        (all_level,) = [s for s in o.results if s.level == "all"]
        assert all_level.whole.iops > 0
    assert runner.summary.text() == "2 of 3 steps ran (2 stopped); 1 skipped"
    with open_store(tmp_path / "r.db") as store:
        run = get_run(store, recorder.run_id)
    assert run.status == "stopped" and [s.status for s in run.steps] == ["stopped", "stopped"]
    assert any(m.text == "Run stopped: 2 of 3 steps ran (2 stopped); 1 skipped" for m in run.messages)


def test_summary_counts():
    s = summarize(["complete", "stopped", "partial", "failed"], 6)
    assert (s.ran, s.complete, s.stopped, s.failed, s.skipped) == (4, 1, 1, 2, 2)
    assert s.text() == "4 of 6 steps ran (1 complete, 1 stopped, 2 failed); 2 skipped"
    assert summarize([], 1).text() == "0 of 1 step ran; 1 skipped"
    refused = summarize(["refused"], 2)  # a step whose managers were all refused before fio started
    assert (refused.ran, refused.refused, refused.skipped) == (0, 1, 1)
    assert refused.text() == "0 of 2 steps ran; 1 refused before fio started; 1 skipped"


def test_cli_ctrl_c_is_stopped_exit_3_with_the_count(tmp_path):
    plan = _three_step_plan(tmp_path)
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
            "--test-file-size",
            "1M",
            "--db",
            str(tmp_path / "r.db"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "IOPS" in line:
                break
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(OSError):
            proc.kill()
    text = "".join(lines) + out
    assert proc.returncode == 3, text + err
    assert "Run stopped: 1 of 3 steps ran (1 stopped); 2 skipped." in text and "Traceback" not in err


def test_cli_progress_shows_the_step_time_fio_is_given(tmp_path):
    """`run --ramp-up 2 --run-time 2`: each step lasts 4 s (it showed the ramp-up alone as "/2s")."""
    plan = grid(1, 1, 1)
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "f.tst"))]
    plan.setup.run_time, plan.setup.ramp_up = 30, 10
    path = tmp_path / "plan.json"
    planfile.save(plan, path)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "run",
            str(path),
            "--ramp-up",
            "2",
            "--run-time",
            "2",
            "--engine",
            "null",
            "--test-file-size",
            "1M",
            "--db",
            str(tmp_path / "r.db"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    progress = [ln for ln in out.stdout.splitlines() if ln.startswith("  [1/1")]
    assert progress and all(ln.split("]")[0].endswith("s/4s") for ln in progress), progress


def test_step_seconds_come_from_the_job_file(tmp_path):
    plan = grid(1, 1, 1)
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "f.tst"))]
    plan.setup.run_time, plan.setup.ramp_up = 30, 10
    eps = build_endpoints(plan)
    assert prepared(Runner(plan, eps, None, RunOptions(engine="null"))).step_seconds(0) == 40
    assert prepared(Runner(plan, eps, None, RunOptions(engine="null", ramp_up=5))).step_seconds(0) == 35
    assert (
        prepared(Runner(plan, eps, None, RunOptions(engine="null", run_time=0))).step_seconds(0) == 0
    )  # until Stop


def test_no_io_is_expected_only_where_the_spec_does_not_wait_as_long_as_the_step(tmp_path):
    plan = grid(1, 1, 1)
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "f.tst"))]
    runner = prepared(Runner(plan, build_endpoints(plan), None, RunOptions(run_time=10, engine="null")))
    jf = runner.jobfiles[0]["M1"]
    (job,) = jf.jobs
    assert runner._io_expected(job, jf)
    plan.specs[0].lines[0].delay = 8000  # Iometer's delay: 8 s between I/Os in a 10 s step
    assert not runner._io_expected(job, jf)
