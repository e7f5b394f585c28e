"""The compact store (database version 3): compressed histograms, series sharing their parent's samples,
kept peaks, and the in-place migration of a version 2 database (a file written by the previous release)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from app.engine.common.fio_buckets import BIN_VALUE, plat_val_to_idx
from app.model.metrics import Metrics
from app.store import (
    ManagerInfo,
    Recorder,
    SampleRow,
    TargetInfo,
    WorkerInfo,
    get_run,
    open_store,
    step_samples,
)
from app.store.blocks import BLOCK_SAMPLES, count_sql, keep_peaks
from app.store.codec import METRIC_NAMES, decode_hist, decode_hist_arrays, encode_hist, hists_p99_ns
from app.store.hist_blocks import series_hists
from app.store.migrations import SCHEMA_VERSION
from app.store.peaks import PEAK_COLUMNS
from app.store.schema import SAMPLE_VALUE_COLUMNS

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "store" / "v2-two-runs.db"
V3_FIXTURE = FIXTURE.with_name("v3-one-worker-run.db")


# --- histograms -------------------------------------------------------------------------------------
def test_histograms_round_trip_compactly_and_old_json_still_reads():
    rng = np.random.default_rng(3)
    # a realistic latency histogram: lognormal latencies in fio's buckets
    idx = [plat_val_to_idx(int(v)) for v in rng.lognormal(np.log(200_000), 0.6, 20_000)]
    hist: dict[int, int] = {}
    for i in idx:
        hist[BIN_VALUE[i]] = hist.get(BIN_VALUE[i], 0) + 1
    blob = encode_hist(hist)
    assert isinstance(blob, bytes) and decode_hist(blob) == hist
    as_json = json.dumps(
        [v for b, c in zip([0, *sorted(hist)], sorted(hist), strict=False) for v in (c - b, hist[c])],
        separators=(",", ":"),
    )
    assert len(blob) * 3 < len(as_json)  # the version 2 text was several times larger
    assert decode_hist(as_json) == hist  # a version 2 value reads the same
    big = {10: 2**40, 2**35: 1}  # counts beyond 32 bits (an hour at a million IOPS)
    assert decode_hist(encode_hist(big)) == big
    assert encode_hist({}) is None and decode_hist(None) == {}
    b, c = decode_hist_arrays(blob)
    assert list(b) == sorted(hist) and b.dtype == np.int64


def test_p99_from_stored_histograms_is_fios_rule():
    read = {100: 50, 200: 40, 400: 9}
    write = {300: 1, 5000: 1}
    m = Metrics(read_hist=read, write_hist=write)
    assert hists_p99_ns(encode_hist(read), encode_hist(write)) == m.percentile_ms(99) * 1e6
    assert hists_p99_ns(None, encode_hist(write)) == Metrics(write_hist=write).percentile_ms(99) * 1e6
    assert hists_p99_ns(None, None) is None


# --- sharing ------------------------------------------------------------------------------------------
def _metrics(i: int, hist: bool = True) -> Metrics:
    return Metrics(
        seconds=1.0,
        read_ios=100 + i,
        read_iops=100.5 + i,
        read_bps=4096.0 * (100 + i),
        read_lat_sum_ns=1e5 * (100 + i),
        read_lat_n=100 + i,
        read_lat_max_ns=2e5,
        read_hist={1000: 50, 2000 + i: 50 + i} if hist else {},
        usr_cpu=1.5,
        disk_util=None,
    )


def _setup(store, targets_per_worker: int = 1, managers: int = 1) -> tuple[Recorder, int]:
    rec = Recorder(store)
    run_id = rec.begin_run({"p": 1})
    ms = [f"M{m}" for m in range(1, managers + 1)]
    rec.add_managers(run_id, [ManagerInfo(m) for m in ms])
    rec.add_workers(run_id, [WorkerInfo(m, f"w{w}") for m in ms for w in (1, 2)])
    rec.add_targets(
        run_id,
        [
            TargetInfo(m, f"w{w}", f"w{w}t{t}")
            for m in ms
            for w in (1, 2)
            for t in range(1, targets_per_worker + 1)
        ],
    )
    return rec, rec.begin_step(run_id, 0)


def _batch(t: float, managers: int = 1, targets: int = 1, bump: str | None = None) -> list[SampleRow]:
    """One interval the way telemetry rolls it up (one child: the same numbers)."""
    rows = []
    mans = []
    for mi in range(1, managers + 1):
        m = f"M{mi}"
        workers = []
        for w in (1, 2):
            parts = []
            for tt in range(1, targets + 1):
                x = _metrics(int(t) + w + tt)
                if bump == f"w{w}t{tt}":
                    x = replace(x, read_ios=x.read_ios + 1)
                rows.append(SampleRow(m, "target", f"w{w}t{tt}", t, x, x))
                parts.append(x)
            wm = (
                parts[0]
                if bump is None and len(parts) == 1
                else Metrics.combine([_metrics(int(t) + w + tt) for tt in range(1, targets + 1)])
            )
            rows.append(SampleRow(m, "worker", f"w{w}", t, wm, wm))
            workers.append(wm)
        mm = Metrics.combine(workers)
        rows.append(SampleRow(m, "manager", m, t, mm, mm))
        mans.append(mm)
    total = mans[0] if len(mans) == 1 else Metrics.combine(mans)
    rows.append(SampleRow(None, "all", "ALL", t, total, total))
    return rows


def _shared(store) -> dict[tuple[str, str], tuple[str, str]]:
    return {
        (a, b): (c, d)
        for a, b, c, d in store.conn.execute(
            "SELECT s.level, s.key, p.level, p.key FROM series s JOIN series p ON p.id = s.same_as"
        )
    }


def test_one_target_workers_and_one_manager_all_share_their_parents_samples(tmp_path):
    with open_store(tmp_path / "f.db") as store:
        rec, step = _setup(store)
        for t in (1.0, 2.0, 3.0):
            rec.add_samples(step, _batch(t))
        assert _shared(store) == {
            ("target", "w1t1"): ("worker", "w1"),
            ("target", "w2t1"): ("worker", "w2"),
            ("all", "ALL"): ("manager", "M1"),
        }
        rows = store.conn.execute(f"SELECT sum({count_sql('id')}) FROM series").fetchone()[0]
        assert rows == 3 * 3  # two workers and the manager, three intervals
        for level, key, parent, pkey in (("target", "w1t1", "worker", "w1"), ("all", "ALL", "manager", "M1")):
            got, want = step_samples(store, step, level, key), step_samples(store, step, parent, pkey)
            assert got == want and len(got) == 3
        assert [m.read_hist for _t, m in step_samples(store, step, "all", "ALL")] == [
            _batch(t)[-1].interval.read_hist for t in (1.0, 2.0, 3.0)
        ]


def test_sharing_stops_with_a_copy_when_the_numbers_part(tmp_path):
    with open_store(tmp_path / "f.db") as store:
        rec, step = _setup(store)
        for t in (1.0, 2.0):
            rec.add_samples(step, _batch(t))
        rec.add_samples(step, _batch(3.0, bump="w1t1"))  # the target's numbers differ from its worker's now
        assert ("target", "w1t1") not in _shared(store)
        target = step_samples(store, step, "target", "w1t1")
        worker = step_samples(store, step, "worker", "w1")
        assert [t for t, _m in target] == [1.0, 2.0, 3.0]
        assert target[:2] == worker[:2] and target[2][1].read_ios == worker[2][1].read_ios + 1
        # a new Recorder (another process carrying on) knows which series share
        rec2 = Recorder(store)
        rec2.add_samples(step, _batch(4.0))
        assert step_samples(store, step, "target", "w2t1") == step_samples(store, step, "worker", "w2")


def test_a_one_manager_steps_all_ends_with_the_final_report_once_per_slot(tmp_path):
    """ALL of one manager shares the manager's samples until fio's final report joins the last slot;
    the copy it then gets must not keep that slot twice (it did, at two times, and the slot's older
    numbers could sort last)."""
    from app.engine.sampling.all_clock import AllClock

    clock = AllClock(1.0, ["M1"])
    reports = [(0.0, _metrics(0)), (1.002, _metrics(1)), (1.124, replace(_metrics(2), seconds=0.12))]
    with open_store(tmp_path / "f.db") as store:
        rec, step = _setup(store)
        whole = Metrics()
        for t, iv in reports:
            whole = Metrics.combine([whole, iv])
            rows = [SampleRow("M1", "manager", "M1", t, iv, whole)]
            rows += [
                SampleRow(None, "all", "ALL", at, a_iv, a_whole)
                for at, a_iv, a_whole in clock.add("M1", t, iv, whole)
            ]
            rec.add_samples(step, rows)
        got = step_samples(store, step, "all", "ALL")
        assert [t for t, _m in got] == [0.0, 1.002]
        assert (
            got[-1][1].read_ios == _metrics(1).read_ios + _metrics(2).read_ios
        )  # the last slot with the final report


def test_all_with_its_managers_numbers_at_another_time_keeps_its_own_times(tmp_path):
    """ALL's clock (a grid of intervals) may stamp the manager's numbers with another t."""
    with open_store(tmp_path / "f.db") as store:
        rec, step = _setup(store)
        for t in (1.0, 2.0):
            batch = _batch(t)
            batch[-1] = replace(batch[-1], t=t - 0.02)  # ALL: the manager's numbers, its own time
            rec.add_samples(step, batch)
        assert ("all", "ALL") not in _shared(store)
        assert [t for t, _m in step_samples(store, step, "all", "ALL")] == [0.98, 1.98]
        assert [t for t, _m in step_samples(store, step, "manager", "M1")] == [1.0, 2.0]


def test_sharing_that_stops_after_blocks_were_made_copies_them(tmp_path):
    with open_store(tmp_path / "f.db") as store:
        rec, step = _setup(store)
        n = 2 * BLOCK_SAMPLES + 5
        for t in range(1, n):
            rec.add_samples(step, _batch(float(t)))
        assert store.conn.execute("SELECT count(*) FROM sample_blocks").fetchone()[0] >= 2 * 3
        rec.add_samples(step, _batch(float(n), bump="w1t1"))
        rec.end_step(step)
        target = step_samples(store, step, "target", "w1t1")
        worker = step_samples(store, step, "worker", "w1")
        assert [t for t, _m in target] == [float(t) for t in range(1, n + 1)]
        assert target[:-1] == worker[:-1] and target[-1][1].read_ios == worker[-1][1].read_ios + 1


def test_several_targets_or_managers_share_nothing(tmp_path):
    with open_store(tmp_path / "f.db") as store:
        rec, step = _setup(store, targets_per_worker=2, managers=2)
        for t in (1.0, 2.0):
            rec.add_samples(step, _batch(t, managers=2, targets=2))
        assert _shared(store) == {}


def test_peaks_are_kept_when_a_step_ends(tmp_path):
    with open_store(tmp_path / "f.db") as store:
        rec, step = _setup(store)
        for t in range(1, 26):
            rec.add_samples(step, _batch(float(t)))
        rec.end_step(step)
        (worker,) = store.conn.execute(
            "SELECT id FROM series WHERE level = 'worker' AND key = 'w1'"
        ).fetchone()
        rows = store.conn.execute(
            "SELECT bin, t_lo, t_hi, i_lo_iops, i_hi_iops, i_hi_p99_ms FROM sample_peaks "
            "WHERE series_id = ? ORDER BY bin",
            (worker,),
        ).fetchall()
        samples = step_samples(store, step, "worker", "w1")
        assert [r[0] for r in rows] == [0, 1, 2]  # 1-9 s, 10-19 s, 20-25 s
        assert rows[1][1:5] == (
            10.0,
            19.0,
            min(m.iops for t, m in samples if 10 <= t < 20),
            max(m.iops for t, m in samples if 10 <= t < 20),
        )
        assert rows[1][5] is None  # workers keep no histograms: no p99
        assert len(PEAK_COLUMNS) == 20


# --- migration --------------------------------------------------------------------------------------
def _v2_contents(path: Path) -> tuple[dict, dict, dict]:
    """Every sample, result and fio output of a version 2 file, read with plain SQL."""
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    cols = ", ".join([f"i_{n}" for n in METRIC_NAMES] + [f"w_{n}" for n in METRIC_NAMES])
    samples: dict = {}
    for row in conn.execute(
        f"SELECT step_id, level, ifnull(manager, ''), key, t, {cols}, i_read_hist, i_write_hist "
        "FROM samples JOIN series ON series.id = series_id ORDER BY series_id, t"
    ):
        n = len(METRIC_NAMES)
        values = row[5 : 5 + 2 * n]
        samples.setdefault(row[:4], []).append((row[4], values, decode_hist(row[-2]), decode_hist(row[-1])))
    results = {
        row[:4]: (row[4:-2], decode_hist(row[-2]), decode_hist(row[-1]))
        for row in conn.execute(
            f"SELECT step_id, level, ifnull(manager, ''), key, {', '.join(METRIC_NAMES)}, read_hist, write_hist "
            "FROM results JOIN series ON series.id = series_id"
        )
    }
    outputs = {
        row[:2]: row[2] for row in conn.execute("SELECT step_id, manager, raw_output FROM step_outputs")
    }
    conn.close()
    return samples, results, outputs


def test_a_version_2_database_migrates_in_place_with_a_backup_and_keeps_every_number(tmp_path):
    path = tmp_path / "results.db"
    shutil.copy(FIXTURE, path)
    original = path.read_bytes()
    samples, results, outputs = _v2_contents(path)
    assert len(samples) > 30 and results and outputs

    with open_store(path) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        backup = Path(f"{path}.bak-v2")  # the file as it was, kept first
        assert _v2_contents(backup) == (samples, results, outputs)
        shared = _shared(store)
        # run 1: one target per worker and one manager; run 2: two targets per worker, two managers
        assert {k for k in shared} >= {("target", "w1t1"), ("all", "ALL")}
        run2_steps = {s.id for s in get_run(store, 2).steps}
        assert not store.conn.execute(
            f"SELECT count(*) FROM series WHERE same_as IS NOT NULL AND step_id IN "
            f"({', '.join(map(str, run2_steps))})"
        ).fetchone()[0]
        for (step_id, level, manager, key), rows in samples.items():
            inter = step_samples(store, step_id, level, key, "interval", manager=manager or None)
            whole = step_samples(store, step_id, level, key, "whole", manager=manager or None)
            assert [t for t, _m in inter] == [r[0] for r in rows]
            n = len(METRIC_NAMES)
            for (_t0, values, rh, wh), (_t, mi), (_t2, mw) in zip(rows, inter, whole, strict=True):
                assert tuple(getattr(mi, k) for k in METRIC_NAMES) == tuple(values[:n])
                assert tuple(getattr(mw, k) for k in METRIC_NAMES) == tuple(values[n:])
                assert (mi.read_hist, mi.write_hist) == (rh, wh)
        for run_id in (1, 2):
            run = get_run(store, run_id, raw_output=True)
            for step in run.steps:
                for r in step.results:
                    values, rh, wh = results[(step.id, r.level, r.manager or "", r.key)]
                    assert tuple(getattr(r.metrics, k) for k in METRIC_NAMES) == tuple(values)
                    assert (r.metrics.read_hist, r.metrics.write_hist) == (rh, wh)
                for manager, out in step.outputs.items():
                    assert out.raw_output == outputs[(step.id, manager)]
        # charts' peaks for every finished step
        assert store.conn.execute("SELECT count(DISTINCT series_id) FROM sample_peaks").fetchone()[0] > 20
    assert path.stat().st_size < len(original) * 0.75
    with open_store(path):  # opening again: nothing left to do
        pass


def _v3_contents(path: Path) -> dict:
    """Every sample row, interval histogram and kept peak of a version 3 file, read with plain SQL."""
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
    out = {
        "samples": conn.execute(
            f"SELECT step_id, level, ifnull(manager, ''), key, t, {', '.join(SAMPLE_VALUE_COLUMNS)} "
            "FROM samples JOIN series ON series.id = series_id ORDER BY series_id, t"
        ).fetchall(),
        "hists": conn.execute("SELECT * FROM sample_hists ORDER BY series_id, t").fetchall(),
        "peaks": conn.execute("SELECT * FROM sample_peaks ORDER BY series_id, bin").fetchall(),
    }
    conn.close()
    return out


def test_a_version_3_database_of_a_real_run_migrates_to_blocks_with_a_backup_and_keeps_every_number(tmp_path):
    path = tmp_path / "results.db"
    shutil.copy(V3_FIXTURE, path)
    before = _v3_contents(path)
    per_series: dict = {}
    for row in before["samples"]:
        per_series.setdefault(row[:4], []).append(row[4:])
    assert max(len(v) for v in per_series.values()) > BLOCK_SAMPLES  # more than one block per series
    with open_store(path) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert _v3_contents(Path(f"{path}.bak-v3")) == before  # the file as it was, kept first
        assert store.conn.execute("SELECT count(*) FROM samples").fetchone()[0] == 0
        assert store.conn.execute("SELECT count(*) FROM sample_blocks").fetchone()[0] > len(per_series)
        n = len(METRIC_NAMES)
        for (step_id, level, manager, key), rows in per_series.items():
            inter = step_samples(store, step_id, level, key, "interval", manager=manager or None)
            whole = step_samples(store, step_id, level, key, "whole", manager=manager or None)
            assert [t for t, _m in inter] == [r[0] for r in rows]
            for row, (_t, mi), (_t2, mw) in zip(rows, inter, whole, strict=True):
                assert tuple(getattr(mi, k) for k in METRIC_NAMES) == row[1 : 1 + n]
                assert tuple(getattr(mw, k) for k in METRIC_NAMES) == row[1 + n :]
        assert store.conn.execute("SELECT * FROM sample_peaks ORDER BY 1, 2").fetchall() == before["peaks"]
        # the interval histograms moved into blocks (version 5), every bucket and count as it was
        assert store.conn.execute("SELECT count(*) FROM sample_hists").fetchone()[0] == 0
        assert store.conn.execute("SELECT count(*) FROM sample_hist_blocks").fetchone()[0] > 0
        want: dict = {}
        for sid, t, read, write in before["hists"]:
            want.setdefault(sid, []).append((t, decode_hist_arrays(read), decode_hist_arrays(write)))
        assert want
        for sid, hists in want.items():
            got = series_hists(store.conn, sid)
            assert [h[0] for h in got] == [h[0] for h in hists]
            for g, w in zip(got, hists, strict=True):
                for (gb, gc), (wb, wc) in zip(g[1:], w[1:], strict=True):
                    assert gb.tolist() == wb.tolist() and gc.tolist() == wc.tolist()
        # the peaks computed from blocks are those version 3 computed in SQL
        steps = [s for (s,) in store.conn.execute("SELECT id FROM steps")]
        for step_id in steps:
            keep_peaks(store.conn, step_id)
        assert store.conn.execute("SELECT * FROM sample_peaks ORDER BY 1, 2").fetchall() == before["peaks"]
    assert path.stat().st_size < V3_FIXTURE.stat().st_size


@pytest.mark.parametrize("levels", [("manager", "all"), ("target", "worker", "manager", "all")])
def test_sharing_respects_the_levels_that_keep_histograms(tmp_path, levels):
    with open_store(tmp_path / "f.db") as store:
        rec, step = _setup(store)
        rec.sample_hist_levels = frozenset(levels)
        for t in (1.0, 2.0):
            rec.add_samples(step, _batch(t))
        assert ("target", "w1t1") in _shared(store)  # target and worker keep the same things either way
        assert step_samples(store, step, "target", "w1t1") == step_samples(store, step, "worker", "w1")


def test_several_seconds_in_one_batch_keep_every_second_when_sharing_stops(tmp_path):
    """The runner hands on the samples of several reports at once when it is behind (one transaction for
    all that waited): a series that shared its parent's numbers for the first seconds of the batch and
    parts from them in a later one keeps those first seconds (the copy included the batch's own rows)."""
    with open_store(tmp_path / "f.db") as store:
        rec, step = _setup(store)
        rec.add_samples(step, _batch(1.0) + _batch(2.0) + _batch(3.0, bump="w1t1"))
        target = step_samples(store, step, "target", "w1t1")
        worker = step_samples(store, step, "worker", "w1")
        assert [t for t, _m in target] == [1.0, 2.0, 3.0]
        assert target[:2] == worker[:2] and target[2][1].read_ios == worker[2][1].read_ios + 1
        assert step_samples(store, step, "all", "ALL") == step_samples(store, step, "manager", "M1")
        assert _shared(store) == {("target", "w2t1"): ("worker", "w2"), ("all", "ALL"): ("manager", "M1")}


def test_an_empty_repeat_of_the_last_report_does_not_replace_its_second(tmp_path):
    """fio's last report repeated as the final one (the session's STOP with nothing new: the same numbers, at
    the last report's t) rolls up to an empty interval: it must not replace the second it repeats, in the
    same batch or a later one (a --servers-aside run at 64 hosts lost a manager's last 2,200 I/Os so)."""
    empty = Metrics(seconds=0.0)
    with open_store(tmp_path / "f.db") as store:
        rec, step = _setup(store)
        rec.add_samples(step, _batch(1.0) + _batch(2.0))
        before = {
            (lv, key): step_samples(store, step, lv, key)
            for lv, key in (("manager", "M1"), ("target", "w1t1"))
        }
        repeat = [SampleRow(r.manager, r.level, r.key, 2.0, empty, r.whole) for r in _batch(2.0)]
        rec.add_samples(step, repeat)  # a later batch
        rec.add_samples(
            step,
            _batch(3.0) + [SampleRow(r.manager, r.level, r.key, 3.0, empty, r.whole) for r in _batch(3.0)],
        )
        for (lv, key), rows in before.items():
            after = step_samples(store, step, lv, key)
            assert after[:2] == rows and [t for t, _m in after] == [1.0, 2.0, 3.0]
            assert all(m.seconds == 1.0 and m.ios > 0 for _t, m in after)
