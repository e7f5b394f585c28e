"""Parse a TS payload (``struct cmd_ts_pdu`` plus optional appended records) into Python objects.

Which bytes mean what comes from :mod:`.layouts`; this module only reads them. Histograms are
kept sparse (non-zero bins only) because a TS carries ten 1856-bin rows and most bins are empty.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import cache
from itertools import compress
from typing import Any

from .layouts import (
    CLAT_PRIO_STAT_SIZE,
    DDIR_RWDIR_CNT,
    FIO_LAT_CNT,
    KIND_FORMAT,
    PLAT_NR,
    Layout,
)
from .statmath import EMPTY_HIST, Histogram, IoStat

ULONG_MAX = (1 << 64) - 1
FIO_SLAT, FIO_CLAT, FIO_LAT = 0, 1, 2
# ss_state bits (fio's steadystate.h; LAT exists from fio 3.42)
FIO_SS_IOPS, FIO_SS_BW, FIO_SS_SLOPE, FIO_SS_ATTAINED = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FIO_SS_RAMP_OVER, FIO_SS_DATA, FIO_SS_PCT, FIO_SS_BUFFER_FULL, FIO_SS_LAT = (
    1 << 4,
    1 << 5,
    1 << 6,
    1 << 7,
    1 << 8,
)
_ROW_BYTES = PLAT_NR * 8
_IO_STAT = struct.Struct("<QQQd8xd8x")


class DecodeError(ValueError):
    """A TS (or other stats) payload does not fit the layout of the server's protocol version."""


@dataclass(slots=True)
class ClatPrio:
    ioprio: int
    clat_stat: IoStat
    plat: Histogram


@dataclass(slots=True)
class GroupRunStats:
    max_run: list[int]
    min_run: list[int]
    max_bw: list[int]
    min_bw: list[int]
    iobytes: list[int]
    agg: list[int]
    kb_base: int = 0
    unit_base: int = 0
    sig_figs: int = 0
    groupid: int = 0
    unified_rw_rep: int = 0


def _zeros(n: int = DDIR_RWDIR_CNT) -> list[int]:
    return [0] * n


def _stats(min_val: int = 0) -> list[IoStat]:
    return [IoStat(min_val=min_val) for _ in range(DDIR_RWDIR_CNT)]


@dataclass(slots=True)
class ThreadStat:
    """The fields of fio's ``struct thread_stat`` that its JSON output uses."""

    name: str = ""
    verror: str = ""
    description: str = ""
    error: int = 0
    thread_number: int = 0
    groupid: int = 0
    job_start: int = 0
    pid: int = 0
    members: int = 0
    unified_rw_rep: int = 0
    disable_prio_stat: int = 0
    ioprio: int = 0
    sync_stat: IoStat = field(default_factory=IoStat)
    clat_stat: list[IoStat] = field(default_factory=_stats)
    slat_stat: list[IoStat] = field(default_factory=_stats)
    lat_stat: list[IoStat] = field(default_factory=_stats)
    bw_stat: list[IoStat] = field(default_factory=_stats)
    iops_stat: list[IoStat] = field(default_factory=_stats)
    usr_time: int = 0
    sys_time: int = 0
    ctx: int = 0
    minf: int = 0
    majf: int = 0
    clat_percentiles: int = 0
    lat_percentiles: int = 0
    slat_percentiles: int = 0
    percentile_precision: int = 0
    percentile_list: tuple[float, ...] = ()  # up to the first 0.0, sorted
    io_u_map: list[int] = field(default_factory=lambda: _zeros(7))
    io_u_submit: list[int] = field(default_factory=lambda: _zeros(7))
    io_u_complete: list[int] = field(default_factory=lambda: _zeros(7))
    io_u_lat_n: list[int] = field(default_factory=lambda: _zeros(10))
    io_u_lat_u: list[int] = field(default_factory=lambda: _zeros(10))
    io_u_lat_m: list[int] = field(default_factory=lambda: _zeros(12))
    plat: list[list[Histogram]] = field(default_factory=lambda: [[EMPTY_HIST] * 3 for _ in range(3)])
    sync_plat: Histogram = EMPTY_HIST
    total_io_u: list[int] = field(default_factory=lambda: _zeros(4))
    short_io_u: list[int] = field(default_factory=_zeros)
    drop_io_u: list[int] = field(default_factory=_zeros)
    total_submit: int = 0
    total_complete: int = 0
    io_bytes: list[int] = field(default_factory=_zeros)
    runtime: list[int] = field(default_factory=_zeros)
    total_run_time: int = 0
    continue_on_error: int = 0
    first_error: int = 0
    total_err_count: int = 0
    nr_zone_resets: int = 0
    count_zone_resets: int = 0
    block_infos: list[int] = field(default_factory=list)
    kb_base: int = 0
    unit_base: int = 0
    latency_depth: int = 0
    latency_target: int = 0
    latency_percentile: float = 0.0
    latency_window: int = 0
    sig_figs: int = 0
    ss_dur: int = 0
    ss_state: int = 0
    ss_head: int = 0
    ss_limit: float = 0.0
    ss_slope: float = 0.0
    ss_deviation: float = 0.0
    ss_criterion: float = 0.0
    ss_iops_data: list[int] = field(default_factory=list)
    ss_bw_data: list[int] = field(default_factory=list)
    ss_lat_data: list[int] = field(default_factory=list)
    clat_prio: list[list[ClatPrio] | None] = field(default_factory=lambda: [None, None, None])
    nr_block_infos: int = 0
    nr_clat_prio: list[int] = field(default_factory=_zeros)
    clat_prio_offset: list[int] = field(default_factory=_zeros)
    ss_iops_data_offset: int = 0
    ss_bw_data_offset: int = 0
    ss_lat_data_offset: int = 0
    cachehit: int = 0
    cachemiss: int = 0


