"""fio's wire framing: a 24-byte little-endian header per fragment, CRC-16/ARC, fragments of <= 1024 bytes.

Header (``struct fio_net_cmd``): u16 version, u16 opcode, u32 flags, u64 tag, u32 pdu_len,
u16 cmd_crc16 (over the first 20 header bytes), u16 pdu_crc16 (over this fragment's payload).
A payload above 1024 bytes travels as several fragments with the same opcode; every one but the
last has ``F_MORE`` set. Both directions follow the same rules.
"""

from __future__ import annotations

import re
import struct
from array import array
from dataclasses import dataclass

HEADER = struct.Struct("<HHIQIHH")
HEADER_SIZE = HEADER.size  # 24
_HEAD20 = struct.Struct("<HHIQI")  # the part of the header covered by cmd_crc16
_CRC_AT = struct.Struct("<H")
CRC_COVERED = 20  # header bytes covered by cmd_crc16
MAX_FRAGMENT = 1024  # FIO_SERVER_MAX_FRAGMENT_PDU
F_MORE = 1
MAX_MESSAGE = 64 * 1024 * 1024  # a sanity bound well above the largest TS (about 0.2-1 MB)


class ProtocolError(Exception):
    """The byte stream does not follow fio's framing (bad CRC, oversize fragment, mixed opcodes)."""


def _make_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
        table.append(crc)
    return table


CRC_TABLE = _make_table()


def crc16_slow(data: bytes | bytearray | memoryview) -> int:
    """CRC-16/ARC (reflected 0x8005, init 0, no final xor), one byte at a time."""
    crc = 0
    table = CRC_TABLE
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


# CRC-16/ARC with init 0 and no final xor is linear over GF(2): the CRC of a buffer is the XOR of
# the contributions of its bytes, and a zero byte contributes nothing. _BYTE_AT[d][b] is the
# contribution of byte value b followed by d bytes. fio's TS payload is mostly zeros (empty
# histogram bins, unused block_infos), so summing contributions of the non-zero bytes is far
# cheaper in Python than the byte loop.
def _make_positional(max_len: int) -> list[array[int]]:
    rows = [array("H", CRC_TABLE)]  # d = 0: the CRC of the single byte b
    zero_step = [CRC_TABLE[c & 0xFF] ^ (c >> 8) for c in range(65536)]  # register after one zero byte
    for _ in range(1, max_len):
        rows.append(array("H", [zero_step[v] for v in rows[-1]]))
    return rows


_byte_at: list[array[int]] = []  # built on first use (about 20 ms, 512 KiB)
_NONZERO = re.compile(rb"[^\x00]+")


def crc16(data: bytes | bytearray) -> int:
    """CRC-16/ARC of ``data`` (same value as :func:`crc16_slow`), fast for zero-heavy buffers."""
    n = len(data)
    if n > MAX_FRAGMENT:
        return crc16_slow(data)
    zeros = data.count(0)
    if zeros == n:
        return 0
    if zeros * 2 < n:  # dense data: the plain loop is cheaper
        return crc16_slow(data)
    if not _byte_at:
        _byte_at.extend(_make_positional(MAX_FRAGMENT))
    crc = 0
    rows = _byte_at
    last = n - 1
    for m in _NONZERO.finditer(data):
        pos = last - m.start()
        for b in m.group():
            crc ^= rows[pos][b]
            pos -= 1
    return crc


@dataclass(frozen=True)
class Packet:
    """One complete (reassembled) protocol message."""

    version: int
    opcode: int
    tag: int
    payload: bytes


def encode_fragment(version: int, opcode: int, payload: bytes, *, tag: int = 0, more: bool = False) -> bytes:
    if len(payload) > MAX_FRAGMENT:
        raise ValueError(f"fragment payload of {len(payload)} bytes exceeds {MAX_FRAGMENT}")
    flags = F_MORE if more else 0
    head = _HEAD20.pack(version, opcode, flags, tag, len(payload))
    return head + struct.pack("<HH", crc16_slow(head), crc16(payload)) + payload


def encode(version: int, opcode: int, payload: bytes = b"", *, tag: int = 0) -> bytes:
    """The bytes of one message, cut into fragments as fio requires."""
    if len(payload) <= MAX_FRAGMENT:
        return encode_fragment(version, opcode, payload, tag=tag)
    parts = []
    for start in range(0, len(payload), MAX_FRAGMENT):
        chunk = payload[start : start + MAX_FRAGMENT]
        more = start + MAX_FRAGMENT < len(payload)
        parts.append(encode_fragment(version, opcode, chunk, tag=tag, more=more))
    return b"".join(parts)


