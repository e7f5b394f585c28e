"""Samples as compressed blocks (database version 4): exact round trips, compactness, the rows of a
running step beside its blocks, a sample written again, and the staggered making of blocks."""

from __future__ import annotations

import random
import sqlite3

import numpy as np
import pytest

from app.store import Recorder, open_store, step_samples
from app.store.blocks import (
    BLOCK_COLUMNS,
    BLOCK_SAMPLES,
    decode_block,
    encode_block,
    series_arrays,
    series_rows,
)
from app.store.schema import SAMPLE_VALUE_COLUMNS
from tests.unit.store_support import begin_run, begin_step, interval, level_keys

NCOLS = len(BLOCK_COLUMNS)


def _realistic_rows(n: int, seed: int = 5) -> list[tuple]:
    """Rows shaped like fio's numbers: counters, their running totals, ms-resolution seconds, noisy rates
    and latency sums, two-decimal disk utilisation, NULLs where fio reports none."""
    rng = random.Random(seed)
    rows, total = [], 0
    for i in range(n):
        ms = rng.randint(995, 1006)
        ios = rng.randint(3000, 5000)
        total += ios
        row = [1.0 + i + rng.random() / 100, ms / 1000]
        row += [
            ios,
            ios * 4096,
            ios * 1000 / ms,
            rng.uniform(1e5, 9e5) * ios,
            float(rng.randint(10**5, 10**7)),
            round(rng.uniform(60, 100), 2) if i % 7 else None,
        ]
        row += [
            total,
            total * 4096,
            total * 1000 / (ms * (i + 1)),
            rng.uniform(1e5, 9e5) * total,
            2**60 + i,
            None,
        ]
        row.append(float(rng.choice([123456, 234567])) if i % 3 else None)
        rows.append(tuple(row))
    return rows


def _as_block_columns(rows: list[tuple]) -> list[tuple]:
    """Spread the realistic fields over every block column (cycling through them)."""
    width = len(rows[0])
    return [tuple(r[j % width] if j else r[0] for j in range(NCOLS)) for r in rows]


def _same(a, b) -> bool:
    return all(type(x) is type(y) and (x == y or (x != x and y != y)) for x, y in zip(a, b, strict=True))


def test_a_block_reads_back_every_value_exactly_as_sqlite_gave_it():
    rows = _as_block_columns(_realistic_rows(BLOCK_SAMPLES))
    cols = decode_block(encode_block(rows))
    back = list(
        zip(
            *[[None if (isinstance(v, float) and v != v) else v for v in c.tolist()] for c in cols],
            strict=True,
        )
    )
    for want, got in zip(rows, back, strict=True):
        assert _same(want, got), (want, got)


@pytest.mark.parametrize(
    "values",
    [
        [0.0, -0.0, 1.5],  # the sign of zero
        [float("inf"), 1.0, 2.0],
        [1, 2.5, 3],  # an INTEGER column holding a REAL (SQLite keeps it): reads back as floats, equal
        [2**63 - 1, -(2**63), 0],  # the ends of SQLite's integers
        [0.1 + 0.2, 1e-300, 1e300],
        [None, None, None],
    ],
)
def test_edge_values_round_trip(values):
    rows = [tuple([float(i)] + [v] * (NCOLS - 1)) for i, v in enumerate(values)]
    got = [c.tolist() for c in decode_block(encode_block(rows))][1]
    for want, have in zip(values, got, strict=True):
        if want is None:
            assert have != have  # NaN marks NULL
        else:
            assert have == want and (str(have) == str(want) or isinstance(want, int) != isinstance(have, int))


def test_blocks_are_several_times_smaller_than_rows():
    rows = _as_block_columns(_realistic_rows(BLOCK_SAMPLES))
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(f"CREATE TABLE r ({', '.join(BLOCK_COLUMNS)})")
        conn.executemany(f"INSERT INTO r VALUES ({', '.join('?' * NCOLS)})", rows)
        as_rows = sum(
            conn.execute(f"SELECT sum(length(CAST({c} AS BLOB))) FROM r").fetchone()[0] or 0
            for c in BLOCK_COLUMNS
        )  # a lower bound of what rows take: the values alone
    finally:
        conn.close()
    assert len(encode_block(rows)) < as_rows / 1.5


def _record(store, intervals: int, rec: Recorder | None = None) -> tuple[Recorder, int]:
    rec = rec or Recorder(store)
    run_id = begin_run(rec)
    step_id = begin_step(rec, run_id, 0)
    rng = random.Random(11)
    for i in range(intervals):
        rec.add_samples(step_id, interval(rng, i + 1.0))
    return rec, step_id


def test_a_running_step_reads_its_blocks_then_its_rows_and_ending_it_seals_them(tmp_path):
    with open_store(tmp_path / "f.db") as store:
        rec, step_id = _record(store, 2 * BLOCK_SAMPLES + 7)
        count = {
            t: store.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("samples", "sample_blocks")
        }
        assert count["samples"] > 0 and count["sample_blocks"] > 0
        # staggered: the series did not all make a block at the same interval
        firsts = {n for (n,) in store.conn.execute("SELECT min(n) FROM sample_blocks GROUP BY series_id")}
        assert len(firsts) > 1
        running = {k: step_samples(store, step_id, k[1], k[2], manager=k[0]) for k in level_keys()}
        assert all(
            [t for t, _m in v] == [i + 1.0 for i in range(2 * BLOCK_SAMPLES + 7)] for v in running.values()
        )
        rec.end_step(step_id)
        assert store.conn.execute("SELECT count(*) FROM samples").fetchone()[0] == 0
        assert {k: step_samples(store, step_id, k[1], k[2], manager=k[0]) for k in level_keys()} == running


def test_a_sample_written_again_replaces_the_one_already_in_a_block(tmp_path):
    with open_store(tmp_path / "f.db") as store:
        rec, step_id = _record(store, BLOCK_SAMPLES + 3)
        rng = random.Random(99)
        again = interval(rng, 2.0)  # t = 2 again, with other numbers: long since in a block
        rec.add_samples(step_id, again)
        rec.end_step(step_id)
        for row in again:
            got = dict(step_samples(store, step_id, row.level, row.key, manager=row.manager))
            assert len(got) == BLOCK_SAMPLES + 3 and got[2.0].iops == row.interval.iops
        (sid,) = store.conn.execute("SELECT id FROM series WHERE level = 'all'").fetchone()
        t = series_arrays(store.conn, [sid])[sid][0]
        assert (np.diff(t) > 0).all()
        assert [r[0] for r in series_rows(store.conn, sid)] == t.tolist()


def test_block_columns_are_the_samples_columns():
    assert ("t", *SAMPLE_VALUE_COLUMNS, "i_p99_ns") == BLOCK_COLUMNS