_BULK = ("io_u_plat", "io_u_sync_plat", "block_infos")  # read separately (sparse / on demand)
_SKIP = ("pad", "pad2", "pad3")
_ARRAYS = frozenset(
    (
        "io_u_map",
        "io_u_submit",
        "io_u_complete",
        "io_u_lat_n",
        "io_u_lat_u",
        "io_u_lat_m",
        "total_io_u",
        "short_io_u",
        "drop_io_u",
        "io_bytes",
        "runtime",
        "clat_prio_offset",
        "nr_clat_prio",
    )
)
_GS_ARRAYS = ("max_run", "min_run", "max_bw", "min_bw", "iobytes", "agg")


@dataclass(frozen=True)
class _Plan:
    """One struct.Struct that reads every small field of a TS payload in a single call."""

    reader: struct.Struct
    ts_fields: tuple[tuple[str, str, int, int], ...]  # name, kind, count, index of the first value
    gs_fields: tuple[tuple[str, int, int], ...]  # name, count, index


def _field_format(kind: str, count: int) -> tuple[str, int]:
    """struct format and number of unpacked values for one field."""
    if kind == "char":
        return f"{count}s", 1
    fmt = KIND_FORMAT[kind]
    if len(fmt) == 1:
        return f"{count}{fmt}", count
    return fmt * count, (5 if kind == "io_stat" else 1) * count


@cache
def _plan(layout: Layout) -> _Plan:
    fmt = ["<"]
    cursor = 0
    index = 0
    ts_fields: list[tuple[str, str, int, int]] = []
    gs_fields: list[tuple[str, int, int]] = []
    slots = [(n, sl, False) for n, sl in layout.ts.items()] + [(n, sl, True) for n, sl in layout.gs.items()]
    for name, slot, is_gs in slots:
        if name in _BULK or (not is_gs and name in _SKIP):
            continue
        if slot.offset > cursor:
            fmt.append(f"{slot.offset - cursor}x")
        f, nvals = _field_format(slot.kind, slot.count)
        fmt.append(f)
        if is_gs:
            gs_fields.append((name, slot.count, index))
        else:
            ts_fields.append((name, slot.kind, slot.count, index))
        index += nvals
        cursor = slot.offset + struct.calcsize("<" + f)
    return _Plan(struct.Struct("".join(fmt)), tuple(ts_fields), tuple(gs_fields))


