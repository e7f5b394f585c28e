"""Issue 37: every per-second sample's IOPS and MB/s come from one count, the I/Os fio completed. fio's
``total_ios`` counts I/Os as they are submitted and an interim report copies ``io_bytes`` a moment before
it reads its other counters, so a second's IOPS from the one and its MB/s from the other disagreed (1,212
IOPS with 0.326 MB/s at 2 KiB on a loaded host). On real fio (libaio, queue depth 32, direct I/O on files),
locally and through a real `fio --server`: for a spec of one transfer size, and for one whose reads and
writes have one size each, bytes / I/Os is that size in every live sample and every stored one, at every
level, in the second and in the step so far; the step's final I/Os are still fio's own."""

from __future__ import annotations

import json
import shutil

import pytest

from app.engine.run.managers import local_endpoint, remote_endpoint
from app.engine.run.runner import Runner, RunOptions
from app.model.plan import LOCAL, AccessSpec, SpecLine, Target
from app.session.recording import Fanout, StoreRecorder
from app.store import get_run, open_store, step_samples
from tests.helpers import grid
from tests.integration.test_remote_faults import Collect

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")]

RUN_S = 4
# (read bytes, write bytes) of each I/O, per manager's spec
SIZES = {"M1": (2048, 2048), "M2": (4096, 65536)}


def plan_for(tmp_path, server: str):
    plan = grid(2, 1, 1, specs=("S",), qd=32)
    plan.specs = [
        AccessSpec("2K random 70% read", [SpecLine(2048, 100, 70, 100, 0, 1, 0, 0)]),
        AccessSpec(
            "4K reads and 64K writes",
            [SpecLine(4096, 60, 100, 100, 0, 1, 0, 0), SpecLine(65536, 40, 0, 100, 0, 1, 0, 0)],
        ),
    ]
    plan.managers[0].host = LOCAL
    plan.managers[1].host = server
    for m, spec in zip(plan.managers, plan.specs, strict=True):
        m.workers[0].specs = [spec.name]
        m.workers[0].targets = [Target(str(tmp_path / f"{m.name}.tst"))]
    plan.setup.direct_io = True
    return plan


def disagreements(where: str, manager: str, m) -> list[str]:
    """Where bytes / I/Os is not the manager's transfer size, in either direction."""
    out = []
    for dd, size in zip(("read", "write"), SIZES[manager], strict=True):
        ios, nbytes = getattr(m, f"{dd}_ios"), getattr(m, f"{dd}_bytes")
        if nbytes != ios * size:
            out.append(f"{where} {dd}: {nbytes} bytes in {ios} I/Os ({nbytes / max(ios, 1):.1f} B each)")
    return out


def test_every_second_has_as_many_bytes_as_its_ios_carry(tmp_path, fio_server) -> None:
    host, port, _proc = fio_server("127.0.0.2")
    plan = plan_for(tmp_path, f"{host}:{port}")
    endpoints = {"M1": local_endpoint("M1"), "M2": remote_endpoint("M2", f"{host}:{port}")}
    collect = Collect()
    with open_store(tmp_path / "r.db") as store:
        recorder = StoreRecorder(store)
        runner = Runner(
            plan,
            endpoints,
            Fanout(recorder, collect),
            RunOptions(run_time=RUN_S, engine="libaio", file_size=16 << 20, allow_unverified={"M2"}),
        )
        assert runner.run() == "complete", [m.text for m in collect.messages]
        step = get_run(store, recorder.run_id, raw_output=True).steps[0]
        stored = {
            (level, m, kind): step_samples(store, step.id, level, key, kind, manager=m)
            for m, w in (("M1", "w1"), ("M2", "w1"))
            for level, key in (("target", "w1.t1"), ("worker", w), ("manager", m))
            for kind in ("interval", "whole")
        }
        finals = {(r.manager, r.level): r.metrics for r in step.results}
        raw = {n: json.loads(o.raw_output[o.raw_output.index("{") :]) for n, o in step.outputs.items()}

    live = [s for s in collect.samples_by_step if s.level != "all"]
    assert {s.manager for s in live} == {"M1", "M2"}
    bad = []
    for s in live:
        bad += disagreements(f"live {s.manager} {s.level} t={s.t:.1f} second", s.manager, s.interval)
        bad += disagreements(f"live {s.manager} {s.level} t={s.t:.1f} so far", s.manager, s.whole)
    for (level, m, kind), rows in stored.items():
        assert len(rows) >= RUN_S - 1, (level, m, kind)
        for t, metrics in rows:
            bad += disagreements(f"stored {m} {level} {kind} t={t:.1f}", m, metrics)
    assert not bad, "\n".join(bad[:20])
    seconds = [s.interval for s in live if s.level == "manager" and s.interval.seconds > 0.5]
    assert len(seconds) >= 2 * (RUN_S - 1) and all(x.read_ios > 1000 and x.write_ios > 100 for x in seconds)
    for name, doc in raw.items():  # the step's own I/Os: what fio says it did
        jobs = [
            j for j in doc.get("jobs") or doc.get("client_stats") or [] if j.get("jobname") != "All clients"
        ]
        for dd in ("read", "write"):
            assert getattr(finals[(name, "manager")], f"{dd}_ios") == sum(j[dd]["total_ios"] for j in jobs)