class FrameReader:
    """Incremental parser: :meth:`feed` raw bytes, iterate complete :class:`Packet` objects.

    ``verify_payload_crc`` can be turned off to save CPU (TCP already checksums the data);
    header CRCs are always verified since they guard the framing itself.
    """

    def __init__(self, *, verify_payload_crc: bool = True) -> None:
        self.verify_payload_crc = verify_payload_crc
        self._buf = bytearray()
        self._pos = 0
        self._parts: list[bytes | bytearray] = []
        self._first: tuple[int, int, int] | None = None  # version, opcode, tag of the message being joined
        self._joined = 0
        self._header_crc_cache: dict[tuple[int, int, int, int, int], int] = {}

    @property
    def pending(self) -> int:
        """Bytes received but not yet part of a complete message."""
        return len(self._buf) - self._pos + sum(len(p) for p in self._parts)

    def feed(self, data: bytes | bytearray | memoryview) -> list[Packet]:
        """Add received bytes; return the messages they complete, in order."""
        self._buf += data
        return self._drain()

    def _header_crc(self, key: tuple[int, int, int, int, int]) -> int:
        """CRC of a header's first 20 bytes, cached by their values (continuation fragments of a
        message all have the same header, so this is nearly always a dictionary hit)."""
        cache = self._header_crc_cache
        crc = cache.get(key)
        if crc is None:
            crc = crc16_slow(_HEAD20.pack(*key))
            if len(cache) < 4096:
                cache[key] = crc
        return crc

    def _drain(self) -> list[Packet]:
        out: list[Packet] = []
        buf = self._buf
        pos = self._pos
        end = len(buf)
        unpack = HEADER.unpack_from
        crc_cache = self._header_crc_cache
        parts = self._parts
        verify = self.verify_payload_crc
        while end - pos >= HEADER_SIZE:
            version, opcode, flags, tag, pdu_len, cmd_crc, pdu_crc = unpack(buf, pos)
            key = (version, opcode, flags, tag, pdu_len)
            if crc_cache.get(key) != cmd_crc and self._header_crc(key) != cmd_crc:
                raise ProtocolError("bad header CRC from fio server")
            if pdu_len > MAX_FRAGMENT:
                raise ProtocolError(f"fragment of {pdu_len} bytes exceeds fio's limit of {MAX_FRAGMENT}")
            start = pos + HEADER_SIZE
            if end - start < pdu_len:
                break
            pos = start + pdu_len
            chunk = buf[start:pos]
            if verify and crc16(chunk) != pdu_crc:
                raise ProtocolError("bad payload CRC from fio server")
            first = self._first
            if first is None:
                self._first = (version, opcode, tag)
            elif first[1] != opcode:
                raise ProtocolError(f"fragment opcode mismatch ({first[1]} != {opcode})")
            parts.append(chunk)
            if flags & F_MORE:
                # Fast path: the following fragments of a big message repeat this header's first
                # 22 bytes (everything but the payload CRC); a byte comparison validates them.
                same = bytes(buf[pos - pdu_len - HEADER_SIZE : pos - pdu_len - 2])
                step = HEADER_SIZE + pdu_len
                joined = self._joined + pdu_len
                while end - pos >= step and buf.startswith(same, pos):
                    start = pos + HEADER_SIZE
                    chunk = buf[start : pos + step]
                    if verify and crc16(chunk) != _CRC_AT.unpack_from(buf, pos + HEADER_SIZE - 2)[0]:
                        raise ProtocolError("bad payload CRC from fio server")
                    parts.append(chunk)
                    joined += pdu_len
                    pos += step
                self._joined = joined
                if joined > MAX_MESSAGE:
                    raise ProtocolError("message from fio server is implausibly large")
                continue
            v, op, t = self._first  # type: ignore[misc]
            payload = bytes(parts[0]) if len(parts) == 1 else b"".join(parts)
            parts.clear()
            self._first = None
            self._joined = 0
            out.append(Packet(v, op, t, payload))
        if pos == end:
            buf.clear()
            pos = 0
        elif pos > 65536 and pos * 2 > end:
            del buf[:pos]
            pos = 0
        self._pos = pos
        return out