def _cstr(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


_ZERO_ROW = bytes(_ROW_BYTES)
_BLOCK = 512  # divides the row size (14848 = 29 * 512)
_ZERO_BLOCK = bytes(_BLOCK)


def sparse_row(payload: bytes, off: int) -> Histogram:
    """Non-zero bins of one 1856-bin u64 histogram row at ``off``.

    Rows are mostly zeros; whole zero rows and zero 512-byte blocks are skipped with C-speed
    comparisons (no copies) before the populated span is unpacked.
    """
    if payload.startswith(_ZERO_ROW, off):
        return EMPTY_HIST
    end = off + _ROW_BYTES
    lo = off
    while payload.startswith(_ZERO_BLOCK, lo):
        lo += _BLOCK
    hi = end - _BLOCK
    while payload.startswith(_ZERO_BLOCK, hi):
        hi -= _BLOCK
    hi_end = min(hi + _BLOCK, end)
    head = payload[lo : lo + _BLOCK]
    tail = payload[max(hi, off) : hi_end]
    first = (lo - off + len(head) - len(head.lstrip(b"\0"))) // 8
    last = (hi_end - off - (len(tail) - len(tail.rstrip(b"\0"))) - 1) // 8
    vals = struct.unpack_from(f"<{last - first + 1}Q", payload, off + first * 8)
    return tuple(compress(range(first, last + 1), vals)), tuple(filter(None, vals))


def _io_stat(payload: bytes, off: int) -> IoStat:
    mx, mn, n, mean, s = _IO_STAT.unpack_from(payload, off)
    return IoStat(mx, mn, n, mean, s)


def parse_ts(payload: bytes, layout: Layout) -> tuple[ThreadStat, GroupRunStats]:
    """A TS payload as fio's client sees it after ``convert_ts``. Extra bytes after the struct
    (per-priority records, steady-state samples) are read through the offsets the struct names."""
    if len(payload) < layout.pdu_size:
        raise DecodeError(
            f"TS of {len(payload)} bytes is shorter than the {layout.pdu_size} bytes of protocol {layout.protocol}"
        )
    plan = _plan(layout)
    vals = plan.reader.unpack_from(payload)
    ts = ThreadStat()
    for name, kind, count, i in plan.ts_fields:
        if kind == "char":
            value = vals[i].split(b"\0", 1)[0].decode("utf-8", "replace")
        elif kind == "io_stat":
            value = [IoStat(*vals[j : j + 5]) for j in range(i, i + 5 * count, 5)]
            if name == "sync_stat":
                value = value[0]
        elif name in _ARRAYS:
            value = list(vals[i : i + count])
        elif name == "percentile_list":
            value = _percentiles(vals[i : i + count])
        else:
            value = vals[i]
        setattr(ts, name, value)
    gs_values: list[Any] = [list(vals[i : i + c]) if c > 1 else vals[i] for _, c, i in plan.gs_fields]
    rs = GroupRunStats(*gs_values)

    plat_off = layout.ts["io_u_plat"].offset
    ts.plat = [
        [
            sparse_row(payload, plat_off + (lat * DDIR_RWDIR_CNT + d) * _ROW_BYTES)
            for d in range(DDIR_RWDIR_CNT)
        ]
        for lat in range(FIO_LAT_CNT)
    ]
    ts.sync_plat = sparse_row(payload, layout.ts["io_u_sync_plat"].offset)

    blocks = layout.ts["block_infos"]
    nr_blocks = min(ts.nr_block_infos, blocks.count)
    if nr_blocks:
        ts.block_infos = list(struct.unpack_from(f"<{nr_blocks}I", payload, blocks.offset))

    for d in range(DDIR_RWDIR_CNT):
        if ts.nr_clat_prio[d]:
            ts.clat_prio[d] = _clat_prios(payload, d, ts.clat_prio_offset[d], ts.nr_clat_prio[d])

    if ts.ss_state & FIO_SS_DATA and ts.ss_dur:
        ts.ss_iops_data = _u64s(payload, ts.ss_iops_data_offset, ts.ss_dur)
        ts.ss_bw_data = _u64s(payload, ts.ss_bw_data_offset, ts.ss_dur)
        if "ss_lat_data_offset" in layout.ts:
            ts.ss_lat_data = _u64s(payload, ts.ss_lat_data_offset, ts.ss_dur)
    return ts, rs


def _percentiles(raw: tuple[float, ...]) -> tuple[float, ...]:
    """fio's percentile list up to its first 0.0, sorted (fio sorts it in place before first use)."""
    plist = []
    for k, v in enumerate(raw):
        if v == 0.0:
            break
        if not 0.0 < v <= 100.0:  # (NaN too) fio takes only 0 < p <= 100
            raise DecodeError(f"percentile_list[{k}] = {v!r} (not a percentile)")
        plist.append(v)
    return tuple(sorted(plist))


def _clat_prios(payload: bytes, d: int, base: int, n: int) -> list[ClatPrio]:
    if base + n * CLAT_PRIO_STAT_SIZE > len(payload):
        raise DecodeError(
            f"nr_clat_prio[{d}] = {n} per-priority records from offset {base} run past the end of the TS "
            f"({len(payload)} bytes)"
        )
    return [_clat_prio(payload, base + i * CLAT_PRIO_STAT_SIZE) for i in range(n)]


def _u64s(payload: bytes, off: int, n: int) -> list[int]:
    if off + 8 * n > len(payload):
        raise DecodeError(
            f"ss_dur = {n} steady-state samples from offset {off} run past the end of the TS ({len(payload)} bytes)"
        )
    return list(struct.unpack_from(f"<{n}Q", payload, off))


def _clat_prio(payload: bytes, off: int) -> ClatPrio:
    if off + CLAT_PRIO_STAT_SIZE > len(payload):
        raise DecodeError("per-priority statistics run past the end of the TS")
    plat = sparse_row(payload, off)
    stat = _io_stat(payload, off + _ROW_BYTES)
    (ioprio,) = struct.unpack_from("<I", payload, off + _ROW_BYTES + _IO_STAT.size)
    return ClatPrio(ioprio, stat, plat)
