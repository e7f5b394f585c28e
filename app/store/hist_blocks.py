"""The interval latency histograms kept with the samples (managers' and ALL's by default), as compressed
blocks of a minute per series (database version 5): one ``sample_hist_blocks`` row per series per
``BLOCK_SAMPLES`` intervals instead of one ``sample_hists`` row per interval.

A histogram is fio's log-linear buckets with their counts, about 400 buckets per direction for a
typical workload; the counts themselves are the bulk, and one interval's alone compresses poorly. A
block puts a minute of one series' histograms side by side over the union of their buckets: per bucket
and direction a column of (count + 1, 0 where the bucket is absent: a stored zero count stays a zero
count), minus the column's median (a bucket's count varies little from second to second), zigzag-
encoded in the narrowest integer that holds them, bytes shuffled, zlib-compressed. Exact: every bucket
and count reads back as written (checked when the block is written). About 2.5x smaller than the rows.

As with sample blocks, the recorder writes each interval's histograms as ``sample_hists`` rows (a
crash keeps them) and moves them into a block when it moves the series' samples (``blocks.flush``);
readers see both, a row replacing a block's histogram at the same t. When a step ends, each series'
histograms summed over bins of ``SUMMARY_BIN_S`` are kept too (``keep_summaries``): a heat map over
hours (a column per tens of seconds) reads those instead of every interval.
"""

from __future__ import annotations

import sqlite3
import struct
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .codec import decode_hist_arrays

Sparse = tuple[np.ndarray, np.ndarray]  # (bucket values ns ascending, counts), int64; both empty: NULL
TimedHists = tuple[float, Sparse, Sparse]  # (t, read, write)

CREATE = (
    """CREATE TABLE sample_hist_blocks (
    id        INTEGER PRIMARY KEY,
    series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
    t0        REAL NOT NULL,                    -- the block's first and last interval times
    t1        REAL NOT NULL,
    n         INTEGER NOT NULL,                 -- intervals in the block
    data      BLOB NOT NULL                     -- hist_blocks.encode_hist_block
)""",
    "CREATE INDEX sample_hist_blocks_series ON sample_hist_blocks(series_id, t0, t1)",
    # per series, its histograms summed over bins of bin_s seconds (kept when the step ends), so a view
    # of a long run's every step reads a few rows per step instead of every interval
    """CREATE TABLE sample_hist_summaries (
    series_id INTEGER PRIMARY KEY REFERENCES series(id) ON DELETE CASCADE,
    bin_s     REAL NOT NULL,
    data      BLOB NOT NULL                     -- encode_hist_block: per bin, the mean t and the sums
)""",
)
SUMMARY_BIN_S = 10.0
BLOCK_SAMPLES = 60  # intervals per block on migration (the recorder makes them with the samples' blocks)
_FORMAT = 1
_HEAD = struct.Struct("<IIB")  # intervals, buckets in the union, bytes per residual
_WIDTHS = {1: "<u1", 2: "<u2", 4: "<u4", 8: "<u8"}
_EMPTY: Sparse = (np.empty(0, np.int64), np.empty(0, np.int64))


def encode_hist_block(rows: Sequence[TimedHists]) -> bytes:
    """Histograms by ascending t as one block."""
    n = len(rows)
    if not n:
        raise ValueError("a histogram block holds one interval or more")
    union = np.unique(np.concatenate([h[0] for _t, r, w in rows for h in (r, w)] or [np.empty(0, np.int64)]))
    nu = len(union)
    m = np.zeros((n, 2 * nu), np.int64)
    for i, (_t, read, write) in enumerate(rows):
        for side, (buckets, counts) in enumerate((read, write)):
            if len(buckets):
                if counts.min() < 0 or buckets.min() < 0:
                    raise ValueError("a latency histogram holds negative buckets or counts")
                m[i, side * nu + np.searchsorted(union, buckets)] = counts + 1
    median = np.median(m, axis=0).astype(np.int64) if n else np.zeros(2 * nu, np.int64)
    r = m - median[None, :]
    z = ((r << 1) ^ (r >> 63)).view(np.uint64)
    top = int(z.max()) if z.size else 0
    width = next(w for w in (1, 2, 4, 8) if top < 1 << (8 * w))
    cols = np.ascontiguousarray(z.T).astype(_WIDTHS[width])  # [bucket column, interval]
    shuffled = cols.view(np.uint8).reshape(2 * nu, n, width).transpose(2, 0, 1).tobytes()
    t = np.array([row[0] for row in rows], dtype="<f8")
    deltas = np.diff(union, prepend=0).astype("<u8")
    body = (
        _HEAD.pack(n, nu, width) + t.tobytes() + deltas.tobytes() + median.astype("<u8").tobytes() + shuffled
    )
    blob = bytes((_FORMAT,)) + zlib.compress(body, 9)
    back = decode_hist_block(blob)
    if any(
        bt != t0 or not _same(a, b) or not _same(c, d)
        for (bt, a, c), (t0, b, d) in zip(back, rows, strict=True)
    ):
        raise AssertionError(
            "a histogram block would not read back as written"
        )  # pragma: no cover - a tripwire
    return blob


