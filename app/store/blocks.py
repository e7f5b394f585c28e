"""Samples kept as compressed blocks (database version 4): one row per series per ``BLOCK_SAMPLES``
intervals instead of one row per interval.

The recorder writes each interval's samples as rows of ``samples`` (one committed transaction per
interval, so a crash keeps every interval recorded); every ``BLOCK_SAMPLES`` intervals a series' rows
move into one ``sample_blocks`` row (``flush``), and a step's rows all move when it ends (``seal_step``).
Readers see both: a series is its blocks in time order, then its rows not yet in a block
(``series_arrays``, ``series_rows``). A killed recorder leaves its last rows as rows, read as any others.

A block holds the columns ``BLOCK_COLUMNS`` of its samples, column by column, losslessly:

* whole numbers (counters; REAL values that are whole or have a few decimals, such as fio's
  milliseconds as seconds or its two-decimal disk utilisation) as 64-bit integers, scaled by a power
  of ten, each minus the one before where that is smaller (counters that only grow), zigzag-encoded;
* other REAL values as the bits of the 64-bit float XORed with the previous value's;
* NULLs (disk utilisation where fio reports none, the p99 where histograms are not kept) as a bitmap;

then the bytes are shuffled (every column's lowest bytes first, their highest last: mostly zeros) and
zlib-compressed. Each value reads back as SQLite gave it (an int, a float or None), checked when the
block is written: a column that would not read back exactly is kept as float bits.
"""

from __future__ import annotations

import sqlite3
import struct
import zlib
from collections.abc import Iterable, Sequence
from typing import Any, cast

import numpy as np

from .hist_blocks import flush_hists, keep_summaries
from .peaks import PEAK_BIN_S, PEAK_COLUMNS, PEAK_FIELDS, WINDOW_PREFIXES, bin_peaks, field_arrays
from .schema import SAMPLE_VALUE_COLUMNS, V4

BLOCK_COLUMNS: tuple[str, ...] = ("t", *SAMPLE_VALUE_COLUMNS, "i_p99_ns")
BLOCK_SAMPLES = 60  # intervals per block: a minute at fio's usual 1 s interval
_FORMAT = 1  # the first byte of a block
_INT, _INT_DELTA, _FLOAT_XOR = 0, 1, 2  # how a column is stored
_AS_FLOAT = 0x10  # flag: the column reads back as floats (SQLite REAL), else ints
_HEAD = struct.Struct("<IH")  # samples, columns
_COL = struct.Struct("<BBB")  # kind | flags, decimal scale, has NULLs
_MAX_SCALE = 6
_SCALES = np.array([10.0**d for d in range(_MAX_SCALE + 1)])
_EXACT_INT = 2**53


