"""Runs land in SQLite: numbers equal fio's own, a killed run is interrupted, results.csv exports."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.analysis.iometer_csv import COLUMNS, HEADER
from app.model import planfile
from app.model.plan import LOCAL, SpecLine, Target
from app.store.database import open_store
from app.store.queries import get_run, list_runs, step_samples
from tests.helpers import grid

pytestmark = pytest.mark.fio


def cli(*args):
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True)


def make_plan(tmp_path, managers=2, reads=70):
    plan = grid(managers, 2, 1, qd=4)
    plan.specs[0].lines = [SpecLine(4096, 100, reads, 100, 0, 1, 4096, 0)]
    for m in plan.managers:
        m.host = LOCAL
        for wi, w in enumerate(m.workers):
            w.targets = [Target(str(tmp_path / f"{m.name}-w{wi}.tst"))]
    path = tmp_path / "plan.json"
    planfile.save(plan, path)
    return path


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("run")
    db = tmp / "r.db"
    out = cli("--db", db, "run", make_plan(tmp), "--run-time", "3", "--engine", "null", "--tag", "before")
    assert out.returncode == 0, out.stderr
    store = open_store(db)
    (summary,) = list_runs(store)
    yield store, get_run(store, summary.id, raw_output=True), tmp
    store.close()


def test_stored_numbers_equal_fios_own_final_numbers(stored_run):
    store, run, _ = stored_run
    assert run.status == "complete" and run.tags == ["before"]
    (step,) = run.steps
    stored = {(r.manager, r.key): r.metrics for r in step.results if r.level == "target"}
    checked = 0
    for manager, out in step.outputs.items():
        doc = json.loads(out.raw_output)
        for job in doc["jobs"]:
            key = job["jobname"].split(".", 1)[1]  # m1.w1.t1 -> w1.t1
            m = stored[(manager, key)]
            assert m.read_iops == pytest.approx(job["read"]["iops"], rel=1e-3)
            assert m.write_iops == pytest.approx(job["write"]["iops"], rel=1e-3)
            assert m.read_bps == pytest.approx(job["read"]["bw_bytes"], rel=1e-3)
            assert m.read_lat_mean_ms == pytest.approx(job["read"]["lat_ns"]["mean"] / 1e6, rel=1e-3)
            assert m.ios == job["read"]["total_ios"] + job["write"]["total_ios"]
            checked += 1
    assert checked == 4  # 2 managers x 2 workers x 1 target


def test_all_is_the_sum_of_managers_and_intervals_add_up(stored_run):
    store, run, _ = stored_run
    (step,) = run.steps
    res = {(r.level, r.key): r.metrics for r in step.results}
    managers = [m for (lvl, _), m in res.items() if lvl == "manager"]
    assert len(managers) == 2
    assert res[("all", "ALL")].iops == pytest.approx(sum(m.iops for m in managers), rel=1e-9)
    for mgr in ("M1", "M2"):
        series = step_samples(store, step.id, "manager", mgr)
        assert len(series) >= 2
        total = sum(m.ios for _, m in series)
        assert total == pytest.approx(res[("manager", mgr)].ios, rel=0.01)


def test_show_and_runs_json(stored_run):
    _, run, tmp = stored_run
    db = tmp / "r.db"
    runs = json.loads(cli("--db", db, "runs", "--json").stdout)
    assert [r["id"] for r in runs] == [run.id] and runs[0]["status"] == "complete"
    shown = json.loads(cli("--db", db, "show", run.id, "--json").stdout)
    assert shown["fio_versions"] and shown["steps"][0]["results"]
    assert cli("--db", db, "show", 999).returncode == 2


def test_export_iometer_csv_has_all_manager_worker_disk_rows(stored_run):
    _, run, tmp = stored_run
    out_csv = tmp / "results.csv"
    res = cli("--db", tmp / "r.db", "export", run.id, "--iometer-csv", out_csv)
    assert res.returncode == 0, res.stderr
    lines = out_csv.read_bytes().decode("cp1252").split("\r\n")
    rows = lines[lines.index(HEADER) + 1 : lines.index("'Time Stamp", lines.index(HEADER))]
    kinds = [r.split(",")[0] for r in rows]
    assert kinds == [
        "ALL",
        "MANAGER",
        "WORKER",
        "DISK",
        "WORKER",
        "DISK",
        "MANAGER",
        "WORKER",
        "DISK",
        "WORKER",
        "DISK",
    ]
    all_row = dict(zip(COLUMNS, rows[0].split(","), strict=True))
    mgr_rows = [dict(zip(COLUMNS, r.split(","), strict=True)) for r in rows if r.startswith("MANAGER")]
    assert float(all_row["IOps"]) == pytest.approx(sum(float(m["IOps"]) for m in mgr_rows), rel=1e-5)
    assert (all_row["# Managers"], all_row["# Workers"], all_row["# Disks"]) == ("2", "4", "4")
    assert lines[-2] == "'End Test"


def _children(pid):
    kids = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids += [int(x) for x in (task / "children").read_text().split()]
    return kids


def test_killed_run_is_interrupted_with_its_samples_and_leaves_no_fio(tmp_path):
    db = tmp_path / "r.db"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(db),
            "run",
            str(make_plan(tmp_path)),
            "--run-time",
            "120",
            "--engine",
            "null",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        samples = 0
        while time.monotonic() < deadline and samples < 3:
            time.sleep(0.5)
            if db.exists():
                store = open_store(db)
                runs = list_runs(store)
                if runs and get_run(store, runs[0].id).steps:
                    step = get_run(store, runs[0].id).steps[0]
                    samples = len(step_samples(store, step.id, "manager", "M1"))
                store.close()
        assert samples >= 3
        fios = _children(proc.pid)
        assert fios
        fios += [job for fio in fios for job in _children(fio)]  # fio's job processes, in their own sessions
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    store = open_store(db)  # opening notices the dead owner
    (summary,) = list_runs(store)
    run = get_run(store, summary.id)
    assert run.status == "interrupted"
    assert len(step_samples(store, run.steps[0].id, "manager", "M1")) >= 3
    store.close()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in fios):
        time.sleep(0.2)
    alive = [
        p
        for p in fios
        if os.path.exists(f"/proc/{p}") and "Z" not in Path(f"/proc/{p}/stat").read_text().split()[2]
    ]
    assert alive == [], "fio kept running after Fiometer was killed"