def _same(a: Sparse, b: Sparse) -> bool:
    return np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def decode_hist_block(blob: bytes) -> list[TimedHists]:
    if not blob or blob[0] != _FORMAT:
        raise ValueError("not a histogram block of a format this Fiometer reads")
    raw = zlib.decompress(blob[1:])
    n, nu, width = _HEAD.unpack_from(raw)
    pos = _HEAD.size
    t = np.frombuffer(raw, "<f8", n, pos)
    pos += 8 * n
    union = np.cumsum(np.frombuffer(raw, "<u8", nu, pos).astype(np.int64))
    pos += 8 * nu
    median = np.frombuffer(raw, "<u8", 2 * nu, pos).astype(np.int64)
    pos += 16 * nu
    b = np.frombuffer(raw, np.uint8, width * 2 * nu * n, pos).reshape(width, 2 * nu, n).transpose(1, 2, 0)
    z = np.ascontiguousarray(b).view(_WIDTHS[width]).reshape(2 * nu, n).astype(np.uint64).T
    r = (z >> np.uint64(1)).view(np.int64) ^ -(z & np.uint64(1)).view(np.int64)
    m = r + median[None, :]
    out: list[TimedHists] = []
    for i in range(n):
        sides = []
        for side in (0, 1):
            row = m[i, side * nu : (side + 1) * nu]
            used = row.nonzero()[0]
            sides.append((union[used], row[used] - 1) if len(used) else _EMPTY)
        out.append((float(t[i]), sides[0], sides[1]))
    return out


def _id_list(ids: Iterable[int]) -> str:
    return ", ".join(str(int(i)) for i in ids)


def _decoded_row(t: float, read: bytes | str | None, write: bytes | str | None) -> TimedHists:
    return t, decode_hist_arrays(read), decode_hist_arrays(write)


def series_hists(conn: sqlite3.Connection, series_id: int) -> list[TimedHists]:
    """Every interval histogram kept for one series (its own id), by t: blocks, then rows (a row
    replaces a block's interval at the same t)."""
    by_t: dict[float, TimedHists] = {}
    for (data,) in conn.execute(
        "SELECT data FROM sample_hist_blocks WHERE series_id = ? ORDER BY t0, id", (series_id,)
    ):
        for h in decode_hist_block(data):
            by_t[h[0]] = h
    for t, read, write in conn.execute(
        "SELECT t, read_hist, write_hist FROM sample_hists WHERE series_id = ?", (series_id,)
    ):
        by_t[t] = _decoded_row(t, read, write)
    return [by_t[t] for t in sorted(by_t)]


def flush_hists(conn: sqlite3.Connection, ids: Iterable[int]) -> None:
    """Move these series' histogram rows into one block each (inside the caller's transaction), merged
    with the blocks they overlap (a second written again: the row wins)."""
    ids = list(ids)
    if not ids:
        return
    rows: dict[int, list[tuple[Any, ...]]] = {}
    for sid, t, read, write in conn.execute(
        f"SELECT series_id, t, read_hist, write_hist FROM sample_hists WHERE series_id IN ({_id_list(ids)}) "
        "ORDER BY series_id, t"
    ):
        rows.setdefault(sid, []).append((t, read, write))
    blocks = []
    for sid, mine in rows.items():
        hists = {t: _decoded_row(t, r, w) for t, r, w in mine}
        older = conn.execute(
            "SELECT id, data FROM sample_hist_blocks WHERE series_id = ? AND t1 >= ? ORDER BY t0, id",
            (sid, mine[0][0]),
        ).fetchall()
        if older:
            merged = {h[0]: h for _i, d in older for h in decode_hist_block(d)}
            merged.update(hists)
            hists = merged
            conn.executemany("DELETE FROM sample_hist_blocks WHERE id = ?", [(i,) for i, _d in older])
        ordered = [hists[t] for t in sorted(hists)]
        blocks.append((sid, ordered[0][0], ordered[-1][0], len(ordered), encode_hist_block(ordered)))
    conn.executemany(
        "INSERT INTO sample_hist_blocks (series_id, t0, t1, n, data) VALUES (?, ?, ?, ?, ?)", blocks
    )
    conn.execute(f"DELETE FROM sample_hists WHERE series_id IN ({_id_list(rows)})")


