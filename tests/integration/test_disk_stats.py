"""Disk statistics beside the results: a real run on a file system on a loop device, whose kernel counters
(/sys/block/loopN/stat) are read around the run to check fio's figures and the iostat arithmetic."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from app.model import planfile
from app.model.plan import SpecLine, Target
from tests.helpers import grid
from tests.loop_disk import kernel_stat, mounted_ext4

pytestmark = [
    pytest.mark.fio,
    pytest.mark.skipif(
        os.geteuid() != 0 or not shutil.which("losetup") or not shutil.which("mkfs.ext4"),
        reason="needs root, losetup and mkfs.ext4 (CI runs as root)",
    ),
]


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def mounted_loop(tmp_path):
    with mounted_ext4(tmp_path) as (dev, mnt):
        yield dev, mnt


def test_disk_statistics_per_target_and_step(tmp_path, mounted_loop):
    dev, mnt = mounted_loop
    name = os.path.basename(dev)
    plan = grid(1, 1, 1, qd=4)
    plan.setup.run_time, plan.setup.ramp_up = 3, 0
    plan.specs[0].lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]
    plan.managers[0].workers[0].targets = [Target(str(mnt / "iobw.tst"))]
    path = tmp_path / "plan.json"
    planfile.save(plan, path)
    db = tmp_path / "r.db"
    before = kernel_stat(dev)["reads"]
    out = cli("--db", db, "run", path, "--test-file-size", "32M")
    after = kernel_stat(dev)["reads"]
    assert out.returncode == 0, out.stderr + out.stdout
    shown = json.loads(cli("--db", db, "show", "1", "--json").stdout)
    (row,) = [d for d in shown["disk_stats"] if d["disk"] == name]
    assert row["targets"] == [str(mnt / "iobw.tst")]
    # fio's reads are the kernel's reads of the run (the file's layout writes are writes, not reads)
    assert 0 < row["reads"] <= after - before
    assert row["reads"] >= 0.9 * (after - before)
    raw = json.loads(next(iter(_raw_outputs(db))))
    du = next(d for d in raw["disk_util"] if d["name"] == name)
    assert row["r_await_ms"] == pytest.approx(du["read_ticks"] / du["read_ios"])
    assert 0 < row["util_pct"] <= 100 and row["aqu_sz"] > 0
    text = cli("--db", db, "show", "1").stdout
    assert "Disk statistics" in text and name in text


def _raw_outputs(db):
    from app.store.database import open_store
    from app.store.queries import get_run

    store = open_store(db)
    try:
        return [o.raw_output for s in get_run(store, 1, raw_output=True).steps for o in s.outputs.values()]
    finally:
        store.close()
