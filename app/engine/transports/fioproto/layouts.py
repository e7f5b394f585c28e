"""Per-protocol-version layouts of fio's ``cmd_ts_pdu`` (thread_stat + group_run_stats), as data.

fio sends its C structs nearly verbatim (all fields little-endian). ``struct thread_stat`` is
``__attribute__((packed))`` except that ``sync_stat`` is aligned to 8, which makes the whole
struct 8-aligned; ``cmd_ts_pdu`` is thread_stat followed by the packed group_run_stats, padded to 8.

Each protocol version is a field list; later versions are expressed as edits of the protocol-97
list. Offsets are computed, and :func:`layout_for` checks the computed size against the size
fio itself reports (TS ``pdu_len`` of the captures and the reference study).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import cache

from app.engine.common.fio_buckets import PLAT_NR as PLAT_NR  # re-exported for the struct tables

from .protocol_table import PROTOCOL_ROWS

# Constants of fio's stat.h / io_ddir.h that are the same in every supported version.
DDIR_RWDIR_CNT = 3  # read, write, trim
DDIR_RWDIR_SYNC_CNT = 4
FIO_LAT_CNT = 3  # slat, clat, lat (index order in io_u_plat)
LIST_MAX_LEN = 20  # percentile_list entries
IO_U_MAP_NR = 7
LAT_N_NR = 10
LAT_U_NR = 10
LAT_M_NR = 12
MAX_NR_BLOCK_INFOS = 8192

# kind -> struct format (little-endian, no padding). fp64 is fio_fp64_t: the double's IEEE-754 bits
# in the first 8 bytes of a 16-byte union. io_stat: max, min, samples, mean, S.
KIND_FORMAT = {
    "u16": "H",
    "u32": "I",
    "u64": "Q",
    "fp64": "d8x",
    "io_stat": "QQQd8xd8x",
}


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # a KIND_FORMAT key, or "char" (count = bytes)
    count: int = 1
    align: int = 1  # only sync_stat has an alignment in the packed struct

    @property
    def size(self) -> int:
        if self.kind == "char":
            return self.count
        return struct.calcsize("<" + KIND_FORMAT[self.kind]) * self.count


F = Field
RW = DDIR_RWDIR_CNT

THREAD_STAT_97: tuple[Field, ...] = (
    F("name", "char", 128),
    F("verror", "char", 128),
    F("error", "u32"),
    F("thread_number", "u32"),
    F("groupid", "u32"),
    F("pid", "u32"),
    F("description", "char", 256),
    F("members", "u32"),
    F("unified_rw_rep", "u32"),
    F("disable_prio_stat", "u32"),
    F("sync_stat", "io_stat", 1, align=8),
    F("clat_stat", "io_stat", RW),
    F("slat_stat", "io_stat", RW),
    F("lat_stat", "io_stat", RW),
    F("bw_stat", "io_stat", RW),
    F("iops_stat", "io_stat", RW),
    F("usr_time", "u64"),
    F("sys_time", "u64"),
    F("ctx", "u64"),
    F("minf", "u64"),
    F("majf", "u64"),
    F("clat_percentiles", "u32"),
    F("lat_percentiles", "u32"),
    F("slat_percentiles", "u32"),
    F("pad", "u32"),
    F("percentile_precision", "u64"),
    F("percentile_list", "fp64", LIST_MAX_LEN),
    F("io_u_map", "u64", IO_U_MAP_NR),
    F("io_u_submit", "u64", IO_U_MAP_NR),
    F("io_u_complete", "u64", IO_U_MAP_NR),
    F("io_u_lat_n", "u64", LAT_N_NR),
    F("io_u_lat_u", "u64", LAT_U_NR),
    F("io_u_lat_m", "u64", LAT_M_NR),
    F("io_u_plat", "u64", FIO_LAT_CNT * RW * PLAT_NR),
    F("io_u_sync_plat", "u64", PLAT_NR),
    F("total_io_u", "u64", DDIR_RWDIR_SYNC_CNT),
    F("short_io_u", "u64", RW),
    F("drop_io_u", "u64", RW),
    F("total_submit", "u64"),
    F("total_complete", "u64"),
    F("io_bytes", "u64", RW),
    F("runtime", "u64", RW),
    F("total_run_time", "u64"),
    F("continue_on_error", "u16"),  # a u16 in a 4-byte union
    F("pad2", "u16"),
    F("first_error", "u32"),
    F("total_err_count", "u64"),
    F("nr_zone_resets", "u64"),
    F("nr_block_infos", "u64"),
    F("block_infos", "u32", MAX_NR_BLOCK_INFOS),
    F("kb_base", "u32"),
    F("unit_base", "u32"),
    F("latency_depth", "u32"),
    F("pad3", "u32"),
    F("latency_target", "u64"),
    F("latency_percentile", "fp64"),
    F("latency_window", "u64"),
    F("sig_figs", "u32"),
    F("ss_dur", "u64"),
    F("ss_state", "u32"),
    F("ss_head", "u32"),
    F("ss_limit", "fp64"),
    F("ss_slope", "fp64"),
    F("ss_deviation", "fp64"),
    F("ss_criterion", "fp64"),
    F("ioprio", "u32"),
    F("ss_iops_data_offset", "u64"),
    F("ss_bw_data_offset", "u64"),
    F("clat_prio_offset", "u64", RW),
    F("nr_clat_prio", "u32", RW),
    F("cachehit", "u64"),
    F("cachemiss", "u64"),
)

GROUP_RUN_STATS: tuple[Field, ...] = (
    F("max_run", "u64", RW),
    F("min_run", "u64", RW),
    F("max_bw", "u64", RW),
    F("min_bw", "u64", RW),
    F("iobytes", "u64", RW),
    F("agg", "u64", RW),
    F("kb_base", "u32"),
    F("unit_base", "u32"),
    F("sig_figs", "u32"),
    F("groupid", "u32"),
    F("unified_rw_rep", "u32"),
)

# struct clat_prio_stat (not packed): u64 io_u_plat[1856], io_stat clat_stat, u32 ioprio, pad to 8.
CLAT_PRIO_STAT: tuple[Field, ...] = (
    F("io_u_plat", "u64", PLAT_NR),
    F("clat_stat", "io_stat"),
    F("ioprio", "u32"),
)
CLAT_PRIO_STAT_SIZE = 14912

# --- edits that express later protocol versions ------------------------------------------------


def _insert_after(fields: tuple[Field, ...], after: str, *new: Field) -> tuple[Field, ...]:
    out: list[Field] = []
    for f in fields:
        out.append(f)
        if f.name == after:
            out.extend(new)
    if len(out) != len(fields) + len(new):
        raise ValueError(f"no field {after!r}")
    return tuple(out)


def _remove(fields: tuple[Field, ...], *names: str) -> tuple[Field, ...]:
    out = tuple(f for f in fields if f.name not in names)
    if len(out) != len(fields) - len(names):
        raise ValueError(f"missing one of {names}")
    return out


# 3.36 (protocol 101): u64 job_start after groupid.
THREAD_STAT_101 = _insert_after(THREAD_STAT_97, "groupid", F("job_start", "u64"))

# protocol 114 (fio 7089300f, "report zone reset count only when zonemode is set to zbd"): nr_zone_resets
# moves after unit_base and gains u16 count_zone_resets + u16 pad3 (the old u32 pad3 goes away).
THREAD_STAT_114 = _insert_after(
    _remove(THREAD_STAT_101, "nr_zone_resets", "pad3"),
    "unit_base",
    F("nr_zone_resets", "u64"),
    F("count_zone_resets", "u16"),
    F("pad3", "u16"),
)

# protocol 115 (fio e6ef1c10, latency steady state) to 3.42's 120: ss_lat_data_offset after ss_bw_data_offset.
THREAD_STAT_120 = _insert_after(THREAD_STAT_114, "ss_bw_data_offset", F("ss_lat_data_offset", "u64"))

# The field lists by name; protocol_table.py (generated from fio's sources) says which one each protocol uses.
SHAPES: dict[str, tuple[Field, ...]] = {
    "97": THREAD_STAT_97,
    "101": THREAD_STAT_101,
    "114": THREAD_STAT_114,
    "120": THREAD_STAT_120,
}

# JSON differences of the stock client (stat.c) that go with each version.
JOB_START = "job_start"  # "job_start" key after groupid (3.36+)
PRIOHINT = "priohint"  # "priohint" in per-priority entries (3.36+)
DISK_SECTORS = "disk_sectors"  # read_sectors/write_sectors in disk_util (3.36+)
LATENCY_UNIT_KEYS = "latency_unit_keys"  # latency_target_ns / latency_window_us (3.42+)
ZONE_RESETS = "zone_resets"  # count_zone_resets / "zone_resets" (3.42+)
SS_LAT = "ss_lat"  # steady state on latency, 3 appended arrays (3.42+)


@dataclass(frozen=True)
class Slot:
    offset: int
    kind: str
    count: int


@dataclass(frozen=True, eq=False)
class Layout:
    protocol: int
    fio_versions: tuple[str, ...]
    ts_fields: tuple[Field, ...]
    features: frozenset[str]
    ts: dict[str, Slot] = field(init=False, repr=False)
    gs: dict[str, Slot] = field(init=False, repr=False)
    ts_size: int = field(init=False)
    pdu_size: int = field(init=False)

    def __post_init__(self) -> None:
        ts, size = _place(self.ts_fields)
        ts_size = _align(size, 8)
        gs, gs_size = _place(GROUP_RUN_STATS, base=ts_size)
        object.__setattr__(self, "ts", ts)
        object.__setattr__(self, "gs", gs)
        object.__setattr__(self, "ts_size", ts_size)
        object.__setattr__(self, "pdu_size", _align(gs_size, 8))


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _place(fields: tuple[Field, ...], base: int = 0) -> tuple[dict[str, Slot], int]:
    slots: dict[str, Slot] = {}
    pos = base
    for f in fields:
        pos = _align(pos, f.align)
        slots[f.name] = Slot(pos, f.kind, f.count)
        pos += f.size
    return slots, pos


def _layouts() -> dict[int, Layout]:
    """A layout for every protocol whose TS record fio's sources give as one of SHAPES and whose other wire
    structures are as at 97 (protocol_table.py, generated from fio's git history by .ci/fio_protocols.py)."""
    out = {}
    for row in PROTOCOL_ROWS:
        if row.shape is not None and row.wire_same:
            out[row.protocol] = Layout(row.protocol, row.releases, SHAPES[row.shape], frozenset(row.features))
    return out


LAYOUTS: dict[int, Layout] = _layouts()
SUPPORTED_PROTOCOLS: tuple[int, ...] = tuple(LAYOUTS)

# sizeof(struct cmd_ts_pdu) as computed from fio's headers; a layout here that disagrees is a bug here.
EXPECTED_PDU_SIZE = {row.protocol: row.pdu_size for row in PROTOCOL_ROWS}


class UnsupportedVersion(Exception):
    """The server speaks a protocol version this client has no layout for."""

    def __init__(self, protocol: int) -> None:
        self.protocol = protocol
        super().__init__(
            f"the fio server speaks protocol version {protocol}, which Fiometer does not support; "
            f"supported: {supported_fio_versions()}"
        )


def supported_fio_versions() -> str:
    """Human list: 'fio 3.31-3.33 (protocol 97), fio 3.34 (99), ..., Debian 13 (trixie) fio 3.39-1 (109), ...;
    also protocols between releases: 98, 102, ...'."""
    parts, between = [], []
    for row in PROTOCOL_ROWS:
        if row.protocol not in LAYOUTS:
            continue
        v = row.releases
        if v:
            names = v[0] if len(v) == 1 else f"{v[0]}-{v[-1]}"
            parts.append(f"fio {names} (protocol {row.protocol})")
        parts.extend(f"{p} (protocol {row.protocol})" for p in row.packages)
        if not v and not row.packages:
            between.append(str(row.protocol))
    text = ", ".join(parts)
    return f"{text}; also the protocols of fio between releases: {', '.join(between)}" if between else text


def newest_release() -> str:
    """'fio 3.42 (protocol 120)': the newest fio release whose protocol is decoded here."""
    row = max((r for r in PROTOCOL_ROWS if r.releases and r.shape), key=lambda r: r.protocol)
    return f"fio {row.releases[-1]} (protocol {row.protocol})"


def nearest_known(protocol: int) -> Layout:
    """The layout of the newest known protocol below ``protocol`` (the first guess for a newer fio)."""
    below = [p for p in LAYOUTS if p < protocol]
    if not below:
        raise UnsupportedVersion(protocol)
    return LAYOUTS[max(below)]


@cache
def _as(protocol: int, decoded_as: int) -> Layout:
    base = LAYOUTS[decoded_as]
    return Layout(protocol, (), base.ts_fields, base.features)


def layout_for(protocol: int, decoded_as: int | None = None) -> Layout:
    """The layout of a known protocol, or of a newer one with the layout of ``decoded_as``, the known
    protocol a calibration proved it has (client.py)."""
    if protocol in LAYOUTS:
        return LAYOUTS[protocol]
    if decoded_as is not None and decoded_as in LAYOUTS:
        return _as(protocol, decoded_as)
    raise UnsupportedVersion(protocol)
