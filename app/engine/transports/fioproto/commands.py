"""fio network opcodes, the payloads Fiometer sends, and parsers for the small replies.

Layouts of these payloads are the same in every supported version (fio 3.31-3.42).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from .tstat import DecodeError


class Op(IntEnum):
    QUIT = 1
    EXIT = 2
    JOB = 3
    JOBLINE = 4
    TEXT = 5
    TS = 6
    GS = 7
    SEND_ETA = 8
    ETA = 9
    PROBE = 10
    START = 11
    STOP = 12
    DU = 13
    SERVER_START = 14
    ADD_JOB = 15
    RUN = 16
    IOLOG = 17
    UPDATE_JOB = 18
    LOAD_FILE = 19
    VTRIGGER = 20
    SENDFILE = 21
    JOB_OPT = 22


CLIENT_TYPE_CLI = 1
CLIENT_TYPE_GUI = 2
PROBE_FLAG_ZLIB = 1

# TEXT levels (fio's log.h)
LOG_DEBUG, LOG_INFO, LOG_ERR = 1, 2, 3


# --- payloads the client sends ---------------------------------------------------------------


def probe_pdu(flags: int = 0, server: str = "") -> bytes:
    """PROBE: u64 flags (bit 0: client accepts zlib-compressed IOLOG), char server[128]."""
    return struct.pack("<Q128s", flags, server.encode()[:127])


def jobline_pdu(args: Sequence[str], client_type: int = CLIENT_TYPE_CLI) -> bytes:
    """JOBLINE: the server parses ``args`` like a command line (``args[0]`` must be "fio")."""
    if not args or args[0] != "fio":
        raise ValueError('JOBLINE arguments must start with "fio"')
    parts = [struct.pack("<HH", len(args), client_type)]
    for arg in args:
        raw = arg.encode() + b"\0"
        if len(raw) > 0xFFFF:
            raise ValueError("JOBLINE argument too long")
        parts.append(struct.pack("<H", len(raw)) + raw)
    return b"".join(parts)


def job_pdu(job_text: str, client_type: int = CLIENT_TYPE_CLI) -> bytes:
    """JOB: u32 buf_len, u32 client_type, then the job file text (the server adds the NUL)."""
    raw = job_text.encode()
    return struct.pack("<II", len(raw), client_type) + raw


# --- replies and events from the server --------------------------------------------------------

OS_NAMES = (
    "Invalid",
    "Linux",
    "AIX",
    "FreeBSD",
    "HP-UX",
    "OSX",
    "NetBSD",
    "OpenBSD",
    "Solaris",
    "Windows",
    "Android",
    "DragonFly",
    "QNX",
)
_ARCH_OLD = (
    "Invalid",
    "x86-64",
    "x86",
    "ppc",
    "ia64",
    "s390",
    "alpha",
    "sparc",
    "sparc64",
    "arm",
    "sh",
    "hppa",
    "mips",
    "aarch64",
    "generic",
)
# fio 3.36 (protocol 101) inserted loongarch64 and riscv64 before "generic".
_ARCH_NEW = _ARCH_OLD[:14] + ("loongarch64", "riscv64", "generic")


@dataclass(frozen=True)
class ProbeReply:
    hostname: str
    bigendian: bool
    fio_version: str  # e.g. "fio-3.33"
    os: str
    arch: str
    bits: int  # pointer size in bits
    cpus: int
    flags: int


_PROBE_REPLY = struct.Struct("<64sB32sBBBIQ")  # 112 bytes


def _cstr(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def parse_probe_reply(payload: bytes, protocol: int) -> ProbeReply:
    if len(payload) < _PROBE_REPLY.size:
        raise DecodeError(f"PROBE reply of {len(payload)} bytes is too short")
    host, be, ver, os_nr, arch_nr, bpp, cpus, flags = _PROBE_REPLY.unpack_from(payload)
    arches = _ARCH_NEW if protocol >= 101 else _ARCH_OLD
    return ProbeReply(
        hostname=_cstr(host),
        bigendian=bool(be),
        fio_version=_cstr(ver),
        os=OS_NAMES[os_nr] if os_nr < len(OS_NAMES) else f"unknown ({os_nr})",
        arch=arches[arch_nr] if arch_nr < len(arches) else f"unknown ({arch_nr})",
        bits=bpp * 8,
        cpus=cpus,
        flags=flags,
    )


@dataclass(frozen=True)
class Text:
    level: int
    text: str
    sec: int = 0
    usec: int = 0


_TEXT = struct.Struct("<IIQQ")


def parse_text(payload: bytes) -> Text:
    if len(payload) < _TEXT.size:
        raise DecodeError("TEXT message too short")
    level, buf_len, sec, usec = _TEXT.unpack_from(payload)
    body = payload[_TEXT.size : _TEXT.size + buf_len]
    return Text(level, body.split(b"\0", 1)[0].decode("utf-8", "replace"), sec, usec)


def text_pdu(text: str, level: int = LOG_INFO) -> bytes:
    """A TEXT payload (used by tests that play the server's part)."""
    raw = text.encode()
    return _TEXT.pack(level, len(raw), 0, 0) + raw


def stop_pdu(error: int = 0, signal: int = 0) -> bytes:
    """STOP (server to client only; fio rejects a STOP from a client). For fake servers in tests."""
    return struct.pack("<II", error, signal)


def start_pdu(jobs: int, stat_outputs: int) -> bytes:
    """START (server to client). For fake servers in tests."""
    return struct.pack("<II", jobs, stat_outputs)


def parse_stop(payload: bytes) -> tuple[int, int]:
    """STOP: (error, signal) of the finished run."""
    if len(payload) < 8:
        raise DecodeError("STOP message too short")
    return struct.unpack_from("<II", payload)


def parse_start(payload: bytes) -> tuple[int, int]:
    """START: (jobs, stat_outputs). stat_outputs is how many TS each status report holds."""
    if len(payload) < 8:
        raise DecodeError("START message too short")
    return struct.unpack_from("<II", payload)


@dataclass(frozen=True)
class JobOption:
    is_global: bool
    truncated: bool
    index: int  # for non-global options: the index of the TS that follows (fio calls it groupid)
    name: str
    value: str


_JOB_OPT = struct.Struct("<HHI64s128s")  # 200 bytes


def parse_job_opt(payload: bytes) -> JobOption:
    if len(payload) < _JOB_OPT.size:
        raise DecodeError("JOB_OPT message too short")
    is_global, truncated, index, name, value = _JOB_OPT.unpack_from(payload)
    return JobOption(bool(is_global), bool(truncated), index, _cstr(name), _cstr(value))


def parse_du(payload: bytes) -> dict[str, Any]:
    """DU: one disk's utilisation (disk_util_stat + disk_util_agg); see :func:`.decode.du_to_json`."""
    from .decode import decode_du

    return decode_du(payload)
