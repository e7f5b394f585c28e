"""The samples export streams (a stretch of a step at a time) and writes exactly what the export that
held the whole run wrote: blocks, rows not yet in a block, a second written again, shared series and
stretch boundaries inside and between blocks."""

from __future__ import annotations

import csv
import io

import pytest

from app.analysis.csv_safe import safe_cell
from app.analysis.samples_export import LEVEL_ORDER, display_names, samples_csv, samples_csv_bytes
from app.model.metrics import Metrics
from app.store import ManagerInfo, Recorder, SampleRow, TargetInfo, WorkerInfo, open_store
from app.store.queries import get_run, step_samples, step_series

COLUMNS = (
    "run",
    "step",
    "spec",
    "t_s",
    "interval_s",
    "level",
    "manager",
    "name",
    "iops",
    "read_iops",
    "write_iops",
    "mbps",
    "read_mbps",
    "write_mbps",
    "lat_mean_ms",
    "read_lat_mean_ms",
    "write_lat_mean_ms",
    "lat_max_ms",
    "errors",
)


def _n(v: float) -> float:
    return float(f"{v:.10g}")


def export_as_before(store, run) -> bytes:
    """The export as it was before it streamed (commit 7b6de51): every step's rows held, then sorted."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(COLUMNS)
    names = display_names(run)
    for s in run.steps:
        rows = []
        for level, manager, key in step_series(store, s.id):
            for t, m in step_samples(store, s.id, level, key, manager=manager):
                rows.append(
                    (
                        t,
                        LEVEL_ORDER.get(level, 9),
                        manager or "",
                        key,
                        [
                            run.id,
                            s.index + 1,
                            s.spec_name,
                            _n(t),
                            _n(m.seconds),
                            level,
                            manager or "",
                            names.get((level, manager, key), key),
                            _n(m.iops),
                            _n(m.read_iops),
                            _n(m.write_iops),
                            _n(m.mbps),
                            _n(m.read_mbps),
                            _n(m.write_mbps),
                            _n(m.lat_mean_ms),
                            _n(m.read_lat_mean_ms),
                            _n(m.write_lat_mean_ms),
                            _n(m.lat_max_ms),
                            m.errors,
                        ],
                    )
                )
        for *_, cells in sorted(rows, key=lambda r: r[:4]):
            w.writerow([safe_cell(c) for c in cells])
    return buf.getvalue().encode("utf-8-sig")


def metrics(i: int, t: float, salt: int) -> Metrics:
    return Metrics(
        seconds=1.0 if t == int(t) else 0.37,
        read_ios=1000 + 7 * i + salt,
        write_ios=3 * i + salt,
        read_bytes=4096 * (1000 + 7 * i + salt),
        write_bytes=4096 * 3 * i,
        read_lat_sum_ns=(1000 + 7 * i) * 81_234 + salt,
        read_lat_n=1000 + 7 * i + salt,
        write_lat_sum_ns=3 * i * 150_321,
        write_lat_n=3 * i,
        read_lat_max_ns=900_000 + i,
        write_lat_max_ns=1_200_000 + salt,
        errors=i % 5 == 0,
    )


@pytest.fixture
def store_with_run(tmp_path):
    """Two steps, two managers (one worker each, one target each: targets share their worker's
    samples until one differs), 130 + 75 seconds, the second step still running (its last rows are
    rows, not blocks), seconds 17 and 130 written twice, a fractional last interval."""
    db = tmp_path / "s.db"
    store = open_store(db)
    rec = Recorder(store)
    run_id = rec.begin_run({"x": 1}, plan_name="p", name="stream")
    rec.add_managers(run_id, [ManagerInfo("M1"), ManagerInfo("M2")])
    rec.add_workers(run_id, [WorkerInfo("M1", "w1", 'Worker, "one"'), WorkerInfo("M2", "w1", "=cmd")])
    rec.add_targets(
        run_id,
        [TargetInfo("M1", "w1", "w1t1", "T1", "/tmp/a"), TargetInfo("M2", "w1", "w1t1", "T2", "/tmp/b")],
    )
    for index, seconds in ((0, 130), (1, 75)):
        step = rec.begin_step(
            run_id,
            index,
            spec_name=f"spec {index}",
            queue_depth=1,
            active_workers=[["M1", "w1"], ["M2", "w1"]],
            active_targets=[["M1", "w1t1"], ["M2", "w1t1"]],
            run_s=seconds,
        )
        times = [float(t) for t in range(1, seconds + 1)] + [seconds + 0.37]
        for i, t in enumerate(times):
            rows = []
            for salt, mgr in enumerate(("M1", "M2")):
                m = metrics(i, t, salt)
                rows.append(SampleRow(mgr, "worker", "w1", t, m, m))
                # M2's target differs from its worker from second 40 on
                tm = metrics(i, t, salt + (1 if mgr == "M2" and t >= 40 else 0))
                rows.append(SampleRow(mgr, "target", "w1t1", t, tm, tm))
                rows.append(SampleRow(mgr, "manager", mgr, t, m, m))
            rows.append(SampleRow(None, "all", "ALL", t, metrics(i, t, 9), metrics(i, t, 9)))
            rec.add_samples(step, rows)
            if t in (17.0, 130.0):  # written again later: the newer numbers stand
                again = metrics(i, t, 5)
                rec.add_samples(step, [SampleRow(None, "all", "ALL", t, again, again)])
        if index == 0:
            rec.end_step(step, "complete")
    yield store, run_id
    store.close()


@pytest.mark.parametrize("stretch", [600.0, 60.0, 7.0, 2.5])
def test_streamed_export_equals_the_whole_export_byte_for_byte(store_with_run, stretch):
    store, run_id = store_with_run
    run = get_run(store, run_id)
    before = export_as_before(store, run)
    chunks = list(samples_csv_bytes(store, run, stretch))
    assert b"".join(chunks) == before
    assert len(chunks) > 2  # it really came in pieces
    assert before.count(b"\r\n") == 1 + 7 * (131 + 76)  # the header, then 7 series x seconds per step
    assert samples_csv(store, run).encode("utf-8-sig") == before


def test_a_second_written_again_exports_its_newer_numbers(store_with_run):
    store, run_id = store_with_run
    run = get_run(store, run_id)
    text = b"".join(samples_csv_bytes(store, run, 7.0)).decode("utf-8-sig")
    rows = [
        r for r in csv.DictReader(io.StringIO(text)) if r["level"] == "all" and r["t_s"] in ("17.0", "130.0")
    ]
    assert len(rows) == 3  # step 1: 17 and 130; step 2: 17 (it has 75 seconds)
    assert {r["read_iops"] for r in rows} == {
        str(_n(metrics(16, 17.0, 5).read_iops)),
        str(_n(metrics(129, 130.0, 5).read_iops)),
    }


def test_numbers_are_written_as_before_at_every_extreme():
    """The fast formatting writes what ``repr(float(f"{v:.10g}"))`` wrote, at every kind of value: whole
    numbers, exponents on both sides of repr's and .10g's ranges, signed zero, subnormals, inf, NaN."""
    from app.analysis.samples_export import _g10

    values = [0.0, -0.0, 1.0, -7.0, 0.5, 1e-4, 1.5e-5, 5e-324, 2.2250738585072014e-308, 123456789.0]
    values += [9999999999.4, 9999999999.6, 1e10, 1.5e15, 123456789012.0, 1e16, 1e300, 1 / 3, 2 / 3 * 1e12]
    values += [float("inf"), float("-inf"), float("nan"), 255953.63514, 0.16784368151]
    assert _g10(values) == [repr(_n(v)) for v in values]
