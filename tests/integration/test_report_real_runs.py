"""Reports of real fio runs on small files: the percentile table equals fio's own percentiles, the environment
is collected when the run starts, every per-second sample exports, and no PDF page is blank or an orphan."""

from __future__ import annotations

import csv
import io
import json
import platform
import subprocess
import sys

import pytest

from app.model import planfile
from app.model.metrics import hist_percentile
from app.model.plan import LOCAL, SpecLine, Target
from app.report.latency import PERCENTILES
from app.store.database import open_store
from app.store.queries import get_run, step_samples, step_series
from tests.helpers import grid
from tests.integration.test_report import MIN_TEXT, Tables, page_texts

pytestmark = pytest.mark.fio
READ, MIXED = "Random-4K-100%Read", "Random-8K-50%Read"


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two real runs (libaio, direct I/O, 8 MiB files): tagged before and after, on two different files."""
    tmp = tmp_path_factory.mktemp("real")
    plan = grid(1, 1, 1, specs=(READ, MIXED), qd=4)
    plan.specs[0].lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]
    plan.specs[1].lines = [SpecLine(8192, 100, 50, 100, 0, 1, 8192, 0)]
    plan.managers[0].host = LOCAL
    plan.managers[0].workers[0].targets = [Target(str(tmp / "data.tst"))]
    path = tmp / "plan.json"
    planfile.save(plan, path)
    db = tmp / "r.db"
    for tag in ("before", "after"):
        out = cli(
            "--db",
            db,
            "run",
            path,
            "--map",
            f"{tmp / 'data.tst'}={tmp / (tag + '.tst')}",
            "--test-file-size",
            "8M",
            "--run-time",
            "2",
            "--ramp-up",
            "1",
            "--tag",
            tag,
        )
        assert out.returncode == 0, out.stdout + out.stderr
    return db, tmp


def fio_job(run, spec: str) -> dict:
    step = next(s for s in run.steps if s.spec_name == spec)
    (out,) = step.outputs.values()
    (job,) = json.loads(out.raw_output[out.raw_output.index("{") :])["jobs"]
    return job


def test_the_percentile_table_equals_fios_own_percentiles(runs, tmp_path):
    db, _ = runs
    out = tmp_path / "r.html"
    res = cli("--db", db, "report", "1", "--compare", "2", "--html", out)
    assert res.returncode == 0, res.stderr
    p = Tables()
    p.feed(out.read_text(encoding="utf-8"))
    table = p.tables["percentiles"]
    head = [c[0] for c in table[0]]
    assert head == ["Side"] + [f"p{q:g} ms" for q in PERCENTILES] + ["Max ms", "Runs"]
    rows, spec = {}, None
    for row in table[1:]:
        if len(row) == 1:
            spec, load = row[0][0].rsplit(", ", 1)  # each group carries its load: "Random-4K-100%Read, QD 4"
            assert load.startswith("QD "), row
        else:
            rows[spec, row[0][0]] = [float(c[1]) for c in row[1:-1]]
    with open_store(db) as store:
        for run_id, label in ((1, "before"), (2, "after")):
            run = get_run(store, run_id, raw_output=True)
            # a read-only spec: fio's own lat_ns percentiles, exactly
            lat = fio_job(run, READ)["read"]["lat_ns"]
            # (fio takes a percentile from its bin's upper edge, which can lie above the maximum measured: the
            # report shows no percentile above the maximum)
            want = [min(lat["percentile"][f"{q:.6f}"], lat["max"]) / 1e6 for q in PERCENTILES] + [
                lat["max"] / 1e6
            ]
            assert rows[READ, label] == pytest.approx(want, rel=1e-12), label
            # reads and writes together: fio's rule over fio's own bins of both directions
            job = fio_job(run, MIXED)
            bins: dict[int, int] = {}
            for d in ("read", "write"):
                for k, v in job[d]["lat_ns"]["bins"].items():
                    bins[int(k)] = bins.get(int(k), 0) + v
            top = max(job["read"]["lat_ns"]["max"], job["write"]["lat_ns"]["max"])
            want = [min(hist_percentile(bins, q), top) / 1e6 for q in PERCENTILES] + [top / 1e6]
            assert rows[MIXED, label] == pytest.approx(want, rel=1e-12), label


def test_the_environment_is_collected_when_the_run_starts_and_reported_per_side(runs, tmp_path):
    db, tmp = runs
    with open_store(db) as store:
        run = get_run(store, 1)
    env = run.host["managers"][run.managers[0].name]
    assert env["kernel"] == platform.release() and env["cpus"] >= 1 and env["memory_bytes"] > 2**20
    assert env["fio_version"] == run.managers[0].fio_version
    target = run.targets[0].details["environment"]
    fs = subprocess.run(
        ["findmnt", "-n", "-o", "FSTYPE", "--target", str(tmp)], capture_output=True, text=True
    ).stdout.strip()
    assert target["kind"] == "file" and target["fs_type"] == fs and target["mount_options"]
    out = tmp_path / "r.html"
    assert cli("--db", db, "report", "1", "--compare", "2", "--html", out).returncode == 0
    p = Tables()
    p.feed(out.read_text(encoding="utf-8"))
    facts = {r[0][0]: [c[0] for c in r[1:]] for r in p.tables["environment"][1:]}
    assert p.tables["environment"][0][1][0] == "before" and p.tables["environment"][0][2][0] == "after"
    assert platform.release() in facts["Kernel"][0] and facts["Target: file system"][0].startswith(fs)
    assert facts["Target"] == [str(tmp / "before.tst"), str(tmp / "after.tst")]
    assert facts["Run time per step"] == ["2 s", "2 s"] and facts["Ramp-up per step"] == ["1 s", "1 s"]
    assert facts["Direct I/O"] == ["yes (direct=1)"] * 2


def test_every_per_second_sample_exports_in_long_form(runs, tmp_path):
    db, _ = runs
    out = tmp_path / "s.csv"
    res = cli("--db", db, "export", "1", "--samples", out)
    assert res.returncode == 0, res.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8-sig"))))
    with open_store(db) as store:
        run = get_run(store, 1)
        want = []
        for s in run.steps:
            for level, manager, key in step_series(store, s.id):
                want += [
                    (s.index + 1, level, t, m.iops, m.lat_mean_ms)
                    for t, m in step_samples(store, s.id, level, key, manager=manager)
                ]
    assert len(rows) == len(want) > 4 * 2
    got = {
        (int(r["step"]), r["level"], float(r["t_s"])): (float(r["iops"]), float(r["lat_mean_ms"]))
        for r in rows
    }
    for step, level, t, iops, lat in want:
        match = [
            v for (st, lv, tt), v in got.items() if st == step and lv == level and tt == pytest.approx(t)
        ]
        assert match == [(pytest.approx(iops, rel=1e-9), pytest.approx(lat, rel=1e-9))]
    assert {r["level"] for r in rows} == {"all", "manager", "worker", "target"}
    assert rows[0]["name"] == "ALL" and {r["spec"] for r in rows} == {READ, MIXED}


@pytest.mark.parametrize("compare", [["--compare", "2"], []], ids=["before-after", "one-run"])
def test_no_pdf_page_is_blank_or_an_orphan(runs, tmp_path, compare):
    db, _ = runs
    out = tmp_path / "r.pdf"
    res = cli("--db", db, "report", "1", *compare, "--pdf", out, "--author", "A. Consultant")
    assert res.returncode == 0, res.stderr
    texts = page_texts(out)
    assert len(texts) >= 4
    thin = {n: t for n, t in enumerate(texts, 1) if len(t) < MIN_TEXT}
    assert thin == {}, thin
    assert "Contents" in texts[0] and "Summary" in texts[1]  # a one-run report answers first too


def test_targets_named_differently_share_the_environment_tables_rows(tmp_path):
    """Before on targets C: and D:, after on E: and F: (a move to other LUNs): the table lists Target 1 and
    Target 2 with both sides filled, not four half-empty rows per target."""
    db = tmp_path / "r.db"
    for tag, names in (("before", ("C:", "D:")), ("after", ("E:", "F:"))):
        plan = grid(1, 1, 2, specs=(READ,), qd=2)
        plan.specs[0].lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]
        plan.managers[0].host = LOCAL
        plan.managers[0].workers[0].targets = [Target(n) for n in names]
        path = tmp_path / f"{tag}.json"
        planfile.save(plan, path)
        maps = [x for n in names for x in ("--map", f"{n}={tmp_path / (tag + n[0] + '.tst')}")]
        out = cli(
            "--db", db, "run", path, *maps, "--engine", "null", "--test-file-size", "1M", "--run-time", "1",
            "--tag", tag,
        )  # fmt: skip
        assert out.returncode == 0, out.stdout + out.stderr
    out = tmp_path / "r.html"
    assert cli("--db", db, "report", "1", "--compare", "2", "--html", out).returncode == 0
    p = Tables()
    p.feed(out.read_text(encoding="utf-8"))
    rows = {r[0][0]: [c[0] for c in r[1:]] for r in p.tables["environment"][1:]}
    targets = {k: v for k, v in rows.items() if k.startswith("Target")}
    assert rows["Target 1"] == [f"C: ({tmp_path / 'beforeC.tst'})", f"E: ({tmp_path / 'afterE.tst'})"]
    assert rows["Target 2"][1] == f"F: ({tmp_path / 'afterF.tst'})"
    assert targets and all("\u2013" not in v for v in targets.values()), targets
