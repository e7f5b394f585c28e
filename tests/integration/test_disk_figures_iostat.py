"""The disk figures Fiometer derives (r/s, rkB/s, rareq-sz) equal iostat's: `iostat -x` (sysstat) runs beside a
real fio step on a throttled loop device at 4k, 512k, 1M and 4M reads, with requests of 1M and 4M split by the
kernel (max_sectors_kb 512), and every figure must lie within 2 % of iostat's over the step's steady seconds."""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from app.model import planfile
from app.model.plan import SpecLine
from tests.helpers import grid, spec
from tests.io_throttle import NEEDS_THROTTLE, run_in, throttled
from tests.loop_disk import NEEDS_LOOP, attach, detach

pytestmark = [
    pytest.mark.fio,
    pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio"),
    pytest.mark.skipif(shutil.which("iostat") is None, reason="needs iostat (apt: sysstat)"),
    NEEDS_LOOP,
    NEEDS_THROTTLE,
]
MiB = 1 << 20
SECONDS = 8


def plan_of(tmp_path: Path, bs: int) -> Path:
    plan = grid(1, 1, 1)
    plan.specs = [spec("S", SpecLine(bs, 100, 100, 0, 0, 1, 0, 0))]  # sequential reads
    worker = plan.managers[0].workers[0]
    worker.targets[0].name = "T"
    worker.queue_depth = 4
    plan.setup.run_time = SECONDS
    plan.setup.direct_io = True
    path = tmp_path / f"plan-{bs}.json"
    planfile.save(plan, path)
    return path


def iostat_steady(out: str, disk: str) -> dict[str, float]:
    """iostat's r/s, rkB/s, rareq-sz averaged over the seconds the disk read at its throttled rate (the first
    and last second of the step are partial)."""
    stats = json.loads(out)["sysstat"]["hosts"][0]["statistics"]
    rows = [d for s in stats for d in s["disk"] if d["disk_device"] == disk and d["rkB/s"] > 0]
    top = statistics.median(r["rkB/s"] for r in rows)
    steady = [r for r in rows if abs(r["rkB/s"] - top) <= 0.10 * top]
    assert len(steady) >= 3, rows
    return {k: statistics.fmean(r[k] for r in steady) for k in ("r/s", "rkB/s", "rareq-sz")}


@pytest.fixture
def loop_dev(tmp_path):
    dev = attach(tmp_path / "loop.img", 256 * MiB)
    if shutil.which(
        "udevadm"
    ):  # udev's probe of the new device (blkid's small reads) is done before the step
        subprocess.run(["udevadm", "settle"], capture_output=True, timeout=60)
    name = Path(dev).name
    (Path("/sys/block") / name / "queue" / "max_sectors_kb").write_text("512")  # 1M and 4M are split
    try:
        yield dev
    finally:
        detach(dev)


@pytest.mark.parametrize(
    "bs, limit",
    [
        (4096, {"read_iops": 2000}),
        (512 * 1024, {"read_bps": 48 * MiB}),
        (MiB, {"read_bps": 48 * MiB}),
        (4 * MiB, {"read_bps": 48 * MiB}),
    ],
    ids=["4k", "512k", "1M", "4M"],
)
def test_request_sizes_and_rates_equal_iostats(tmp_path, loop_dev, bs, limit):
    name = Path(loop_dev).name
    db = tmp_path / "results.sqlite"
    iostat = subprocess.Popen(
        ["iostat", "-x", "-d", "-y", "-o", "JSON", name, "1", str(SECONDS + 6)],
        stdout=subprocess.PIPE,
        text=True,
    )
    with throttled(loop_dev, **limit) as group:
        done = run_in(
            group,
            [
                sys.executable,
                "-m",
                "app.cli",
                "run",
                str(plan_of(tmp_path, bs)),
                "--map",
                f"T={loop_dev}",
                "--db",
                str(db),
            ],
            timeout=120,
        )
    out, _ = iostat.communicate(timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = subprocess.run(
        [sys.executable, "-m", "app.cli", "show", "1", "--json", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    (ours,) = [d for d in json.loads(shown.stdout)["disk_stats"] if d["disk"] == name]
    theirs = iostat_steady(out, name)
    if bs > 512 * 1024:  # the kernel split the transfers: iostat's requests are at most 512 KiB
        assert theirs["rareq-sz"] <= 512 * 1.001
    print(bs, {k: ours[k] for k in ("r_s", "rkb_s", "rareq_kib")}, theirs)  # the figures, with -s
    for key, mine in (("r/s", ours["r_s"]), ("rkB/s", ours["rkb_s"]), ("rareq-sz", ours["rareq_kib"])):
        assert mine == pytest.approx(theirs[key], rel=0.02), (key, mine, theirs, ours)
    assert ours["w_s"] == 0 and ours["wkb_s"] == 0 and ours["wareq_kib"] is None  # no writes: none shown
