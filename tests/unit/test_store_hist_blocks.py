"""Interval histograms as compressed blocks (database version 5): every bucket and count of every
stored second reads back as recorded (blocks, rows not yet in a block, a second written again, a
series that stops sharing its parent's), smaller than the rows, and a version 4 file migrates."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from app.model.metrics import Metrics
from app.store import ManagerInfo, Recorder, SampleRow, TargetInfo, WorkerInfo, open_store
from app.store.codec import encode_hist
from app.store.hist_blocks import (
    SUMMARY_BIN_S,
    decode_hist_block,
    encode_hist_block,
    migrate_to_v5,
    series_hists,
    summaries,
)
from app.store.queries import step_samples


def hist(rng: np.random.Generator, n: int) -> dict[int, int]:
    """fio-like buckets (log-linear, ns) with lognormal counts; a zero count now and then."""
    lat = rng.lognormal(11.5, 0.6, n).astype(np.int64)
    buckets = np.exp2(np.floor(np.log2(lat + 1)) - 6) * np.floor(
        lat / np.exp2(np.floor(np.log2(lat + 1)) - 6)
    )
    values, counts = np.unique(buckets.astype(np.int64), return_counts=True)
    out = dict(zip(values.tolist(), counts.tolist(), strict=True))
    if len(out) > 3 and rng.random() < 0.2:
        out[int(values[1])] = 0
    return out


def sparse(h: dict[int, int]):
    b = np.array(sorted(h), dtype=np.int64)
    return b, np.array([h[k] for k in b.tolist()], dtype=np.int64)


def test_a_block_reads_back_every_bucket_and_count_and_is_smaller_than_the_rows():
    rng = np.random.default_rng(3)
    rows, row_bytes = [], 0
    for i in range(60):
        read = hist(rng, 20_000) if i != 7 else {}  # a second without reads
        write = hist(rng, 5_000) if i % 9 else {}
        write = {**write, 2**40 + i: 2**33} if i == 11 else write  # a count over 32 bits
        rows.append((float(i + 1) + (0.25 if i == 59 else 0), sparse(read), sparse(write)))
        row_bytes += len(encode_hist(read) or b"") + len(encode_hist(write) or b"") + 16
    blob = encode_hist_block(rows)
    back = decode_hist_block(blob)
    assert [t for t, _r, _w in back] == [t for t, _r, _w in rows]
    for (_t, r, w), (_t2, r2, w2) in zip(back, rows, strict=True):
        assert r[0].tolist() == r2[0].tolist() and r[1].tolist() == r2[1].tolist()
        assert w[0].tolist() == w2[0].tolist() and w[1].tolist() == w2[1].tolist()
    assert len(blob) < row_bytes / 1.5, (len(blob), row_bytes)


def test_negative_counts_are_refused():
    with pytest.raises(ValueError, match="negative"):
        encode_hist_block(
            [(1.0, (np.array([5]), np.array([-1])), (np.empty(0, np.int64), np.empty(0, np.int64)))]
        )


def _metrics(h_read: dict[int, int], h_write: dict[int, int], salt: int) -> Metrics:
    n_r, n_w = sum(h_read.values()), sum(h_write.values())
    return Metrics(
        seconds=1.0,
        read_ios=n_r,
        write_ios=n_w + salt,
        read_lat_n=n_r,
        write_lat_n=n_w,
        read_lat_sum_ns=n_r * 90_000,
        write_lat_sum_ns=n_w * 120_000,
        read_hist=h_read,
        write_hist=h_write,
    )


def test_every_recorded_second_keeps_its_histograms(tmp_path):
    """Two managers over 150 s (blocks of a minute, then rows while the step runs, then all blocks once
    it ends); second 30 of M1 written again after its block was made; ALL shares nothing, M2's worker
    keeps no histograms (workers' are not kept by default)."""
    rng = np.random.default_rng(5)
    store = open_store(tmp_path / "h.db")
    rec = Recorder(store)
    run = rec.begin_run({}, plan_name="p", name="hists")
    rec.add_managers(run, [ManagerInfo("M1"), ManagerInfo("M2")])
    rec.add_workers(run, [WorkerInfo("M1", "w1", "W"), WorkerInfo("M2", "w1", "W")])
    rec.add_targets(
        run, [TargetInfo("M1", "w1", "w1t1", "T", "/a"), TargetInfo("M2", "w1", "w1t1", "T", "/b")]
    )
    step = rec.begin_step(
        run, 0, spec_name="s", queue_depth=1, active_workers=[], active_targets=[], run_s=150
    )
    want: dict[tuple[str, float], tuple[dict, dict]] = {}
    for s in range(1, 151):
        t = float(s)
        rows = []
        for mgr in ("M1", "M2"):
            r, w = hist(rng, 3000), hist(rng, 800) if s % 4 else {}
            m = _metrics(r, w, 0)
            want[(mgr, t)] = (r, w)
            rows += [SampleRow(mgr, "manager", mgr, t, m, m), SampleRow(mgr, "worker", "w1", t, m, m)]
        r, w = hist(rng, 6000), hist(rng, 1600)
        want[("ALL", t)] = (r, w)
        rows.append(SampleRow(None, "all", "ALL", t, _metrics(r, w, 1), _metrics(r, w, 1)))
        rec.add_samples(step, rows)
        if s == 100:
            r, w = hist(rng, 3100), {}
            want[("M1", 30.0)] = (r, w)
            rec.add_samples(
                step, [SampleRow("M1", "manager", "M1", 30.0, _metrics(r, w, 0), _metrics(r, w, 0))]
            )

    def check():
        for level, key, mgr in (("manager", "M1", "M1"), ("manager", "M2", "M2"), ("all", "ALL", None)):
            got = step_samples(store, step, level, key, manager=mgr)
            assert len(got) == 150
            for t, m in got:
                assert (m.read_hist, m.write_hist) == want[(key, t)], (key, t)

    assert store.conn.execute("SELECT count(*) FROM sample_hist_blocks").fetchone()[0] > 0
    assert store.conn.execute("SELECT count(*) FROM sample_hists").fetchone()[0] > 0
    check()
    rec.end_step(step, "complete")
    assert store.conn.execute("SELECT count(*) FROM sample_hists").fetchone()[0] == 0
    check()
    store.close()


def test_a_version_4_file_migrates_its_histogram_rows(tmp_path):
    conn = sqlite3.connect(tmp_path / "v4.db")
    conn.execute("CREATE TABLE series (id INTEGER PRIMARY KEY, step_id INTEGER, same_as INTEGER)")
    conn.execute(
        "CREATE TABLE sample_hists (series_id INTEGER, t REAL, read_hist BLOB, write_hist BLOB, "
        "PRIMARY KEY (series_id, t))"
    )
    rng = np.random.default_rng(9)
    want = {}
    for sid in (1, 2):
        conn.execute("INSERT INTO series VALUES (?, 1, NULL)", (sid,))
        for s in range(1, 131):
            r, w = hist(rng, 2000), (hist(rng, 500) if sid == 1 else {})
            want[(sid, float(s))] = (r, w)
            conn.execute(
                "INSERT INTO sample_hists VALUES (?, ?, ?, ?)",
                (sid, float(s), encode_hist(r), encode_hist(w)),
            )
    with conn:
        migrate_to_v5(conn)
    assert conn.execute("SELECT count(*) FROM sample_hists").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM sample_hist_blocks").fetchone()[0] == 6  # 60 + 60 + 10, twice
    for sid in (1, 2):
        got = series_hists(conn, sid)
        assert len(got) == 130
        for t, (rb, rc), (wb, wc) in got:
            r, w = want[(sid, t)]
            assert dict(zip(rb.tolist(), rc.tolist(), strict=True)) == r
            assert dict(zip(wb.tolist(), wc.tolist(), strict=True)) == w
    # each series' summary: its histograms summed per 10 s, exactly
    kept = summaries(conn, [1, 2])
    for sid in (1, 2):
        bin_s, bins = kept[sid]
        assert bin_s == SUMMARY_BIN_S and len(bins) == 14  # 1-9, 10-19, ..., 130
        for t, (rb, rc), (_wb, _wc) in bins:
            lo = int(t // bin_s) * bin_s
            want_r: dict[int, int] = {}
            for s in range(int(max(1, lo)), int(min(130, lo + bin_s - 1)) + 1):
                for b, c in want[(sid, float(s))][0].items():
                    want_r[b] = want_r.get(b, 0) + c
            assert dict(zip(rb.tolist(), rc.tolist(), strict=True)) == want_r
    conn.close()
