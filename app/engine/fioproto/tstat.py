"""Parse a TS payload (``struct cmd_ts_pdu`` plus optional appended records) into Python objects.

Which bytes mean what comes from :mod:`.layouts`; this module only reads them. Histograms are
kept sparse (non-zero bins only) because a TS carries ten 1856-bin rows and most bins are empty.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import cache
from itertools import compress

from .layouts import (
    CLAT_PRIO_STAT_SIZE,
    DDIR_RWDIR_CNT,
    FIO_LAT_CNT,
    KIND_FORMAT,
    LIST_MAX_LEN,
    PLAT_NR,
    Layout,
    Slot,
)
from .statmath import EMPTY_HIST, Histogram, IoStat

ULONG_MAX = (1 << 64) - 1
FIO_SLAT, FIO_CLAT, FIO_LAT = 0, 1, 2
# ss_state bits (fio's steadystate.h; LAT exists from fio 3.42)
FIO_SS_IOPS, FIO_SS_BW, FIO_SS_SLOPE, FIO_SS_ATTAINED = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FIO_SS_RAMP_OVER, FIO_SS_DATA, FIO_SS_PCT, FIO_SS_BUFFER_FULL, FIO_SS_LAT = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
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
    percentile_list: list[float] = field(default_factory=list)  # up to the first 0.0, sorted
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
    cachehit: int = 0
    cachemiss: int = 0


_SCALARS = ["error", "thread_number", "groupid", "pid", "members", "unified_rw_rep", "disable_prio_stat", "ioprio", "usr_time", "sys_time", "ctx", "minf", "majf", "clat_percentiles", "lat_percentiles", "slat_percentiles", "percentile_precision", "total_submit", "total_complete", "total_run_time", "continue_on_error", "first_error", "total_err_count", "nr_zone_resets", "kb_base", "unit_base", "latency_depth", "latency_target", "latency_percentile", "latency_window", "sig_figs", "ss_dur", "ss_state", "ss_head", "ss_limit", "ss_slope", "ss_deviation", "ss_criterion", "cachehit", "cachemiss", "job_start", "count_zone_resets"]
_ARRAYS = ["io_u_map", "io_u_submit", "io_u_complete", "io_u_lat_n", "io_u_lat_u", "io_u_lat_m", "total_io_u", "short_io_u", "drop_io_u", "io_bytes", "runtime"]
_STRINGS = ("name", "verror", "description")
_STAT_ARRAYS = ("clat_stat", "slat_stat", "lat_stat", "bw_stat", "iops_stat")


def _struct_for(slot: Slot) -> struct.Struct:
    if slot.kind == "char":
        return struct.Struct(f"<{slot.count}s")
    fmt = KIND_FORMAT[slot.kind]
    return struct.Struct("<" + (f"{slot.count}{fmt}" if len(fmt) == 1 else fmt * slot.count))


@cache
def _readers(layout: Layout) -> dict[str, tuple[int, struct.Struct]]:
    skip = {"io_u_plat", "io_u_sync_plat", "block_infos"}
    return {name: (slot.offset, _struct_for(slot)) for name, slot in layout.ts.items() if name not in skip}


@cache
def _gs_readers(layout: Layout) -> dict[str, tuple[int, struct.Struct]]:
    return {name: (slot.offset, _struct_for(slot)) for name, slot in layout.gs.items()}


def _cstr(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


_ZERO_ROW = bytes(_ROW_BYTES)
_BLOCK = 512
_ZERO_BLOCK = bytes(_BLOCK)


def sparse_row(payload: bytes, off: int) -> Histogram:
    """Non-zero bins of one 1856-bin u64 histogram row at ``off``.

    Rows are mostly zeros; whole zero rows and zero 512-byte blocks are skipped with C-speed
    comparisons before the populated span is unpacked.
    """
    row = payload[off : off + _ROW_BYTES]
    if row == _ZERO_ROW:
        return EMPTY_HIST
    n = len(row)
    lo = 0
    while row[lo : lo + _BLOCK] == _ZERO_BLOCK:
        lo += _BLOCK
    hi = (n - 1) // _BLOCK * _BLOCK
    while row[hi : hi + _BLOCK] == _ZERO_BLOCK[: n - hi]:
        hi -= _BLOCK
    first_block = row[lo : lo + _BLOCK]
    first = (lo + len(first_block) - len(first_block.lstrip(b"\0"))) // 8
    last = (hi + len(row[hi : hi + _BLOCK].rstrip(b"\0")) - 1) // 8
    vals = struct.unpack_from(f"<{last - first + 1}Q", row, first * 8)
    return tuple(compress(range(first, last + 1), vals)), tuple(filter(None, vals))


def _io_stat(payload: bytes, off: int) -> IoStat:
    mx, mn, n, mean, s = _IO_STAT.unpack_from(payload, off)
    return IoStat(mx, mn, n, mean, s)


def parse_gs(payload: bytes, layout: Layout, base: int | None = None) -> GroupRunStats:
    """group_run_stats, either inside a TS (``base`` None) or as a GS message (``base`` 0)."""
    shift = 0 if base is None else base - layout.ts_size
    r = _gs_readers(layout)
    vals = {name: st.unpack_from(payload, off + shift) for name, (off, st) in r.items()}
    return GroupRunStats(
        *(list(vals[n]) for n in ("max_run", "min_run", "max_bw", "min_bw", "iobytes", "agg")),
        *(vals[n][0] for n in ("kb_base", "unit_base", "sig_figs", "groupid", "unified_rw_rep")),
    )


def parse_ts(payload: bytes, layout: Layout) -> tuple[ThreadStat, GroupRunStats]:
    """A TS payload as fio's client sees it after ``convert_ts``. Extra bytes after the struct
    (per-priority records, steady-state samples) are read through the offsets the struct names."""
    if len(payload) < layout.pdu_size:
        raise DecodeError(
            f"TS of {len(payload)} bytes is shorter than the {layout.pdu_size} bytes of protocol {layout.protocol}"
        )
    r = _readers(layout)
    ts = ThreadStat()
    for name in _STRINGS:
        off, st = r[name]
        setattr(ts, name, _cstr(st.unpack_from(payload, off)[0]))
    for name in _SCALARS:
        if name in r:
            off, st = r[name]
            setattr(ts, name, st.unpack_from(payload, off)[0])
    for name in _ARRAYS:
        off, st = r[name]
        setattr(ts, name, list(st.unpack_from(payload, off)))
    off = r["sync_stat"][0]
    ts.sync_stat = _io_stat(payload, off)
    for name in _STAT_ARRAYS:
        off = r[name][0]
        setattr(ts, name, [_io_stat(payload, off + i * _IO_STAT.size) for i in range(DDIR_RWDIR_CNT)])
    off, st = r["percentile_list"]
    plist = []
    for v in st.unpack_from(payload, off)[:LIST_MAX_LEN]:
        if v == 0.0:
            break
        plist.append(v)
    ts.percentile_list = sorted(plist)  # fio sorts it in place before first use

    plat_off = layout.ts["io_u_plat"].offset
    ts.plat = [
        [sparse_row(payload, plat_off + (lat * DDIR_RWDIR_CNT + d) * _ROW_BYTES) for d in range(DDIR_RWDIR_CNT)]
        for lat in range(FIO_LAT_CNT)
    ]
    ts.sync_plat = sparse_row(payload, layout.ts["io_u_sync_plat"].offset)

    nr_blocks = min(ts_get(payload, r, "nr_block_infos"), layout.ts["block_infos"].count)
    if nr_blocks:
        ts.block_infos = list(struct.unpack_from(f"<{nr_blocks}I", payload, layout.ts["block_infos"].offset))

    nr_prio = r["nr_clat_prio"][1].unpack_from(payload, r["nr_clat_prio"][0])
    prio_off = r["clat_prio_offset"][1].unpack_from(payload, r["clat_prio_offset"][0])
    for d in range(DDIR_RWDIR_CNT):
        if nr_prio[d]:
            ts.clat_prio[d] = [_clat_prio(payload, prio_off[d] + i * CLAT_PRIO_STAT_SIZE) for i in range(nr_prio[d])]

    if ts.ss_state & FIO_SS_DATA and ts.ss_dur:
        ts.ss_iops_data = _u64s(payload, ts_get(payload, r, "ss_iops_data_offset"), ts.ss_dur)
        ts.ss_bw_data = _u64s(payload, ts_get(payload, r, "ss_bw_data_offset"), ts.ss_dur)
        if "ss_lat_data_offset" in r:
            ts.ss_lat_data = _u64s(payload, ts_get(payload, r, "ss_lat_data_offset"), ts.ss_dur)
    return ts, parse_gs(payload, layout)


def ts_get(payload: bytes, r: dict[str, tuple[int, struct.Struct]], name: str) -> int:
    off, st = r[name]
    return st.unpack_from(payload, off)[0]


def _u64s(payload: bytes, off: int, n: int) -> list[int]:
    if off + 8 * n > len(payload):
        raise DecodeError("steady-state samples run past the end of the TS")
    return list(struct.unpack_from(f"<{n}Q", payload, off))


def _clat_prio(payload: bytes, off: int) -> ClatPrio:
    if off + CLAT_PRIO_STAT_SIZE > len(payload):
        raise DecodeError("per-priority statistics run past the end of the TS")
    plat = sparse_row(payload, off)
    stat = _io_stat(payload, off + _ROW_BYTES)
    (ioprio,) = struct.unpack_from("<I", payload, off + _ROW_BYTES + _IO_STAT.size)
    return ClatPrio(ioprio, stat, plat)
