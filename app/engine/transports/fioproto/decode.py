"""TS payload -> the job entry fio's stock client prints with ``--output-format=json+``.

The result has the same keys, key order and values as an entry of the stock client's
``client_stats`` array for the same bytes (fio's ``show_thread_status_json``), so remote jobs
look exactly like local ones to the rest of Fiometer. Float values are Python floats that print
identically with ``%f``.
"""

from __future__ import annotations

import copy
import struct
from functools import cache
from typing import Any

from .layouts import (
    DISK_SECTORS,
    JOB_START,
    LATENCY_UNIT_KEYS,
    PRIOHINT,
    SS_LAT,
    ZONE_RESETS,
    Layout,
    layout_for,
)
from .statmath import (
    BIN_KEY,
    EMPTY_HIST,
    Histogram,
    IoStat,
    agg_percent,
    calc_lat,
    calc_percentiles,
    merge_hist,
    stat_calc_dist,
    stat_calc_lat,
    sum_io_stat,
)
from .tstat import (
    FIO_CLAT,
    FIO_LAT,
    FIO_SLAT,
    FIO_SS_ATTAINED,
    FIO_SS_BUFFER_FULL,
    FIO_SS_IOPS,
    FIO_SS_LAT,
    FIO_SS_PCT,
    FIO_SS_SLOPE,
    ULONG_MAX,
    ClatPrio,
    DecodeError,
    GroupRunStats,
    ThreadStat,
    parse_ts,
)

__all__ = ["DecodeError", "decode_ts", "ts_to_json", "decode_du", "du_to_json"]

UNIFIED_SPLIT, UNIFIED_MIXED, UNIFIED_BOTH = 0, 1, 2
DDIR_NAMES = ("read", "write", "trim")
BLOCK_STATE_NAMES = ("unwritten", "trimmed", "written", "trim failure", "write failure")
_BLOCK_STATE_SHIFT = 29
_LAT_RANGES = ("2", "4", "10", "20", "50", "100", "250", "500", "750", "1000")
_LAT_M_RANGES = _LAT_RANGES + ("2000", ">=2000")


