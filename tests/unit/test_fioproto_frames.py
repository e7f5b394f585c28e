"""fio wire framing: CRC-16/ARC, fragmentation, reassembly."""

from __future__ import annotations

import random
import struct

import pytest

from app.engine.transports.fioproto import frames
from app.engine.transports.fioproto.frames import (
    F_MORE,
    HEADER_SIZE,
    MAX_FRAGMENT,
    FrameReader,
    ProtocolError,
    crc16,
    crc16_slow,
    encode,
    encode_fragment,
)
from tests.fioproto_recording import read_packets
from tests.fioproto_support import CAPTURES, find_captures


def test_crc16_arc_check_value():
    assert crc16_slow(b"123456789") == 0xBB3D
    assert crc16(b"123456789") == 0xBB3D
    assert crc16(b"") == 0


@pytest.mark.parametrize("seed", range(20))
def test_fast_crc_equals_bytewise_crc(seed):
    rnd = random.Random(seed)
    n = rnd.choice([1, 2, 7, 100, 760, 1023, 1024])
    data = bytearray(n)
    for _ in range(rnd.randrange(0, n + 1)):  # sparse, like fio's histograms
        data[rnd.randrange(n)] = rnd.randrange(256)
    assert crc16(bytes(data)) == crc16_slow(bytes(data))
    assert crc16(data) == crc16_slow(data)


def headers(wire: bytes) -> list[tuple[int, int, int, int, int]]:
    out, pos = [], 0
    while pos < len(wire):
        version, opcode, flags, tag, pdu_len, _, _ = struct.unpack_from("<HHIQIHH", wire, pos)
        out.append((version, opcode, flags, tag, pdu_len))
        pos += HEADER_SIZE + pdu_len
    return out


