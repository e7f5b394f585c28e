"""The issue's five consultant workflows on real fio against a raw loop device throttled by cgroup (v2 io.max or
v1 blkio), each run before and after a change the throttle stands in for (a second path, a faster RAID level,
a pacing change, a faster card): the reports' figures follow the throttle, the honest runs carry no validity
note, and what the report says was run is what ran.

- dd with multipath before/after: a timed write then read of 16 MiB at 1 MiB, 16 -> 32 MB/s.
- The EVA 4400 Iometer template unchanged, Vraid5 vs Vraid1: its four specs, 300 -> 600 IOPS each way.
- Orion-style 8k/1M sweep before/after: QD 1..64, 400 -> 800 IOPS and 40 -> 80 MB/s.
- A flash card preconditioned on the raw device: two fills and steady state, then the four tests.
- A Linux SAN dd block-size sweep (64 KiB .. 4 MiB reads) with the disk's own figures beside it (max_sectors_kb
  512: the kernel splits 1 MiB and 4 MiB requests, and the request size says so).

FIOMETER_REPORTS=DIR writes each workflow's report (PDF, HTML, XLSX, CSV) and database there, to look at every
page."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.paths import resources_dir
from tests.io_throttle import NEEDS_THROTTLE, run_in, throttled
from tests.loop_disk import NEEDS_LOOP, attach, detach

pytestmark = [
    pytest.mark.fio,
    pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio"),
    NEEDS_LOOP,
    NEEDS_THROTTLE,
]
MiB = 1 << 20
ARROW = "\u2192"


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True, timeout=600
    )


def run_throttled(db: Path, plan: Path, dev: str, target: str, tag: str, rates: dict, *extra: str) -> None:
    argv = [sys.executable, "-m", "app.cli", "--db", str(db), "run", str(plan), "--map", f"{target}={dev}"]
    # libaio: io_uring's direct I/O is charged twice by cgroup v1's blkio throttle on this kernel (fio alone,
    # 16 MB/s allowed: 8.2 MB/s with io_uring, 15.9 with libaio), so it would measure the throttle, not the plan
    argv += ["--allow-write", target, "--tag", tag, "--engine", "libaio", *extra]
    with throttled(dev, **rates) as group:
        done = run_in(group, argv, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def report(db: Path, name: str):
    from app.report.document import build_report
    from app.store.database import open_store

    keep = os.environ.get("FIOMETER_REPORTS")
    if keep:
        base = Path(keep) / name
        files = [
            f"--{x}" if i % 2 == 0 else f"{base}.{x}" for x in ("pdf", "html", "xlsx", "csv") for i in (0, 1)
        ]
        assert cli("--db", db, "report", 1, "--compare", 2, *files).returncode == 0
        shutil.copy(db, f"{base}.db")  # to render the report again
    with open_store(db) as store:
        return build_report(store, [1], [[2]])


def notes_of(db: Path, run_id: int) -> list[str]:
    doc = json.loads(cli("--db", db, "show", run_id, "--json").stdout)
    return [n if isinstance(n, str) else json.dumps(n) for n in doc["validity"]]


def example(tmp: Path, name: str) -> dict:
    if not (tmp / f"{name}.json").exists():
        assert cli("examples", "--save", tmp).returncode == 0
    return json.loads((tmp / f"{name}.json").read_text())


def save(tmp: Path, name: str, doc: dict) -> Path:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


def plan_of(doc: dict) -> dict:
    return doc.get("plan", doc)


@pytest.fixture
def raw_loop(tmp_path):
    dev = attach(tmp_path / "raw.img", 256 * MiB)
    try:
        yield dev
    finally:
        detach(dev)


def test_dd_with_multipath_before_and_after(tmp_path, raw_loop):
    doc = example(tmp_path, "timed")
    plan = plan_of(doc)
    plan["setup"]["transfer_bytes"] = 16 * MiB
    for w in plan["managers"][0]["workers"]:
        w["data_pattern"] = 2  # dd of real data, not of one repeated byte
    path = save(tmp_path, "dd", doc)
    db = tmp_path / "dd.db"
    for tag, rate in (("before, round-robin", 16_000_000), ("after, multipath", 32_000_000)):
        run_throttled(db, path, raw_loop, "TESTFILE", tag, {"read_bps": rate, "write_bps": rate})
    rep = report(db, "dd-multipath")
    heads = rep.summary[0].headlines
    for spec in ("Sequential write 1M", "Sequential read 1M"):
        (line,) = [h for h in heads if h.startswith(f"{spec} transfer of 16 MiB: ")]
        m = re.search(rf": ([\d.]+) s {ARROW} ([\d.]+) s \((\S+) %\)", line)
        assert m, line
        before, after = float(m[1]), float(m[2])
        assert before == pytest.approx(16 * MiB / 16e6, rel=0.2) and after == pytest.approx(
            16 * MiB / 32e6, rel=0.2
        )
    assert notes_of(db, 1) == [] and notes_of(db, 2) == []
    env = {r.cells[0].text: [c.text for c in r.cells[1:]] for r in rep.environment.rows}
    assert env["Time limit per step"] == ["3600 s (a cap, not the time measured)"] * 2
    assert "Run time per step" not in env
    assert any(
        f"raw device {raw_loop} (target TESTFILE): the device itself, 256 MiB (no test file)" in d
        for d in rep.disclosure
    )
    assert not any("test files of" in d for d in rep.disclosure)


def test_the_eva_iometer_template_unchanged_vraid5_against_vraid1(tmp_path, raw_loop):
    icf = resources_dir() / "examples" / "vmware-unofficial-storage-performance.icf"
    db = tmp_path / "icf.db"
    for tag, iops in (("Vraid5", 300), ("Vraid1", 600)):
        rates = {"read_iops": iops, "write_iops": iops}
        run_throttled(db, icf, raw_loop, "C:", tag, rates, "--run-time", "3", "--ramp-up", "0")
    rep = report(db, "eva-vraid")
    (c,) = rep.comparisons
    assert len(c.rows) == 4 and not c.only_baseline and not c.only_candidate
    for r in c.rows:  # each spec's IOPS follows the throttle: twice the IOPS
        assert r.changes["iops"].change_pct == pytest.approx(100, abs=30), (r.spec, r.changes["iops"])
        assert r.changes["iops"].verdict == "better"
    assert rep.summary[0].what_changed[0].startswith("nothing Fiometer records")
    fidelity = [d for d in rep.disclosure if "fio cannot reproduce exactly" in d]
    assert fidelity and all(d.startswith("Runs 1 (Vraid5), 2 (Vraid1): ") for d in fidelity)
    # 4 specs: the per-step charts are small multiples, a step's IOPS per second beside its response time
    pdf = tmp_path / "r.pdf"
    assert cli("--db", db, "report", 1, "--compare", 2, "--pdf", pdf).returncode == 0
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True).stdout
    rows = [
        ln
        for ln in text.splitlines()
        if "IOPS per second:" in ln and "Average response time per second:" in ln
    ]
    assert len(rows) == 4, rows
    for run_id in (1, 2):  # Iometer's repeating bytes are compressible: that note is true, and the only one
        assert all("Compressible data" in n for n in notes_of(db, run_id)), notes_of(db, run_id)


def test_an_orion_sweep_before_and_after_a_pacing_change(tmp_path, raw_loop):
    path = tmp_path / "orion.json"
    example(tmp_path, "orion")
    db = tmp_path / "orion.db"
    for tag, (iops, bps) in (("before", (400, 40_000_000)), ("after", (800, 80_000_000))):
        rates = {"read_iops": iops, "read_bps": bps}
        run_throttled(db, path, raw_loop, "TESTFILE", tag, rates, "--run-time", "1", "--ramp-up", "0")
    rep = report(db, "orion-pacing")
    heads = rep.summary[0].headlines
    lat = r"\(average [\d.,]+ ms, p99 [\d.,]+ ms\)"
    (small,) = [h for h in heads if h.startswith("Small random 8k read sweep: maximum IOPS")]
    m = re.match(rf".+maximum IOPS ([\d,]+) @ QD \d+ {lat} {ARROW} ([\d,]+) @ QD \d+ {lat}", small)
    assert m, small
    assert float(m[1].replace(",", "")) == pytest.approx(400, rel=0.2)
    assert float(m[2].replace(",", "")) == pytest.approx(800, rel=0.2)
    (large,) = [h for h in heads if h.startswith("Large sequential 1M read sweep: maximum MB/s")]
    m = re.match(rf".+maximum MB/s ([\d,]+) @ QD \d+ {lat} {ARROW} ([\d,]+) @ QD \d+ {lat}", large)
    assert m, large
    assert float(m[1].replace(",", "")) == pytest.approx(40, rel=0.2)
    assert float(m[2].replace(",", "")) == pytest.approx(80, rel=0.2)
    assert notes_of(db, 1) == [] and notes_of(db, 2) == []
    # the disk's bytes per second are fio's, at every load (1-s steps: the whole step, not a window between
    # two reports, which read 6 to 12 % low)
    (disks,) = [t for t in rep.headline_tables if t.key == "disk-compare-1"]
    titles = [c.title for c in disks.columns]
    for r in disks.rows:
        mbps, rkb = r.cells[titles.index("MB/s")].value, r.cells[titles.index("rkB/s")].value
        assert rkb is not None and rkb * 1024 == pytest.approx(mbps * 1e6, rel=0.03), [
            c.text for c in r.cells
        ]
    # compact: the sweeps overlaid (four charts each, two a row), no bars or per-run curves repeating them,
    # per-step charts at the key loads only, each naming its load, two a row
    per_step = [c for c in rep.line_charts if c.key.startswith(("dist-", "share-"))]
    assert not rep.charts and all(not r.sweep_charts for r in rep.runs)
    assert 8 <= len(per_step) < 28 and {c.key for c in per_step} <= rep.small_charts
    assert all(re.search(r", QD \d+$", c.title) for c in per_step)
    assert len([c for c in rep.sweep_overlays if c.key.startswith("sweep-compare-")]) == 8
    pdf = tmp_path / "orion.pdf"
    assert cli("--db", db, "report", 1, "--compare", 2, "--pdf", pdf).returncode == 0
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout
    assert int(re.search(r"Pages:\s+(\d+)", info)[1]) <= 21, info  # was 31


def test_a_flash_card_preconditioned_on_the_raw_device(tmp_path, raw_loop):
    doc = example(tmp_path, "flash")
    plan = plan_of(doc)
    plan["setup"]["precondition"].update(round_s=1, window_rounds=3, max_s=6)
    for w in plan["managers"][0]["workers"]:
        w["data_pattern"] = 2  # flash compresses nothing of random data: the figures are the card's
    path = save(tmp_path, "flash", doc)
    db = tmp_path / "flash.db"
    for tag, scale in (("before", 1), ("after", 2)):
        rates = {"read_bps": 64_000_000 * scale, "write_bps": 64_000_000 * scale}
        rates |= {"read_iops": 2000 * scale, "write_iops": 2000 * scale}
        run_throttled(db, path, raw_loop, "TESTFILE", tag, rates, "--run-time", "1", "--ramp-up", "0")
    rep = report(db, "flash-raw")
    assert len(rep.comparisons[0].rows) == 4  # the four tests; fills and steady state are not results
    # four workers on the one raw device are said so, not "4 workers, 4 targets"
    loads = {r.baseline.key.spec: r.load for r in rep.comparisons[0].rows}
    assert loads["1M random read"] == "QD 1, 4 workers on one device", loads
    assert any("at QD 1, 4 workers on one device" in x for x in rep.summary[0].sentences), rep.summary[0]
    assert any(h.startswith("Preconditioning: steady state ") for h in rep.summary[0].headlines)
    assert any(
        f"raw device {raw_loop} (target TESTFILE): the device itself, 256 MiB (no test file)" in d
        for d in rep.disclosure
    )
    from app.store.database import open_store
    from app.store.queries import get_run

    with open_store(db) as store:
        fills = [s for s in get_run(store, 1).steps if s.spec_name.lower().startswith("fill")]
    for fill in fills:  # a fill writes the device's own 256 MiB, not the plan's 4 GiB test file
        total = next(r.metrics for r in fill.results if r.level == "all")
        assert total.bytes == 256 * MiB, (fill.spec_name, total.bytes)
    for run_id in (1, 2):
        assert notes_of(db, run_id) == [], notes_of(db, run_id)


def test_a_san_dd_block_size_sweep_with_the_disks_own_figures(tmp_path, raw_loop):
    doc = example(tmp_path, "timed")
    plan = plan_of(doc)
    plan["name"] = "dd at four block sizes"
    plan["setup"]["transfer_bytes"] = 16 * MiB
    read = plan["specs"][1]
    plan["specs"] = [
        dict(read, name=f"dd read {k}k", lines=[dict(read["lines"][0], size=k << 10)])
        for k in (64, 256, 1024, 4096)
    ]
    plan["managers"][0]["workers"][0]["specs"] = [x["name"] for x in plan["specs"]]
    path = save(tmp_path, "dd4", doc)
    (Path("/sys/block") / Path(raw_loop).name / "queue" / "max_sectors_kb").write_text("512")
    db = tmp_path / "dd4.db"
    for tag, rate in (("before", 32_000_000), ("after", 64_000_000)):
        run_throttled(db, path, raw_loop, "TESTFILE", tag, {"read_bps": rate})
    rep = report(db, "san-dd-sweep")
    (table,) = [t for t in rep.headline_tables if t.key == "transfers-1"]
    assert [r.cells[2].text for r in table.rows] == ["64 KiB", "256 KiB", "1 MiB", "4 MiB"]
    for r in table.rows:  # elapsed halves with the doubled rate
        assert r.cells[9].value == pytest.approx(-0.5, abs=0.15), [c.text for c in r.cells]
    (disks,) = [t for t in rep.headline_tables if t.key == "disk-compare-1"]
    col = [c.title for c in disks.columns].index("rareq-sz KiB")
    by_spec = {}
    for r in disks.rows:
        by_spec.setdefault(r.cells[0].text, []).append(r.cells[col].value)
    # whole below max_sectors_kb, 1 MiB in two halves; 4 MiB in eight or more (the kernel splits by segments
    # too: tests/integration/test_disk_figures_iostat.py holds every size to iostat's own figure)
    for spec, want in (("dd read 64k", 64), ("dd read 256k", 256), ("dd read 1024k", 512)):
        assert by_spec[spec] and all(v == pytest.approx(want, rel=0.02) for v in by_spec[spec]), by_spec
    assert by_spec["dd read 4096k"] and all(256 < v <= 512 for v in by_spec["dd read 4096k"]), by_spec
    assert notes_of(db, 1) == [] and notes_of(db, 2) == []
