"""Several processes on one database: a killed recorder's run becomes interrupted; writers take turns."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from app.process_owner import ProcessOwner, current_owner, owner_is_gone
from app.store import get_run, list_runs, open_store, step_samples
from app.store.blocks import BLOCK_SAMPLES
from app.store.queries import WINDOWS
from tests.unit.store_support import level_keys

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

RECORD_THEN_HANG = """
import random, sys, time
from app.store import Recorder, open_store
from tests.unit.store_support import begin_run, begin_step, interval
rec = Recorder(open_store(sys.argv[1]))
run_id = begin_run(rec)
step_id = begin_step(rec, run_id, 0)
rng = random.Random(7)
for i in range(int(sys.argv[2])):
    rec.add_samples(step_id, interval(rng, i + 1.0))
print(run_id, step_id, flush=True)
time.sleep(120)
"""

WRITE_RUNS = """
import sys, time
from pathlib import Path
from app.store import Recorder, open_store
from tests.unit.store_support import write_run
rec = Recorder(open_store(sys.argv[1]))
print("ready", flush=True)
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.005)
runs = [write_run(rec, seed=int(sys.argv[3]) + i, steps=2, intervals=int(sys.argv[4])).run_id for i in range(2)]
print(*runs, flush=True)
"""


def _python(code: str, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *map(str, args)],
        cwd=ROOT,
        env=ENV,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _every_sample(store, step_id: int) -> dict:
    return {
        (k, w): step_samples(store, step_id, k[1], k[2], w, manager=k[0])
        for k in level_keys()
        for w in WINDOWS
    }


@pytest.mark.parametrize(("noticed_by", "intervals"), [("open", 4), ("list", 4), ("open", 150)])
def test_killed_recorder_leaves_an_interrupted_run_with_its_samples(tmp_path, noticed_by, intervals):
    """150 intervals: some samples already in blocks, the last ones still rows when the recorder dies."""
    path = tmp_path / "fiometer.db"
    child = _python(RECORD_THEN_HANG, path, intervals)
    try:
        line = child.stdout.readline()
        assert line, child.stderr.read()
        run_id, step_id = map(int, line.split())
        with open_store(path) as store:
            assert get_run(store, run_id).status == "running"  # its process is alive: left alone
            rows, blocks = (
                store.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("samples", "sample_blocks")
            )
            assert rows > 0 and (blocks > 0) == (intervals > BLOCK_SAMPLES)
            seen_alive = _every_sample(store, step_id)
            child.kill()  # SIGKILL on POSIX: no cleanup code runs
            child.wait(timeout=30)
            if noticed_by == "list":
                assert [(r.id, r.status) for r in list_runs(store)] == [(run_id, "interrupted")]
        with open_store(path) as store:
            if noticed_by == "open":
                assert store.conn.execute("SELECT status FROM runs").fetchone()[0] == "interrupted"
            run = get_run(store, run_id)
            assert run.status == "interrupted" and run.steps[0].status == "interrupted"
            assert "cut short" in run.messages[0].text and str(child.pid) in run.messages[0].text
            for manager, level, key in level_keys():
                assert [t for t, _ in step_samples(store, step_id, level, key, manager=manager)] == [
                    float(i + 1) for i in range(intervals)
                ]
            assert _every_sample(store, step_id) == seen_alive  # every number as recorded
            # the interrupted step was sealed: its samples in blocks, its peaks kept for the charts
            assert store.conn.execute("SELECT count(*) FROM samples").fetchone()[0] == 0
            assert store.conn.execute("SELECT count(*) FROM sample_peaks").fetchone()[0] > 0
            assert run.ended == run.steps[0].ended and run.ended > run.steps[0].started  # last sample time
    finally:
        child.kill()
        child.wait(timeout=30)
        child.stdout.close()
        child.stderr.close()


def test_two_processes_writing_at_once_both_succeed(tmp_path):
    path = tmp_path / "fiometer.db"  # not created yet: both also race to create it
    go = tmp_path / "go"
    children = [_python(WRITE_RUNS, path, go, seed, 60) for seed in (10, 20)]
    for child in children:
        assert child.stdout.readline() == "ready\n", child.stderr.read()
    go.touch()
    outs = [c.communicate(timeout=120) for c in children]
    for child, (_, err) in zip(children, outs, strict=True):
        assert child.returncode == 0, err
    per_child = [[int(x) for x in out.split()] for out, _ in outs]
    run_ids = sorted(i for ids in per_child for i in ids)
    with open_store(path) as store:
        runs = {r.id: r for r in list_runs(store)}
        assert sorted(runs) == run_ids and len(run_ids) == 4
        assert {r.status for r in runs.values()} == {"complete"}
        spans = [(runs[ids[0]].started, runs[ids[-1]].ended) for ids in per_child]
        assert spans[0][0] < spans[1][1] and spans[1][0] < spans[0][1], "the writers did not overlap"
        for run_id in run_ids:
            for step in get_run(store, run_id).steps:
                assert len(step_samples(store, step.id, "all", "ALL")) == 60
                assert len(step.results) == len(level_keys())


def test_owner_liveness():
    me = current_owner()
    assert me.pid == os.getpid() and me.token
    assert not owner_is_gone(me)
    assert owner_is_gone(ProcessOwner(me.pid, me.host, "linux:another-boot:1"))  # pid reused since
    assert not owner_is_gone(
        ProcessOwner(me.pid, "another-host-" + socket.gethostname(), None)
    )  # cannot tell
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    assert owner_is_gone(ProcessOwner(int(finished.stdout), me.host, None))


RECORD_LATE_REPORTS_THEN_HANG = """
import sys, time
from datetime import datetime, timedelta, timezone
from app.model.metrics import Metrics
from app.store import ManagerInfo, Recorder, SampleRow, open_store
rec = Recorder(open_store(sys.argv[1]))
run_id = rec.begin_run({"name": "cut"})
rec.add_managers(run_id, [ManagerInfo("M1")])
# the step began 6 s ago; fio's first report came 4 s into it (loading, starting): t counts from there
step_id = rec.begin_step(run_id, 0, started=datetime.now(timezone.utc) - timedelta(seconds=6))
m = Metrics(seconds=1.0, read_ios=10, read_iops=10.0)
rec.add_samples(step_id, [SampleRow("M1", "manager", "M1", 0.0, m, m)])
time.sleep(1.0)
rec.add_samples(step_id, [SampleRow("M1", "manager", "M1", 1.0, m, m)])
time.sleep(1.0)
rec.add_samples(step_id, [SampleRow("M1", "manager", "M1", 2.0, m, m)])
print(run_id, time.time(), flush=True)
time.sleep(120)
"""


def test_an_interrupted_run_ends_when_its_last_samples_were_recorded(tmp_path):
    from datetime import datetime

    path = tmp_path / "fiometer.db"
    child = _python(RECORD_LATE_REPORTS_THEN_HANG, path)
    try:
        line = child.stdout.readline()
        assert line, child.stderr.read()
        run_id, last_write = int(line.split()[0]), float(line.split()[1])
        child.kill()
        child.wait(timeout=30)
        with open_store(path) as store:
            run = get_run(store, run_id)
        assert run.status == "interrupted"
        ended = datetime.fromisoformat(run.ended).timestamp()
        assert abs(ended - last_write) < 0.5, (run.ended, last_write)  # not started + last t (4 s earlier)
    finally:
        child.kill()
        child.wait(timeout=30)
        child.stdout.close()
        child.stderr.close()
