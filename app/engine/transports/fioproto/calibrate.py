"""Proof that a protocol Fiometer has not seen decodes with a known layout.

fio raises its protocol number for every change of a structure on the wire, and most changes are to job
options, which Fiometer does not decode: of the 24 numbers from 97 to 121 only three changed the statistics
record (101, 114, 115). So a server of a newer fio is run once with a calibration job whose final numbers are
fixed by the job itself, and its record is decoded with the nearest older layout: only if the record has that
layout's size exactly and every checked field holds what the job makes fio put there is the server decoded
so. The checks sit at the start, the middle and the end of the record (names, the latency histogram against
the I/O count, byte counts, the units after the 32 KiB block table, the group's totals), so a field added or
moved anywhere before them moves them and fails the calibration. A refusal names what differed.
"""

from __future__ import annotations

from .layouts import Layout
from .tstat import FIO_CLAT, DecodeError, parse_ts

CALIBRATION_NAME = "fiometer-calibration"
CALIBRATION_DESCRIPTION = "Fiometer checks how this fio sends its statistics"
CALIBRATION_IOS = 1024
CALIBRATION_BS = 4096
CALIBRATION_JOB = (
    f"[{CALIBRATION_NAME}]\n"
    f"description={CALIBRATION_DESCRIPTION}\n"
    "ioengine=null\n"
    "rw=read\n"
    f"bs={CALIBRATION_BS}\n"
    f"size={CALIBRATION_IOS * CALIBRATION_BS}\n"
    "iodepth=1\n"
    "clat_percentiles=1\n"
)
# fio's default percentile_list (options.c)
DEFAULT_PERCENTILES = (
    1.0,
    5.0,
    10.0,
    20.0,
    30.0,
    40.0,
    50.0,
    60.0,
    70.0,
    80.0,
    90.0,
    95.0,
    99.0,
    99.5,
    99.9,
    99.95,
    99.99,
)


def calibration_problems(payload: bytes, layout: Layout) -> list[str]:
    """What in the final TS record of :data:`CALIBRATION_JOB` does not decode as the job made it, with
    ``layout``; empty when every check holds."""
    if len(payload) != layout.pdu_size:
        return [
            f"its statistics record has {len(payload)} bytes, protocol {layout.protocol}'s {layout.pdu_size}"
        ]
    try:
        ts, rs = parse_ts(payload, layout)
    except DecodeError as e:
        return [str(e)]
    n, nbytes = CALIBRATION_IOS, CALIBRATION_IOS * CALIBRATION_BS
    clat_read = sum(ts.plat[FIO_CLAT][0][1])
    checks = (
        ("job name", ts.name, CALIBRATION_NAME),
        ("description", ts.description, CALIBRATION_DESCRIPTION),
        ("error", ts.error, 0),
        ("members", ts.members, 1),
        ("groupid", ts.groupid, 0),
        ("read I/Os", ts.total_io_u[:3], [n, 0, 0]),
        ("read completion latencies counted", ts.clat_stat[0].samples, n),
        ("read completion latency histogram", clat_read, n),
        ("bytes", ts.io_bytes, [nbytes, 0, 0]),
        ("short and dropped I/Os", ts.short_io_u + ts.drop_io_u, [0] * 6),
        ("error count", ts.total_err_count, 0),
        ("percentile list", ts.percentile_list[: len(DEFAULT_PERCENTILES)], DEFAULT_PERCENTILES),
        ("kB base", ts.kb_base, 1024),
        ("significant figures", ts.sig_figs, 4),
        ("priority records", ts.nr_clat_prio, [0, 0, 0]),
        ("group bytes", rs.iobytes, [nbytes, 0, 0]),
        ("group kB base", rs.kb_base, 1024),
        ("group significant figures", rs.sig_figs, 4),
    )
    return [f"{what}: {got!r} decoded, {want!r} expected" for what, got, want in checks if got != want]