@pytest.mark.parametrize("size", [0, 1, 1023, 1024, 1025, 3095, 184056, 213880])
def test_fragmentation_round_trip(size):
    payload = random.Random(size).randbytes(size)
    wire = encode(97, 6, payload, tag=42)
    hs = headers(wire)
    assert len(hs) == max(1, -(-size // MAX_FRAGMENT))
    assert all(h[4] <= MAX_FRAGMENT for h in hs)
    assert [bool(h[2] & F_MORE) for h in hs] == [True] * (len(hs) - 1) + [False]
    assert {(h[0], h[1], h[3]) for h in hs} == {(97, 6, 42)}
    packets = FrameReader().feed(wire)
    assert len(packets) == 1
    assert (packets[0].version, packets[0].opcode, packets[0].tag, packets[0].payload) == (97, 6, 42, payload)


def test_reader_handles_arbitrary_read_boundaries():
    msgs = [(5, b"hello"), (6, bytes(5000)), (7, b"x" * 1024), (1, b"")]
    wire = b"".join(encode(113, op, p) for op, p in msgs)
    rnd = random.Random(1)
    reader = FrameReader()
    got = []
    pos = 0
    while pos < len(wire):
        step = rnd.randrange(1, 700)
        got += reader.feed(wire[pos : pos + step])
        pos += step
    assert [(p.opcode, p.payload) for p in got] == msgs
    assert reader.pending == 0


def test_bad_header_crc_is_rejected():
    wire = bytearray(encode(97, 10, b"abc"))
    wire[20] ^= 0xFF
    with pytest.raises(ProtocolError, match="header CRC"):
        FrameReader().feed(bytes(wire))


def test_bad_payload_crc_is_rejected_unless_not_verified():
    wire = bytearray(encode(97, 6, bytes(2000)))
    wire[HEADER_SIZE + 5] = 1  # corrupt the first fragment's payload
    with pytest.raises(ProtocolError, match="payload CRC"):
        FrameReader().feed(bytes(wire))
    assert FrameReader(verify_payload_crc=False).feed(bytes(wire))[0].payload[5] == 1


def test_oversize_fragment_and_opcode_mismatch_are_rejected():
    head = struct.pack("<HHIQI", 97, 6, 0, 0, MAX_FRAGMENT + 1)
    big = head + struct.pack("<HH", crc16_slow(head), 0)
    with pytest.raises(ProtocolError, match="exceeds"):
        FrameReader().feed(big)
    mixed = encode_fragment(97, 6, b"a", more=True) + encode_fragment(97, 7, b"b")
    with pytest.raises(ProtocolError, match="opcode mismatch"):
        FrameReader().feed(mixed)
    with pytest.raises(ValueError):
        encode_fragment(97, 6, bytes(MAX_FRAGMENT + 1))


@pytest.mark.parametrize("name", CAPTURES)
def test_every_recorded_frame_passes_both_crcs(name):
    packets = read_packets(find_captures() / f"{name}.cap", verify_payload_crc=True)
    ts = [p.packet for p in packets if p.packet.opcode == 6]
    assert ts, "the recording has TS messages"
    # re-encoding what we decoded gives back frames fio accepts (same CRCs as fio computed)
    for p in packets[:10]:
        assert (
            FrameReader().feed(encode(p.packet.version, p.packet.opcode, p.packet.payload, tag=p.packet.tag))[
                0
            ]
            == p.packet
        )


def test_continuation_fragments_are_checked_too():
    payload = bytes(5000)
    wire = encode(97, 6, payload)
    third = 2 * (HEADER_SIZE + MAX_FRAGMENT)  # header of the third fragment
    bad_payload = bytearray(wire)
    bad_payload[third + HEADER_SIZE + 10] = 7
    with pytest.raises(ProtocolError, match="payload CRC"):
        FrameReader().feed(bytes(bad_payload))
    bad_header = bytearray(wire)
    bad_header[third + 8] ^= 1  # the tag of one continuation fragment
    with pytest.raises(ProtocolError, match="header CRC"):
        FrameReader().feed(bytes(bad_header))
    # a continuation fragment with another (valid) header is still joined correctly
    parts = [
        encode_fragment(97, 6, b"a" * 1024, more=True),
        encode_fragment(97, 6, b"b" * 10, more=True),
        encode_fragment(97, 6, b"c" * 1024, more=True),
        encode_fragment(97, 6, b"d"),
    ]
    (pkt,) = FrameReader().feed(b"".join(parts))
    assert pkt.payload == b"a" * 1024 + b"b" * 10 + b"c" * 1024 + b"d"


def test_client_payloads_have_fios_layouts():
    from app.engine.transports.fioproto.commands import (
        job_pdu,
        jobline_pdu,
        parse_probe_reply,
        parse_start,
        parse_stop,
        parse_text,
        probe_pdu,
        start_pdu,
        stop_pdu,
        text_pdu,
    )
    from tests.fioproto_support import probe_reply_payload

    assert len(probe_pdu()) == 136 and probe_pdu(1)[:8] == b"\x01" + bytes(7)
    # byte for byte what the stock client sent in the 3.33 recording
    assert jobline_pdu(["fio", "--status-interval=1", "--output-format=json+"]) == (
        b"\x03\x00\x01\x00\x04\x00fio\x00\x14\x00--status-interval=1\x00\x16\x00--output-format=json+\x00"
    )
    with pytest.raises(ValueError):
        jobline_pdu(["--status-interval=1"])
    assert job_pdu("[x]\n") == b"\x04\x00\x00\x00\x01\x00\x00\x00[x]\n"
    assert parse_stop(stop_pdu(1, 9)) == (1, 9) and parse_start(start_pdu(2, 1)) == (2, 1)
    t = parse_text(text_pdu("fio: hello\n", 3))
    assert (t.level, t.text) == (3, "fio: hello\n")
    info = parse_probe_reply(probe_reply_payload("fio-3.42", "h"), 120)
    assert (info.hostname, info.fio_version, info.os, info.arch, info.bits, info.cpus) == (
        "h",
        "fio-3.42",
        "Linux",
        "x86-64",
        64,
        4,
    )


def test_crc_of_a_buffer_longer_than_a_fragment_is_the_bytewise_crc():
    data = random.Random(7).randbytes(MAX_FRAGMENT + 1) + bytes(500)
    assert crc16(data) == crc16_slow(data)


def test_a_message_past_the_size_bound_is_refused(monkeypatch):
    """fio's largest message (a TS record) is about 1 MB; one that keeps growing past MAX_MESSAGE (64 MiB) is
    refused rather than held. The bound lowered to 4 fragments to say it without 64 MiB of traffic."""
    monkeypatch.setattr(frames, "MAX_MESSAGE", 4 * MAX_FRAGMENT)
    with pytest.raises(ProtocolError, match="implausibly large"):
        FrameReader().feed(encode(97, 6, bytes(6 * MAX_FRAGMENT)))
    assert len(FrameReader().feed(encode(97, 6, bytes(3 * MAX_FRAGMENT)))[0].payload) == 3 * MAX_FRAGMENT