def decode_ts(
    payload: bytes,
    layout: Layout | int,
    *,
    hostname: str | None = None,
    port: int | None = None,
    job_options: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Decode one TS payload into a stock-client JSON job entry.

    ``hostname``/``port`` are appended like the stock client does (the address it connected to).
    ``job_options`` (the non-global JOB_OPT messages sent just before this TS) become
    ``"job options"`` as in local fio JSON.
    """
    lay = layout if isinstance(layout, Layout) else layout_for(layout)
    ts, rs = parse_ts(payload, lay)
    return ts_to_json(ts, rs, lay.features, hostname=hostname, port=port, job_options=job_options)


def _f(x: float) -> float:
    return float(x)


@cache
def _percentile_keys(plist: tuple[float, ...]) -> tuple[str, ...]:
    return tuple(f"{p:f}" for p in plist)


def _lat_json(ts: ThreadStat, percentiles: int, st: IoStat, hist: Histogram, listed: bool) -> dict[str, Any]:
    r = calc_lat(st)
    mn, mx, mean, dev = r if r is not None else (0, 0, 0.0, 0.0)
    obj: dict[str, Any] = {"min": mn, "max": mx, "mean": _f(mean), "stddev": _f(dev), "N": st.samples}
    if percentiles and st.samples:
        if listed:
            plist = ts.percentile_list
            vals = calc_percentiles(hist, st.samples, plist)
            obj["percentile"] = dict(zip(_percentile_keys(plist), vals, strict=True))
        idxs, counts = hist
        obj["bins"] = dict(zip(map(BIN_KEY.__getitem__, idxs), counts, strict=True))
    return obj


def _prio_count(ts: ThreadStat, d: int) -> int:
    prios = ts.clat_prio[d]
    return sum(1 for p in prios if p.clat_stat.samples) if prios else 0


def _ddir_json(
    ts: ThreadStat, rs: GroupRunStats, d: int, parent: dict[str, Any], features: frozenset[str], listed: bool
) -> None:
    if ts.unified_rw_rep == UNIFIED_MIXED and d != 0:
        return
    obj: dict[str, Any] = {}
    parent["mixed" if ts.unified_rw_rep == UNIFIED_MIXED else ("sync" if d == 3 else DDIR_NAMES[d])] = obj
    if d == 3:
        obj["total_ios"] = ts.total_io_u[3]
        obj["lat_ns"] = _lat_json(
            ts, ts.lat_percentiles | ts.clat_percentiles, ts.sync_stat, ts.sync_plat, listed
        )
        return

    bw_bytes = bw = 0
    iops = 0.0
    runt = ts.runtime[d]
    if runt:
        bw_bytes = (1000 * ts.io_bytes[d]) // runt
        bw = bw_bytes // 1024
        iops = (1000.0 * ts.total_io_u[d]) / runt
    obj["io_bytes"] = ts.io_bytes[d]
    obj["io_kbytes"] = ts.io_bytes[d] >> 10
    obj["bw_bytes"] = bw_bytes
    obj["bw"] = bw
    obj["iops"] = iops
    obj["runtime"] = runt
    obj["total_ios"] = ts.total_io_u[d]
    obj["short_ios"] = ts.short_io_u[d]
    obj["drop_ios"] = ts.drop_io_u[d]
    obj["slat_ns"] = _lat_json(ts, ts.slat_percentiles, ts.slat_stat[d], ts.plat[FIO_SLAT][d], listed)
    obj["clat_ns"] = _lat_json(ts, ts.clat_percentiles, ts.clat_stat[d], ts.plat[FIO_CLAT][d], listed)
    obj["lat_ns"] = _lat_json(ts, ts.lat_percentiles, ts.lat_stat[d], ts.plat[FIO_LAT][d], listed)

    if _prio_count(ts, d) >= 2:
        obj_name = "lat_ns" if ts.lat_percentiles else "clat_ns"
        prios = []
        for p in ts.clat_prio[d] or ():
            if not p.clat_stat.samples:
                continue
            entry: dict[str, Any] = {"prioclass": p.ioprio >> 13, "prio": p.ioprio & 7}
            if PRIOHINT in features:
                entry["priohint"] = (p.ioprio >> 3) & 0x3FF
            entry[obj_name] = _lat_json(
                ts, ts.clat_percentiles | ts.lat_percentiles, p.clat_stat, p.plat, listed
            )
            prios.append(entry)
        obj["prios"] = prios

    r = calc_lat(ts.bw_stat[d])
    if r is not None:
        mn, mx, mean, dev = r
        p_of_agg = agg_percent(rs.agg[d], mean)
    else:
        mn = mx = 0
        p_of_agg = mean = dev = 0.0
    obj["bw_min"] = mn
    obj["bw_max"] = mx
    obj["bw_agg"] = _f(p_of_agg)
    obj["bw_mean"] = _f(mean)
    obj["bw_dev"] = _f(dev)
    obj["bw_samples"] = ts.bw_stat[d].samples

    r = calc_lat(ts.iops_stat[d])
    mn, mx, mean, dev = r if r is not None else (0, 0, 0.0, 0.0)
    obj["iops_min"] = mn
    obj["iops_max"] = mx
    obj["iops_mean"] = _f(mean)
    obj["iops_stddev"] = _f(dev)
    obj["iops_samples"] = ts.iops_stat[d].samples

    if ts.cachehit + ts.cachemiss:
        obj["cachehit"] = float(ts.cachehit) / float(ts.cachehit + ts.cachemiss) * 100.0


def ts_to_json(
    ts: ThreadStat,
    rs: GroupRunStats,
    features: frozenset[str] = frozenset(),
    *,
    hostname: str | None = None,
    port: int | None = None,
    job_options: dict[str, str] | None = None,
    percentiles: bool = True,
) -> dict[str, Any]:
    """fio's ``show_thread_status_json`` for a client (no eta/elapsed), plus hostname/port; without the
    percentile lists when ``percentiles`` is False (about a third of the work; live samples take their
    percentiles from the bins)."""
    root: dict[str, Any] = {"jobname": ts.name, "groupid": ts.groupid}
    if JOB_START in features:
        root["job_start"] = ts.job_start
    root["error"] = ts.error
    if job_options:
        root["job options"] = dict(job_options)
    for d in range(4):
        _ddir_json(ts, rs, d, root, features, percentiles)
    if ts.unified_rw_rep == UNIFIED_BOTH:
        _ddir_json(mixed_stats(ts), rs, 0, root, features, percentiles)

    _usage_json(ts, root)
    _options_json(ts, root, features)
    if hostname is not None:
        root["hostname"] = hostname
    if port is not None:
        root["port"] = port
    return root


def _usage_json(ts: ThreadStat, root: dict[str, Any]) -> None:
    """The job's CPU use and its IO-depth and latency distributions, in fio's order."""
    if ts.total_run_time:
        runt = float(ts.total_run_time)
        usr_cpu = float(ts.usr_time) * 100 / runt
        sys_cpu = float(ts.sys_time) * 100 / runt
    else:
        usr_cpu = sys_cpu = 0.0
    root["job_runtime"] = ts.total_run_time
    root["usr_cpu"] = _f(usr_cpu)
    root["sys_cpu"] = _f(sys_cpu)
    root["ctx"] = ts.ctx
    root["majf"] = ts.majf
    root["minf"] = ts.minf

    rw_total = ts.total_io_u[0] + ts.total_io_u[1] + ts.total_io_u[2]
    dist = stat_calc_dist(ts.io_u_map, rw_total)
    root["iodepth_level"] = {(f"{1 << i}" if i < 6 else f">={1 << i}"): dist[i] for i in range(7)}
    depth_names = ["0", "4", "8", "16", "32", "64", ">=64"]
    dist = stat_calc_dist(ts.io_u_submit, ts.total_submit)
    root["iodepth_submit"] = {depth_names[i]: dist[i] for i in range(7)}
    dist = stat_calc_dist(ts.io_u_complete, ts.total_complete)
    root["iodepth_complete"] = {depth_names[i]: dist[i] for i in range(7)}
    root["latency_ns"] = dict(zip(_LAT_RANGES, stat_calc_lat(ts.io_u_lat_n, rw_total), strict=True))
    root["latency_us"] = dict(zip(_LAT_RANGES, stat_calc_lat(ts.io_u_lat_u, rw_total), strict=True))
    root["latency_ms"] = dict(zip(_LAT_M_RANGES, stat_calc_lat(ts.io_u_lat_m, rw_total), strict=True))


def _options_json(ts: ThreadStat, root: dict[str, Any], features: frozenset[str]) -> None:
    """What fio prints only when the job asked for it: error counts, a latency target, its description,
    block info, steady state, zone resets."""
    if ts.continue_on_error:
        root["total_err"] = ts.total_err_count
        root["first_error"] = ts.first_error
    if ts.latency_depth:
        root["latency_depth"] = ts.latency_depth
        root["latency_target"] = ts.latency_target
        if LATENCY_UNIT_KEYS in features:
            root["latency_target_ns"] = ts.latency_target
        root["latency_percentile"] = _f(ts.latency_percentile)
        root["latency_window"] = ts.latency_window
        if LATENCY_UNIT_KEYS in features:
            root["latency_window_us"] = ts.latency_window
    if ts.description:
        root["desc"] = ts.description
    if ts.block_infos:
        block = _block_json(ts)
        if block is not None:
            root["block"] = block
    if ts.ss_dur:
        root["steadystate"] = _steadystate_json(ts, features)
    if ZONE_RESETS in features and ts.count_zone_resets:
        root["zone_resets"] = ts.nr_zone_resets


def mixed_stats(ts: ThreadStat) -> ThreadStat:
    """fio's ``gen_mixed_ddir_stats_from_ts``: all directions folded into direction 0."""
    m = ThreadStat()
    for st in (m.clat_stat, m.slat_stat, m.lat_stat, m.bw_stat, m.iops_stat):
        for s in st:
            s.min_val = ULONG_MAX
    m.sync_stat.min_val = ULONG_MAX
    m.unified_rw_rep = UNIFIED_MIXED
    m.lat_percentiles = ts.lat_percentiles
    m.clat_percentiles = ts.clat_percentiles
    m.slat_percentiles = ts.slat_percentiles
    m.percentile_precision = ts.percentile_precision
    m.percentile_list = ts.percentile_list
    m.sig_figs = ts.sig_figs
    m.groupid = ts.groupid
    for d in range(3):
        sum_io_stat(m.clat_stat[0], ts.clat_stat[d], False)
        sum_io_stat(m.slat_stat[0], ts.slat_stat[d], False)
        sum_io_stat(m.lat_stat[0], ts.lat_stat[d], False)
        sum_io_stat(m.bw_stat[0], ts.bw_stat[d], True)
        sum_io_stat(m.iops_stat[0], ts.iops_stat[d], True)
        _sum_prio(m, ts, d)
        m.io_bytes[0] += ts.io_bytes[d]
        m.runtime[0] = max(m.runtime[0], ts.runtime[d])
        m.total_io_u[0] += ts.total_io_u[d]
        m.short_io_u[0] += ts.short_io_u[d]
        m.drop_io_u[0] += ts.drop_io_u[d]
        for lat in range(3):
            m.plat[lat][0] = merge_hist(m.plat[lat][0], ts.plat[lat][d])
    sum_io_stat(m.sync_stat, ts.sync_stat, False)
    m.total_io_u[3] += ts.total_io_u[3]
    m.sync_plat = ts.sync_plat
    m.cachehit, m.cachemiss = ts.cachehit, ts.cachemiss
    return m


def _sum_prio(dst: ThreadStat, src: ThreadStat, d: int) -> None:
    """fio's ``sum_clat_prio_stats`` into direction 0 of ``dst``."""
    if dst.disable_prio_stat:
        return
    src_prios = src.clat_prio[d]
    if src_prios is None:
        if src.lat_percentiles:
            items = [(src.ioprio, src.lat_stat[d], src.plat[FIO_LAT][d])]
        else:
            items = [(src.ioprio, src.clat_stat[d], src.plat[FIO_CLAT][d])]
    else:
        if dst.clat_prio[0] is None:
            dst.clat_prio[0] = [ClatPrio(p.ioprio, copy.copy(p.clat_stat), p.plat) for p in src_prios]
            return
        items = [(p.ioprio, p.clat_stat, p.plat) for p in src_prios]
    for ioprio, st, hist in items:
        if not st.samples:
            continue
        prios = dst.clat_prio[0]
        if prios is None:
            prios = dst.clat_prio[0] = []
        target = next((p for p in prios if p.ioprio == ioprio), None)
        if target is None:
            target = ClatPrio(ioprio, IoStat(min_val=ULONG_MAX), EMPTY_HIST)
            prios.append(target)
        sum_io_stat(target.clat_stat, st, False)
        target.plat = merge_hist(target.plat, hist)


def _block_json(ts: ThreadStat) -> dict[str, Any] | None:
    """fio's ``calc_block_percentiles`` output (trim/verify block lifetime)."""

    def state(b: int) -> int:
        return b >> _BLOCK_STATE_SHIFT

    def trims(b: int) -> int:
        return b & ((1 << _BLOCK_STATE_SHIFT) - 1)

    category = {0: 0, 1: 1, 2: 1, 3: 2, 4: 2}
    infos = sorted(ts.block_infos, key=lambda b: (category.get(state(b), 3), trims(b), state(b)))
    plist = ts.percentile_list
    if not plist:
        return None
    nr = len(infos)
    nr_uninit = 0
    while nr_uninit < nr and state(infos[nr_uninit]) == 0:
        nr_uninit += 1
    if nr_uninit == nr:
        return None
    pct = {}
    for p in plist:
        idx = int(p * (nr - nr_uninit) / 100) + nr_uninit
        pct[f"{p:f}"] = trims(infos[min(idx, nr - 1)])
    counts = [0] * len(BLOCK_STATE_NAMES)
    for b in infos:
        if state(b) < len(counts):
            counts[state(b)] += 1
    return {"percentiles": pct, "states": dict(zip(BLOCK_STATE_NAMES, counts, strict=True))}


def _f32(x: float) -> float:
    value: float = struct.unpack("<f", struct.pack("<f", x))[0]
    return value


def _steadystate_json(ts: ThreadStat, features: frozenset[str]) -> dict[str, Any]:
    """The ``steadystate`` object (stock client: ss_check_interval is its default 1 s)."""
    st = ts.ss_state
    metric = "iops" if st & FIO_SS_IOPS else ("lat" if SS_LAT in features and st & FIO_SS_LAT else "bw")
    pct = "%" if st & FIO_SS_PCT else ""
    out: dict[str, Any] = {
        "ss": f"{metric}{'_slope' if st & FIO_SS_SLOPE else ''}:{_f32(ts.ss_limit):f}{pct}",
        "duration": ts.ss_dur,
        "attained": 1 if st & FIO_SS_ATTAINED else 0,
        "criterion": f"{_f32(ts.ss_criterion):f}{pct}",
        "max_deviation": _f(ts.ss_deviation),
        "slope": _f(ts.ss_slope),
    }
    intervals = ts.ss_dur
    data: dict[str, Any] = {}
    if intervals and ts.ss_bw_data and ts.ss_iops_data:
        if st & FIO_SS_ATTAINED or not st & FIO_SS_BUFFER_FULL:
            j = ts.ss_head
        else:
            j = intervals - 1 if ts.ss_head == 0 else ts.ss_head - 1
        order = [(j + k) % intervals for k in range(intervals)]
        data["bw_mean"] = sum(ts.ss_bw_data[:intervals]) // intervals
        data["iops_mean"] = sum(ts.ss_iops_data[:intervals]) // intervals
        if SS_LAT in features and st & FIO_SS_LAT and ts.ss_lat_data:
            data["lat_mean"] = sum(ts.ss_lat_data[:intervals]) // intervals
            data["lat_ns"] = [ts.ss_lat_data[k] for k in order]
        data["iops"] = [ts.ss_iops_data[k] for k in order]
        data["bw"] = [ts.ss_bw_data[k] for k in order]
    out["data"] = data
    return out


_DU = struct.Struct("<64s11Q")
_DU_AGG = struct.Struct("<10QII d8x".replace(" ", ""))


def decode_du(payload: bytes) -> dict[str, Any]:
    """A DU message (disk_util_stat + disk_util_agg) as raw numbers."""
    if len(payload) < _DU.size + _DU_AGG.size:
        raise DecodeError(f"DU of {len(payload)} bytes is too short")
    name, *s = _DU.unpack_from(payload, 0)
    a = _DU_AGG.unpack_from(payload, _DU.size)
    return {
        "name": name.split(b"\0", 1)[0].decode("utf-8", "replace"),
        "ios": s[0:2],
        "merges": s[2:4],
        "sectors": s[4:6],
        "ticks": s[6:8],
        "io_ticks": s[8],
        "time_in_queue": s[9],
        "msec": s[10],
        "agg": {
            "ios": a[0:2],
            "merges": a[2:4],
            "sectors": a[4:6],
            "ticks": a[6:8],
            "io_ticks": a[8],
            "time_in_queue": a[9],
            "slavecount": a[10],
            "max_util": a[12],
        },
    }


def du_to_json(
    du: dict[str, Any],
    features: frozenset[str] = frozenset(),
    *,
    hostname: str | None = None,
    port: int | None = None,
) -> dict[str, Any]:
    """fio's ``json_array_add_disk_util`` entry, plus hostname/port like the stock client."""
    util = 0.0
    if du["msec"]:
        util = float(100) * du["io_ticks"] / float(du["msec"])
    util = min(util, 100.0)
    sectors = DISK_SECTORS in features
    obj: dict[str, Any] = {"name": du["name"], "read_ios": du["ios"][0], "write_ios": du["ios"][1]}
    if sectors:
        obj["read_sectors"] = du["sectors"][0]
        obj["write_sectors"] = du["sectors"][1]
    obj.update(
        read_merges=du["merges"][0],
        write_merges=du["merges"][1],
        read_ticks=du["ticks"][0],
        write_ticks=du["ticks"][1],
        in_queue=du["time_in_queue"],
        util=util,
    )
    agg = du["agg"]
    n = agg["slavecount"]
    if n:
        obj["aggr_read_ios"] = agg["ios"][0] // n
        obj["aggr_write_ios"] = agg["ios"][1] // n
        if sectors:
            obj["aggr_read_sectors"] = agg["sectors"][0] // n
            obj["aggr_write_sectors"] = agg["sectors"][1] // n
        obj["aggr_read_merges"] = agg["merges"][0] // n
        obj["aggr_write_merge"] = agg["merges"][1] // n
        obj["aggr_read_ticks"] = agg["ticks"][0] // n
        obj["aggr_write_ticks"] = agg["ticks"][1] // n
        obj["aggr_in_queue"] = agg["time_in_queue"] // n
        obj["aggr_util"] = float(agg["max_util"])
    if hostname is not None:
        obj["hostname"] = hostname
    if port is not None:
        obj["port"] = port
    return obj