def _summed(parts: list[Sparse]) -> Sparse:
    parts = [p for p in parts if len(p[0])]
    if not parts:
        return _EMPTY
    buckets, where = np.unique(np.concatenate([p[0] for p in parts]), return_inverse=True)
    counts = np.zeros(len(buckets), np.int64)
    np.add.at(counts, where, np.concatenate([p[1] for p in parts]))
    return buckets, counts


def summarise(hists: Sequence[TimedHists], bin_s: float = SUMMARY_BIN_S) -> list[TimedHists]:
    """Histograms summed per bin of ``bin_s`` seconds (by t // bin_s): per bin, its intervals' mean t
    and the sums of their reads and writes (exact integer sums)."""
    bins: dict[int, list[TimedHists]] = {}
    for h in hists:
        bins.setdefault(int(h[0] // bin_s), []).append(h)
    return [
        (float(np.mean([h[0] for h in part])), _summed([h[1] for h in part]), _summed([h[2] for h in part]))
        for _b, part in sorted(bins.items())
    ]


def keep_summaries(conn: sqlite3.Connection, step_id: int) -> None:
    """A step has ended: (again) the binned sums of its series' histograms."""
    ids = [
        sid
        for (sid,) in conn.execute(
            "SELECT id FROM series WHERE step_id = ? AND same_as IS NULL AND EXISTS "
            "(SELECT 1 FROM sample_hist_blocks WHERE series_id = series.id)",
            (step_id,),
        )
    ]
    for sid in ids:
        rows = summarise(series_hists(conn, sid))
        conn.execute(
            "INSERT OR REPLACE INTO sample_hist_summaries (series_id, bin_s, data) VALUES (?, ?, ?)",
            (sid, SUMMARY_BIN_S, encode_hist_block(rows)),
        )


def summaries(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[float, list[TimedHists]]]:
    """The kept summaries of these series (own ids): id -> (bin seconds, bins); series without one absent
    (a run recorded before they were kept, or a step still running)."""
    if not ids:
        return {}
    return {
        sid: (bin_s, decode_hist_block(data))
        for sid, bin_s, data in conn.execute(
            f"SELECT series_id, bin_s, data FROM sample_hist_summaries WHERE series_id IN ({_id_list(ids)})"
        )
    }


def copy_hists(conn: sqlite3.Connection, source: int, dest: int) -> None:
    """Give series ``dest`` its own copy of ``source``'s histograms (blocks and rows)."""
    conn.execute(
        "INSERT INTO sample_hist_blocks (series_id, t0, t1, n, data) SELECT ?, t0, t1, n, data "
        "FROM sample_hist_blocks WHERE series_id = ?",
        (dest, source),
    )
    conn.execute(
        "INSERT OR REPLACE INTO sample_hists (series_id, t, read_hist, write_hist) "
        "SELECT ?, t, read_hist, write_hist FROM sample_hists WHERE series_id = ?",
        (dest, source),
    )


def migrate_to_v5(conn: sqlite3.Connection) -> None:
    """Version 4 -> 5 inside the caller's transaction: every series' histogram rows into blocks of
    ``BLOCK_SAMPLES`` intervals, and each step's summaries kept."""
    for statement in CREATE:
        conn.execute(statement)
    ids = [sid for (sid,) in conn.execute("SELECT DISTINCT series_id FROM sample_hists")]
    for sid in ids:
        rows = [
            _decoded_row(*r)
            for r in conn.execute(
                "SELECT t, read_hist, write_hist FROM sample_hists WHERE series_id = ? ORDER BY t", (sid,)
            )
        ]
        conn.executemany(
            "INSERT INTO sample_hist_blocks (series_id, t0, t1, n, data) VALUES (?, ?, ?, ?, ?)",
            [
                (sid, part[0][0], part[-1][0], len(part), encode_hist_block(part))
                for part in (rows[i : i + BLOCK_SAMPLES] for i in range(0, len(rows), BLOCK_SAMPLES))
            ],
        )
    conn.execute("DELETE FROM sample_hists")
    for (step_id,) in conn.execute(
        "SELECT DISTINCT step_id FROM series WHERE id IN (SELECT series_id FROM sample_hist_blocks)"
    ).fetchall():
        keep_summaries(conn, step_id)  # a step still running gets them again when it ends
