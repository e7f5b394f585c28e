"""Reader for relay recordings of fio client/server traffic (``tests/fixtures/fio-captures/*.cap``), for tests
and benchmarks.

Record format, repeated to the end of the file (little-endian): float64 seconds since the
connection opened, uint8 direction (0 = client to server, 1 = server to client), uint32 length,
then that many bytes of TCP payload. Records are TCP reads, not protocol frames.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from app.engine.transports.fioproto.frames import FrameReader, Packet

_RECORD = struct.Struct("<dBI")
CLIENT_TO_SERVER = 0
SERVER_TO_CLIENT = 1


@dataclass(frozen=True)
class TimedPacket:
    time: float  # seconds since the connection opened, when the completing bytes arrived
    direction: int
    packet: Packet


def read_records(path: str | Path) -> list[tuple[float, int, bytes]]:
    data = Path(path).read_bytes()
    out = []
    pos = 0
    while pos < len(data):
        t, direction, length = _RECORD.unpack_from(data, pos)
        pos += _RECORD.size
        out.append((t, direction, data[pos : pos + length]))
        pos += length
    return out


def read_packets(path: str | Path, *, verify_payload_crc: bool = True) -> list[TimedPacket]:
    """Every protocol message of the recording, both directions, in arrival order."""
    readers = {
        CLIENT_TO_SERVER: FrameReader(verify_payload_crc=verify_payload_crc),
        SERVER_TO_CLIENT: FrameReader(verify_payload_crc=verify_payload_crc),
    }
    out = []
    for t, direction, chunk in read_records(path):
        for packet in readers[direction].feed(chunk):
            out.append(TimedPacket(t, direction, packet))
    return out