def _matrix(rows: Sequence[Sequence[Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rows as [columns, samples]: (values as float64, 0 where NULL; NULL mask; columns all ints;
    the int columns' exact values as int64)."""
    obj = np.array(rows, dtype=object).T
    nulls = np.equal(obj, cast(Any, None))  # elementwise `is None` over the object array
    if nulls.any():
        obj = obj.copy()
        obj[nulls] = 0
    types = [set(map(type, col)) for col in obj]
    ints = np.array([t == {int} for t in types]) & ~nulls.any(axis=1)
    exact = obj[ints].astype(np.int64) if ints.any() else np.empty((0, obj.shape[1]), np.int64)
    return obj.astype(np.float64), nulls, ints, exact


def _smaller_of_raw_and_delta(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int64 rows -> (uses delta per row, zigzag words): each row raw or each value minus the one
    before, whichever sums smaller (counters that only grow)."""
    delta = np.diff(a, axis=1, prepend=np.zeros((len(a), 1), np.int64))
    with np.errstate(over="ignore"):
        use = np.abs(delta).sum(axis=1, dtype=np.float64) < np.abs(a).sum(axis=1, dtype=np.float64)
    chosen = np.where(use[:, None], delta, a)
    return use, ((chosen << 1) ^ (chosen >> 63)).view(np.uint64)


def encode_block(rows: Sequence[Sequence[Any]]) -> bytes:
    """Rows of ``BLOCK_COLUMNS`` values (t ascending) as one compressed block."""
    n, ncols = len(rows), len(BLOCK_COLUMNS)
    if not n or any(len(r) != ncols for r in rows):
        raise ValueError(f"a block holds one or more rows of {ncols} values")
    f, nulls, ints, exact = _matrix(rows)
    # REAL columns that are whole numbers or have few decimals: the smallest power of ten that makes
    # them whole and reads back exactly (as decode_block divides); else the float's bits
    scale = np.full(ncols, -1)
    floats = ~ints
    with np.errstate(invalid="ignore", over="ignore"):
        fits = floats & np.isfinite(f).all(axis=1) & (np.abs(f) < _EXACT_INT / _SCALES[-1]).all(axis=1)
        fits &= ~(np.signbit(f) & (f == 0)).any(axis=1)  # -0.0 keeps its sign as float bits
        for d in range(_MAX_SCALE + 1):
            todo = fits & (scale < 0)
            if not todo.any():
                break
            whole = np.round(f[todo] * _SCALES[d])
            back = whole / _SCALES[d] if d else whole
            scale[np.flatnonzero(todo)[(back == f[todo]).all(axis=1)]] = d
    scaled = scale >= 0
    as_int = ints | scaled
    i64 = np.empty((ncols, n), np.int64)
    i64[ints] = exact
    if scaled.any():
        i64[scaled] = np.round(f[scaled] * _SCALES[scale[scaled]][:, None]).astype(np.int64)
    words = np.empty((ncols, n), np.uint64)
    use_delta = np.zeros(ncols, bool)
    if as_int.any():
        use_delta[as_int], words[as_int] = _smaller_of_raw_and_delta(i64[as_int])
    bits = ~as_int
    if bits.any():
        u = f[bits].view(np.uint64)
        words[bits] = u ^ np.concatenate((np.zeros((len(u), 1), np.uint64), u[:, :-1]), axis=1)
    kinds = np.where(bits, _FLOAT_XOR, np.where(use_delta, _INT_DELTA, _INT)) | np.where(ints, 0, _AS_FLOAT)
    has_nulls = cast(np.ndarray, nulls.any(axis=1))  # a 2-D mask: an array, never a scalar
    head = [_HEAD.pack(n, ncols)] + [
        _COL.pack(int(k), max(int(d), 0), bool(h)) for k, d, h in zip(kinds, scale, has_nulls, strict=True)
    ]
    masks = [np.packbits(nulls[j]).tobytes() for j in np.flatnonzero(has_nulls)]
    shuffled = words.astype("<u8").view(np.uint8).reshape(ncols, n, 8).transpose(2, 0, 1).tobytes()
    return bytes((_FORMAT,)) + zlib.compress(b"".join(head) + b"".join(masks) + shuffled, 6)


def decode_block(blob: bytes) -> list[np.ndarray]:
    """A block's columns (``BLOCK_COLUMNS`` order): int64 arrays for int columns, float64 for REAL ones
    (NaN where NULL)."""
    if not blob or blob[0] != _FORMAT:
        raise ValueError("not a sample block of a format this Fiometer reads")
    raw = zlib.decompress(blob[1:])
    n, ncols = _HEAD.unpack_from(raw)
    pos = _HEAD.size
    head = np.frombuffer(raw, np.uint8, ncols * _COL.size, pos).reshape(ncols, _COL.size)
    kinds, scales, has_nulls = head[:, 0], head[:, 1], head[:, 2].astype(bool)
    pos += ncols * _COL.size
    mask_len = (n + 7) // 8
    nulls = np.zeros((ncols, n), bool)
    for j in np.flatnonzero(has_nulls):
        nulls[j] = np.unpackbits(np.frombuffer(raw, np.uint8, mask_len, pos), count=n).astype(bool)
        pos += mask_len
    shuffled = np.frombuffer(raw, np.uint8, 8 * ncols * n, pos).reshape(8, ncols, n).transpose(1, 2, 0)
    words = np.ascontiguousarray(shuffled).view("<u8").astype(np.uint64).reshape(ncols, n)
    base = kinds & 0x0F
    bits = base == _FLOAT_XOR
    ints = ((words >> np.uint64(1)).view(np.int64)) ^ -((words & np.uint64(1)).view(np.int64))
    delta = base == _INT_DELTA
    ints[delta] = np.cumsum(ints[delta], axis=1)
    floats = ints.astype(np.float64) / _SCALES[scales][:, None]  # the int columns read back as REAL
    floats[bits] = np.bitwise_xor.accumulate(words[bits], axis=1).view(np.float64)
    floats[nulls] = np.nan
    as_float = (kinds & _AS_FLOAT).astype(bool) | has_nulls
    return [floats[j] if as_float[j] else ints[j] for j in range(ncols)]


# --- reading ------------------------------------------------------------------------------------------
_TAIL_SQL = f"SELECT series_id, {', '.join(BLOCK_COLUMNS)} FROM samples WHERE series_id IN ({{}}) ORDER BY series_id, t"


def _id_list(ids: Iterable[int]) -> str:
    return ", ".join(str(int(i)) for i in ids)


def _tail_rows(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, list[tuple[Any, ...]]]:
    out: dict[int, list[tuple[Any, ...]]] = {}
    for row in conn.execute(_TAIL_SQL.format(_id_list(ids))):
        out.setdefault(row[0], []).append(row[1:])
    return out


def _blocks(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, list[bytes]]:
    out: dict[int, list[bytes]] = {}
    for sid, data in conn.execute(
        f"SELECT series_id, data FROM sample_blocks WHERE series_id IN ({_id_list(ids)}) ORDER BY series_id, t0"
    ):
        out.setdefault(sid, []).append(data)
    return out


def _rows_as_columns(rows: Sequence[Sequence[Any]]) -> list[np.ndarray]:
    """Rows (as SQLite gives them) as block columns, without compressing them."""
    return decode_block(encode_block(rows))


def _last_wins(cols: list[np.ndarray]) -> list[np.ndarray]:
    """A sample written again at the same t (in a later block or row) replaces the earlier one."""
    t = cols[0]
    if len(t) < 2 or (np.diff(t) > 0).all():
        return cols
    rev = t[::-1]
    _u, first = np.unique(rev, return_index=True)  # sorted by t; the last written of each t
    keep = len(t) - 1 - first
    return [c[keep] for c in cols]


def series_arrays(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, list[np.ndarray]]:
    """Every sample of each series (its own id, not a ``same_as``): ``BLOCK_COLUMNS`` arrays by t.
    A series without samples is absent."""
    if not ids:
        return {}
    blocks, tails = _blocks(conn, ids), _tail_rows(conn, ids)
    out = {}
    for sid in ids:
        parts = [decode_block(b) for b in blocks.get(sid, ())]
        if sid in tails:
            parts.append(_rows_as_columns(tails[sid]))
        if not parts:
            continue
        cols = parts[0] if len(parts) == 1 else [np.concatenate(c) for c in zip(*parts, strict=True)]
        out[sid] = _last_wins(cols)
    return out


def series_arrays_between(
    conn: sqlite3.Connection, ids: Sequence[int], lo: float, hi: float
) -> dict[int, list[np.ndarray]]:
    """``series_arrays`` for the samples with lo <= t < hi only: what a reader that goes through a long
    step a stretch at a time holds (the blocks overlapping the stretch, never the whole series)."""
    if not ids:
        return {}
    id_list = _id_list(ids)
    blocks: dict[int, list[bytes]] = {}
    for sid, data in conn.execute(
        f"SELECT series_id, data FROM sample_blocks WHERE series_id IN ({id_list}) AND t1 >= ? AND t0 < ? "
        "ORDER BY series_id, t0",
        (lo, hi),
    ):
        blocks.setdefault(sid, []).append(data)
    tails: dict[int, list[tuple[Any, ...]]] = {}
    for row in conn.execute(
        f"SELECT series_id, {', '.join(BLOCK_COLUMNS)} FROM samples WHERE series_id IN "
        f"({id_list}) AND t >= ? AND t < ? ORDER BY series_id, t",
        (lo, hi),
    ):
        tails.setdefault(row[0], []).append(row[1:])
    out = {}
    for sid in ids:
        parts = [decode_block(b) for b in blocks.get(sid, ())]
        if sid in tails:
            parts.append(_rows_as_columns(tails[sid]))
        if not parts:
            continue
        cols = _last_wins(
            parts[0] if len(parts) == 1 else [np.concatenate(c) for c in zip(*parts, strict=True)]
        )
        inside = (cols[0] >= lo) & (cols[0] < hi)
        if inside.any():
            out[sid] = cols if inside.all() else [c[inside] for c in cols]
    return out


def series_span(conn: sqlite3.Connection, ids: Sequence[int]) -> tuple[float, float] | None:
    """The first and last sample times over these series (own ids), None without samples."""
    if not ids:
        return None
    id_list = _id_list(ids)
    lo, hi = conn.execute(
        f"SELECT min(a), max(b) FROM (SELECT min(t0) AS a, max(t1) AS b FROM sample_blocks WHERE series_id IN "
        f"({id_list}) UNION ALL SELECT min(t), max(t) FROM samples WHERE series_id IN ({id_list}))"
    ).fetchone()
    return None if lo is None else (lo, hi)


def series_rows(conn: sqlite3.Connection, series_id: int) -> list[tuple[Any, ...]]:
    """Every sample of one series as ``BLOCK_COLUMNS`` tuples of Python values (None for NULL), by t."""
    cols = series_arrays(conn, [series_id]).get(series_id)
    return [] if cols is None else columns_as_rows(cols)


def last_t_sql(series: str) -> str:
    """SQL for the last sample time of the series whose own id is the SQL expression ``series``."""
    return (
        f"(SELECT max(t) FROM (SELECT max(t1) AS t FROM sample_blocks WHERE series_id = {series} "
        f"UNION ALL SELECT max(t) FROM samples WHERE series_id = {series}))"
    )


def count_sql(series: str) -> str:
    """SQL for the number of samples of the series whose own id is the SQL expression ``series``."""
    return (
        f"((SELECT ifnull(sum(n), 0) FROM sample_blocks WHERE series_id = {series}) + "
        f"(SELECT count(*) FROM samples WHERE series_id = {series}))"
    )


# --- writing ------------------------------------------------------------------------------------------
def flush(conn: sqlite3.Connection, ids: Iterable[int]) -> None:
    """Move the rows of these series into one block each (inside the caller's transaction). Rows that
    go back before a series' last block are merged with the blocks they overlap."""
    ids = list(ids)
    if not ids:
        return
    tails = _tail_rows(conn, ids)
    blocks = []
    for sid, rows in tails.items():
        start = rows[0][0]
        older = conn.execute(
            "SELECT id, data FROM sample_blocks WHERE series_id = ? AND t1 >= ? ORDER BY t0", (sid, start)
        ).fetchall()
        if older:  # a sample written again: re-block the overlap, the newest value winning
            cols = _last_wins(
                [
                    np.concatenate(c)
                    for c in zip(*[decode_block(d) for _i, d in older], _rows_as_columns(rows), strict=True)
                ]
            )
            rows = columns_as_rows(cols)
            conn.executemany("DELETE FROM sample_blocks WHERE id = ?", [(i,) for i, _d in older])
        blocks.append((sid, rows[0][0], rows[-1][0], len(rows), encode_block(rows)))
    conn.executemany("INSERT INTO sample_blocks (series_id, t0, t1, n, data) VALUES (?, ?, ?, ?, ?)", blocks)
    conn.execute(f"DELETE FROM samples WHERE series_id IN ({_id_list(tails)})")
    flush_hists(conn, ids)


def columns_as_rows(cols: list[np.ndarray]) -> list[tuple[Any, ...]]:
    lists = []
    for c in cols:
        values = c.tolist()
        if c.dtype == np.float64 and np.isnan(c).any():
            values = [None if v != v else v for v in values]
        lists.append(values)
    return list(zip(*lists, strict=True))


def seal_step(conn: sqlite3.Connection, step_id: int) -> None:
    """A step has ended: every row of its series into blocks, and its series' peaks kept."""
    flush(
        conn,
        [
            sid
            for (sid,) in conn.execute(
                "SELECT id FROM series WHERE step_id = ? AND EXISTS (SELECT 1 FROM samples WHERE series_id = series.id)",
                (step_id,),
            )
        ],
    )
    flush_hists(
        conn,
        [
            sid
            for (sid,) in conn.execute(
                "SELECT id FROM series WHERE step_id = ? AND EXISTS (SELECT 1 FROM sample_hists WHERE series_id = series.id)",
                (step_id,),
            )
        ],
    )
    keep_peaks(conn, step_id)
    keep_summaries(conn, step_id)


def keep_peaks(conn: sqlite3.Connection, step_id: int) -> None:
    """Compute (again) the peaks (``peaks``) of a step's series that hold their own samples."""
    own = [
        sid
        for (sid,) in conn.execute("SELECT id FROM series WHERE step_id = ? AND same_as IS NULL", (step_id,))
    ]
    conn.execute(f"DELETE FROM sample_peaks WHERE series_id IN ({', '.join(map(str, own))})")
    rows: list[tuple[Any, ...]] = []
    for sid, arrays in series_arrays(conn, own).items():
        cols = dict(zip(BLOCK_COLUMNS, arrays, strict=True))
        t = cols["t"]
        ys = np.concatenate([field_arrays(cols, p) for p in WINDOW_PREFIXES])
        nf = len(PEAK_FIELDS)
        b, t_lo, t_hi, lo, hi = bin_peaks(t, ys, (t / PEAK_BIN_S).astype(np.int64))
        # PEAK_COLUMNS order: per window, the lows then the highs
        parts = [
            x
            for w in range(len(WINDOW_PREFIXES))
            for x in (lo[w * nf : (w + 1) * nf], hi[w * nf : (w + 1) * nf])
        ]
        values = np.concatenate(parts).T.tolist()
        rows.extend(
            (sid, int(bi), a, z, *v)
            for bi, a, z, v in zip(b.tolist(), t_lo.tolist(), t_hi.tolist(), values, strict=True)
        )
    conn.executemany(
        f"INSERT INTO sample_peaks (series_id, bin, t_lo, t_hi, {', '.join(PEAK_COLUMNS)}) "
        f"VALUES ({', '.join('?' * (4 + len(PEAK_COLUMNS)))})",
        rows,
    )


def migrate_to_v4(conn: sqlite3.Connection) -> None:
    """Version 3 -> 4 inside the caller's transaction: every series' rows into blocks of
    ``BLOCK_SAMPLES`` (a fresh file runs it on empty tables)."""
    for statement in V4:
        conn.execute(statement)
    ids = [sid for (sid,) in conn.execute("SELECT DISTINCT series_id FROM samples")]
    for sid in ids:
        rows = conn.execute(
            f"SELECT {', '.join(BLOCK_COLUMNS)} FROM samples WHERE series_id = ? ORDER BY t", (sid,)
        ).fetchall()
        conn.executemany(
            "INSERT INTO sample_blocks (series_id, t0, t1, n, data) VALUES (?, ?, ?, ?, ?)",
            [
                (sid, part[0][0], part[-1][0], len(part), encode_block(part))
                for part in (rows[i : i + BLOCK_SAMPLES] for i in range(0, len(rows), BLOCK_SAMPLES))
            ],
        )
    conn.execute("DELETE FROM samples")


def copy_samples(conn: sqlite3.Connection, source: int, dest: int) -> None:
    """Give series ``dest`` its own copy of ``source``'s samples (blocks and rows)."""
    conn.execute(
        "INSERT INTO sample_blocks (series_id, t0, t1, n, data) SELECT ?, t0, t1, n, data "
        "FROM sample_blocks WHERE series_id = ?",
        (dest, source),
    )
    cols = ", ".join(BLOCK_COLUMNS)
    conn.execute(
        f"INSERT OR REPLACE INTO samples (series_id, {cols}) SELECT ?, {cols} FROM samples "
        "WHERE series_id = ?",
        (dest, source),
    )
