"""io_uring as a plan's choice, end to end on real fio with small files: the CLI runs it with its options,
the stored job files and the report say which engine ran, "What changed" names the switch, and what this
machine cannot run is refused before any I/O, naming the reason."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import subprocess
import sys

import pytest

from app.engine.devices import io_uring_host
from app.engine.devices.disks import disk_of
from app.model import planfile
from app.model.plan import LOCAL, SpecLine, Target
from tests.helpers import grid

pytestmark = pytest.mark.fio
FIO = shutil.which("fio") or "fio"
WHY_NOT = io_uring_host.refusal(FIO)
needs_uring = pytest.mark.skipif(WHY_NOT is not None, reason=f"io_uring cannot run here: {WHY_NOT}")
ARROW = "\u2192"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True)


def plan_file(tmp, engine="auto", options=()):
    plan = grid(1, 1, 1, qd=8)
    plan.specs[0].lines = [SpecLine(4096, 100, 70, 100, 0, 1, 4096, 0)]
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp / "iobw.tst"))]
    plan.setup.engine, plan.setup.engine_options = engine, list(options)
    path = tmp / f"plan-{engine}.json"
    planfile.save(plan, path)
    return path


def job_texts(tmp, run_id: int) -> str:
    """The job files stored with the run's steps (the exact text sent to fio)."""
    with contextlib.closing(sqlite3.connect(tmp / "r.db")) as db:
        rows = db.execute(
            "SELECT job_text FROM step_outputs JOIN steps ON steps.id = step_id WHERE run_id = ?", (run_id,)
        ).fetchall()
    assert rows
    return "\n".join(r[0] for r in rows)


def run(tmp, *args):
    return cli("--db", tmp / "r.db", "run", *args, "--run-time", "1", "--test-file-size", "8M")


@needs_uring
def test_io_uring_with_its_options_runs_and_every_report_says_which_engine_ran(tmp_path):
    first = run(tmp_path, plan_file(tmp_path, "libaio"))
    assert first.returncode == 0, first.stderr
    second = run(
        tmp_path,
        plan_file(tmp_path),
        "--engine",
        "io_uring",
        "--io-uring-option",
        "fixedbufs",
        "--io-uring-option",
        "registerfiles",
    )
    assert second.returncode == 0, second.stderr
    compared = cli("--db", tmp_path / "r.db", "compare", "1", "2")
    assert f"What changed: I/O engine libaio {ARROW} io_uring (fixedbufs, registerfiles)" in compared.stdout
    assert "ioengine=io_uring\nfixedbufs\nregisterfiles\n" in job_texts(tmp_path, 2)  # as sent and stored
    pdf = tmp_path / "r.pdf"
    assert cli("--db", tmp_path / "r.db", "report", "1", "--compare", "2", "--pdf", pdf).returncode == 0
    text = " ".join(
        subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True).stdout.split()
    )
    assert "I/O engine libaio io_uring (fixedbufs, registerfiles)" in text  # the environment table's row


def test_auto_runs_io_uring_where_this_machine_allows_it_else_libaio(tmp_path):
    out = run(tmp_path, plan_file(tmp_path))
    assert out.returncode == 0, out.stderr
    assert ("ioengine=io_uring\n" if WHY_NOT is None else "ioengine=libaio\n") in job_texts(tmp_path, 1)


@needs_uring
def test_hipri_on_a_disk_without_polled_queues_is_refused_before_any_io(tmp_path):
    disk = disk_of(str(tmp_path))
    if disk is None or io_uring_host.polled_queues(disk):
        pytest.skip(f"the test folder's disk ({disk}) is not one without polled queues")
    out = run(tmp_path, plan_file(tmp_path, "io_uring", ("hipri",)))
    assert out.returncode != 0
    assert f"/sys/block/{disk}/queue/io_poll is not 1" in out.stderr and "untick hipri" in out.stderr
    assert not (tmp_path / "iobw.tst").exists()  # nothing laid out, nothing written


def test_an_engine_this_os_has_not_is_refused_naming_the_manager(tmp_path):
    out = run(tmp_path, plan_file(tmp_path, "windowsaio"))
    assert out.returncode != 0
    assert "manager 'M1' runs Linux, whose fio has no windowsaio engine" in out.stderr
    assert not (tmp_path / "iobw.tst").exists()
