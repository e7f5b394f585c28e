"""TS decoding against fio's own JSON for the very same bytes (tests/fixtures/fio-captures)."""

from __future__ import annotations

import copy
import struct

import pytest

from app.engine.transports.fioproto.decode import decode_du, decode_ts, du_to_json
from app.engine.transports.fioproto.layouts import (
    EXPECTED_PDU_SIZE,
    LAYOUTS,
    UnsupportedVersion,
    layout_for,
    supported_fio_versions,
)
from app.engine.transports.fioproto.statmath import calc_percentiles, percentile_threshold, plat_idx_to_val
from app.engine.transports.fioproto.tstat import DecodeError
from tests.fioproto_support import CAPTURES, as_printed, compare, find_captures, load_fio_json, server_packets

EXPECTED = {  # capture -> (protocol, client_stats entries, TS pdu_len)
    "fio-3.33-randread-psync": (97, 6, 184056),
    "fio-3.33-job2": (97, 5, 184056),
    "fio-3.33-cmdprio": (97, 3, 213880),
    "fio-3.41-job3": (113, 5, 184064),
    "fio-3.42-job3": (120, 5, 184072),
}


def count_leaves(obj) -> int:
    if isinstance(obj, dict):
        return sum(count_leaves(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(count_leaves(v) for v in obj)
    return 1


def decoded(name: str):
    stock = load_fio_json((find_captures() / f"{name}.json").read_text())
    host, port = stock["client_stats"][0]["hostname"], stock["client_stats"][0]["port"]
    packets = [p.packet for p in server_packets(name)]
    layout = layout_for(packets[0].version)
    jobs = [decode_ts(p.payload, layout, hostname=host, port=port) for p in packets if p.opcode == 6]
    dus = [
        du_to_json(decode_du(p.payload), layout.features, hostname=host, port=port)
        for p in packets
        if p.opcode == 13
    ]
    return stock, packets, jobs, dus


@pytest.mark.parametrize("name", CAPTURES)
def test_every_interval_matches_stock_client_json_exactly(name):
    stock, packets, jobs, dus = decoded(name)
    protocol, n_entries, pdu_len = EXPECTED[name]
    assert packets[0].version == protocol
    assert {len(p.payload) for p in packets if p.opcode == 6} == {pdu_len}
    assert len(jobs) == len(stock["client_stats"]) == n_entries
    problems, leaves = compare(as_printed(jobs), stock["client_stats"], "client_stats")
    assert problems == []
    assert leaves == count_leaves(stock["client_stats"])  # every value fio printed was compared
    n_bins = sum(
        len(lat.get("bins", {}))
        for e in stock["client_stats"]
        for d in ("read", "write")
        for lat in (e[d]["slat_ns"], e[d]["clat_ns"], e[d]["lat_ns"])
    )
    assert n_bins > 100 * n_entries
    problems, _ = compare(as_printed(dus), stock["disk_util"], "disk_util")
    assert problems == []


def test_comparison_notices_a_single_changed_bin():
    stock, _, jobs, _ = decoded("fio-3.33-randread-psync")
    bad = copy.deepcopy(jobs)
    key = next(iter(bad[-1]["read"]["clat_ns"]["bins"]))
    bad[-1]["read"]["clat_ns"]["bins"][key] += 1
    problems, _ = compare(as_printed(bad), stock["client_stats"])
    assert len(problems) == 1 and "bins" in problems[0]


def test_cmdprio_record_is_larger_than_the_struct_and_its_prios_decode():
    stock, packets, jobs, _ = decoded("fio-3.33-cmdprio")
    ts = [p for p in packets if p.opcode == 6]
    assert all(len(p.payload) > layout_for(97).pdu_size for p in ts)
    prios = jobs[-1]["read"]["prios"]
    assert [(p["prioclass"], p["prio"]) for p in prios] == [
        (e["prioclass"], e["prio"]) for e in stock["client_stats"][-1]["read"]["prios"]
    ]
    assert sum(p["clat_ns"]["N"] for p in prios) == jobs[-1]["read"]["clat_ns"]["N"]


def test_shape_follows_the_server_version():
    _, _, j97, _ = decoded("fio-3.33-job2")
    _, _, j113, d113 = decoded("fio-3.41-job3")
    _, _, j120, _ = decoded("fio-3.42-job3")
    assert "job_start" not in j97[0] and "job_start" in j113[0] and "job_start" in j120[0]
    assert "latency_target_ns" not in j113[0] and "latency_target_ns" in j120[0]
    assert "read_sectors" in d113[0]
    # cumulative numbers grow from interval to interval
    ios = [j["read"]["total_ios"] for j in j120]
    assert ios == sorted(ios) and ios[0] > 0


@pytest.mark.parametrize("protocol", sorted(LAYOUTS))
def test_layout_sizes_match_fio(protocol):
    lay = layout_for(protocol)
    assert lay.pdu_size == EXPECTED_PDU_SIZE[protocol]
    assert lay.ts["sync_stat"].offset % 8 == 0
    assert lay.gs["max_run"].offset == lay.ts_size


def test_reference_offsets_for_protocol_97_and_101():
    # offsets given in docs/reference/fio.md ("The TS record")
    t97, t101 = layout_for(97).ts, layout_for(101).ts
    assert (t97["sync_stat"].offset, t97["io_u_plat"].offset, t97["total_io_u"].offset) == (544, 2248, 150728)
    assert (t97["io_bytes"].offset, t97["runtime"].offset, t97["ss_dur"].offset) == (150824, 150848, 183732)
    assert (t97["clat_prio_offset"].offset, t97["cachemiss"].offset) == (183832, 183876)
    assert (t101["pid"].offset, t101["io_u_plat"].offset, t101["io_bytes"].offset) == (276, 2256, 150832)


def test_short_payload_and_unknown_version_are_refused_plainly():
    with pytest.raises(DecodeError, match="shorter"):
        decode_ts(bytes(1000), 97)
    with pytest.raises(UnsupportedVersion) as exc:
        layout_for(95)
    msg = str(exc.value)
    assert "95" in msg and "fio 3.31-3.33 (protocol 97)" in msg and "fio 3.42 (protocol 120)" in msg
    assert msg.endswith(supported_fio_versions())


def test_percentile_threshold_follows_fios_compiled_arithmetic():
    from fractions import Fraction

    from app.engine.transports.fioproto.statmath import LD_HUNDREDTH

    # the 80-bit constant 0.01L in fio's binaries: bytes 0a d7 a3 70 3d 0a d7 a3 f8 3f
    assert Fraction(0xA3D70A3D70A3D70A, 2**70) == LD_HUNDREDTH
    # seen live with fio 3.42 (cmdprio, mixed prios): the 60th percentile of 3035 samples is the
    # bin where the running count reaches 1821; (long double) 60 / 100.0 * 3035 would need 1822
    assert percentile_threshold(60.0, 3035) == 1821
    assert percentile_threshold(50.0, 1000) == 500
    assert percentile_threshold(99.99, 12345) == 12344
    assert calc_percentiles(((10, 20), (1821, 1214)), 3035, [60.0]) == [10]  # bins 10 and 20
    assert calc_percentiles(((10, 20), (1820, 1215)), 3035, [60.0]) == [20]


def test_bin_values():
    assert [plat_idx_to_val(i) for i in (0, 127, 128, 129, 191, 192)] == [0, 127, 129, 131, 255, 258]
    assert plat_idx_to_val(1855) == (1 << 33) + (127 << 26)


def test_job_options_are_attached_like_local_fio():
    _, packets, _, _ = decoded("fio-3.33-randread-psync")
    payload = next(p.payload for p in packets if p.opcode == 6)
    job = decode_ts(payload, 97, job_options={"bs": "4k"})
    assert list(job)[:4] == ["jobname", "groupid", "error", "job options"]
    assert job["job options"] == {"bs": "4k"}


def test_unified_rw_both_adds_a_mixed_section():
    _, packets, jobs, _ = decoded("fio-3.33-job2")
    payload = bytearray(next(p.payload for p in reversed(packets) if p.opcode == 6))
    lay = layout_for(97)
    struct.pack_into("<I", payload, lay.ts["unified_rw_rep"].offset, 2)
    job = decode_ts(bytes(payload), lay)
    mixed = job["mixed"]
    assert mixed["total_ios"] == job["read"]["total_ios"] + job["write"]["total_ios"]
    assert mixed["io_bytes"] == job["read"]["io_bytes"] + job["write"]["io_bytes"]
    assert mixed["clat_ns"]["N"] == job["read"]["clat_ns"]["N"] + job["write"]["clat_ns"]["N"]
    assert sum(mixed["clat_ns"]["bins"].values()) == mixed["clat_ns"]["N"]
    assert min(job["read"]["clat_ns"]["min"], job["write"]["clat_ns"]["min"]) == mixed["clat_ns"]["min"]
    struct.pack_into("<I", payload, lay.ts["unified_rw_rep"].offset, 1)
    only = decode_ts(bytes(payload), lay)
    assert "mixed" in only and "read" not in only and "sync" not in only


@pytest.mark.parametrize("seed", range(4))
def test_sparse_row_finds_exactly_the_non_zero_bins(seed):
    import random

    from app.engine.transports.fioproto.tstat import sparse_row

    rnd = random.Random(seed)
    for _ in range(300):
        row = [0] * 1856
        for _ in range(rnd.choice([0, 1, 2, 5, 50, 400])):
            i = rnd.randrange(1856) if rnd.random() < 0.7 else rnd.choice([0, 63, 64, 1792, 1855])
            row[i] = rnd.choice([1, 255, 256, 2**40])
        pre = bytes(8 * rnd.randrange(3))
        payload = pre + struct.pack("<1856Q", *row) + b"\xff" * 8  # neighbours must not leak in
        expected = (tuple(i for i, v in enumerate(row) if v), tuple(v for v in row if v))
        assert sparse_row(payload, len(pre)) == expected


def test_recorded_fio_3_42_cmdprio_mixed_session_matches_exactly():
    import gzip
    from pathlib import Path

    from app.engine.transports.fioproto.frames import FrameReader

    base = Path(__file__).resolve().parents[1] / "fixtures" / "fioproto" / "fio-3.42-iouring-cmdprio-mixed"
    stock = load_fio_json(gzip.decompress(Path(f"{base}.json.gz").read_bytes()).decode())
    packets = FrameReader().feed(gzip.decompress(Path(f"{base}.s2c.gz").read_bytes()))
    expected = stock["client_stats"]
    host, port = expected[0]["hostname"], expected[0]["port"]
    layout = layout_for(packets[0].version)
    assert layout.protocol == 120
    ours = [decode_ts(p.payload, layout, hostname=host, port=port) for p in packets if p.opcode == 6]
    problems, leaves = compare(as_printed(ours), expected)
    assert problems == [] and leaves == count_leaves(expected)
    assert "prios" in ours[0]["mixed"] and "priohint" in ours[0]["mixed"]["prios"][0]
