"""Any value a server can send: every thread-status field of a real fio 3.33 record (protocol 97, recorded:
tests/fixtures/fio-captures) set to each extreme value, decoded through the real session
(fioproto.decoder -> decode.ts_to_json), then fed to every sink a report reaches: the step watch's checks,
the telemetry (samples, whole-step results), the JSON writer (the final document, ``show --json``),
pickling (the run's own process), and SQLite's integers (the store). Either the manager fails with the
field and its value named, or every number that goes on fits every sink.

The family: every field x every extreme value (``FIELDS`` x ``U64``/``FP64``); hypothesis picks which
element of a field and which value, and a fixed list walks every field once with 2^64-1."""

from __future__ import annotations

import contextlib
import math
import pickle
import sqlite3
import struct
from dataclasses import astuple

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine.common.plausible import MAX_VALUE
from app.engine.run.step_watch import StepWatch
from app.engine.sampling.telemetry import StepTelemetry
from app.engine.transports.fioproto.commands import Op
from app.engine.transports.fioproto.decoder import RunDecoder
from app.engine.transports.fioproto.frames import Packet
from app.engine.transports.fioproto.layouts import layout_for
from app.engine.transports.fioproto.tstat import parse_ts
from app.engine.transports.transport import Finished, Snapshot
from tests.fioproto_support import server_packets

CAPTURE = "fio-3.33-randread-psync"
PACKETS = [tp.packet for tp in server_packets(CAPTURE)]
LAYOUT = layout_for(97)
TS_OP = next(p.opcode for p in PACKETS if len(p.payload) >= LAYOUT.ts_size and p.version == 97)
JOBNAME = parse_ts(next(p.payload for p in PACKETS if p.opcode == TS_OP), LAYOUT)[0].name
SIZES = {"u16": 2, "u32": 4, "u64": 8, "fp64": 16, "io_stat": 40}
FIELDS = sorted(
    (name, slot) for name, slot in LAYOUT.ts.items() if slot.kind in SIZES
)  # every numeric field of struct thread_stat at protocol 97
U64 = [2**64 - 1, 2**63, 2**63 - 1, 2**62, MAX_VALUE, MAX_VALUE - 1, 2**32 - 1, 0, 1]
FP64 = [math.nan, math.inf, -math.inf, -1.0, -0.0, 1e308, 2.0**53, 5e-324]


def patched(name: str, element: int, value: float) -> list[Packet]:
    """The recorded session with one element of one TS field set to ``value`` in every report."""
    slot = LAYOUT.ts[name]
    size = SIZES[slot.kind]
    at = slot.offset + (element % slot.count) * size
    out = []
    for p in PACKETS:
        if p.opcode == TS_OP and len(p.payload) >= at + size:
            body = bytearray(p.payload)
            if slot.kind == "fp64":
                struct.pack_into("<d", body, at, float(value))
            elif slot.kind == "io_stat":  # max, min, samples (u64), then mean and S (doubles)
                if isinstance(value, float):
                    struct.pack_into("<d", body, at + 24, value)
                else:
                    struct.pack_into("<Q", body, at, int(value) % 2**64)
            else:
                fmt = {"u16": "<H", "u32": "<I", "u64": "<Q"}[slot.kind]
                struct.pack_into(fmt, body, at, int(value) % (1 << (8 * struct.calcsize(fmt))))
            p = Packet(p.version, p.opcode, p.tag, bytes(body))
        out.append(p)
    return out


def replay(packets: list[Packet]) -> list:
    now = [0.0]
    session = RunDecoder(
        "M1", LAYOUT, "127.0.0.50", 8765, settle=0.0, fio_version="fio-3.33", clock=lambda: now[0]
    )
    events: list = []
    for p in packets:
        now[0] += 0.01
        events += session.on_packet(p) + session.on_tick()
        if session.finished:
            break
    return events + session.on_disconnect()


def numbers(obj) -> list:
    if isinstance(obj, dict):
        return [n for v in obj.values() for n in numbers(v)]
    if isinstance(obj, list | tuple):
        return [n for v in obj for n in numbers(v)]
    return [obj] if isinstance(obj, int | float) and not isinstance(obj, bool) else []


def feed_every_sink(events: list) -> None:
    """What the runner, the store, the JSON output and the run's process do with these events."""
    watch = StepWatch({"M1": "M1 (127.0.0.50:8765)"}, run_s=60, ramp_s=0, interval=1.0, ramp=False, go_at=0.0)
    telemetry = StepTelemetry({JOBNAME: ("M1", "M1.w1", "M1.w1.t1")})
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        _feed(events, watch, telemetry, db)


def _feed(events: list, watch: StepWatch, telemetry: StepTelemetry, db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE v (x INTEGER, y REAL)")
    t = 0.0
    for ev in events:
        pickle.loads(pickle.dumps(ev))  # the run's own process receives the events pickled
        if not isinstance(ev, Snapshot):
            continue
        t += 1.0
        assert all(
            (0 <= n < MAX_VALUE) and (not isinstance(n, float) or math.isfinite(n))
            for n in numbers(ev.jobs) + numbers(ev.disk_util)
        )
        orjson.dumps(ev.jobs)
        if ev.raw:
            orjson.loads(ev.raw)
        if any(a.kind == "abort" for a in watch.on_snapshot("M1", ev.jobs, t)):
            continue
        samples = telemetry.update(ev)
        for s in samples + telemetry.final_results():
            for m in (s.interval, s.whole):
                for n in numbers(list(astuple(m))):
                    db.execute("INSERT INTO v VALUES (?, ?)", (int(n) if math.isfinite(n) else 0, float(n)))
                orjson.dumps(numbers(list(astuple(m))))


def outcome(events: list, name: str) -> None:
    ends = [e for e in events if isinstance(e, Finished)]
    feed_every_sink(events)
    if ends and not ends[0].ok and "impossible value" in ends[0].reason:
        assert "M1 (127.0.0.50:8765)" in ends[0].reason and "job " in ends[0].reason, ends[0].reason


def test_the_recorded_session_is_plausible_as_it_is():
    events = replay(PACKETS)
    assert [e.ok for e in events if isinstance(e, Finished)] == [True]
    assert sum(isinstance(e, Snapshot) for e in events) >= 3
    feed_every_sink(events)


@pytest.mark.parametrize("name", [n for n, _ in FIELDS])
def test_every_field_at_2_64_minus_1_fails_the_manager_or_fits_every_sink(name):
    slot = LAYOUT.ts[name]
    value = math.nan if slot.kind == "fp64" else 2**64 - 1
    events = replay(patched(name, 0, value))
    outcome(events, name)


def test_the_counters_of_the_issue_fail_the_manager_naming_server_and_value():
    """fio's read bytes and I/O count at 2^64-1 (the fake server of issue 35): the manager fails, named."""
    events = replay(patched("io_bytes", 0, 2**64 - 1))
    ends = [e for e in events if isinstance(e, Finished)]
    assert ends and not ends[0].ok, ends
    assert "manager M1 (127.0.0.50:8765) sent an impossible value" in ends[0].reason
    assert "read.io_bytes = 18446744073709551615" in ends[0].reason
    assert not any(isinstance(e, Snapshot) for e in events)  # no number of that report went on
    feed_every_sink(events)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    field=st.sampled_from(FIELDS),
    element=st.integers(0, 4000),
    u64=st.sampled_from(U64) | st.integers(0, 2**64 - 1),
    fp64=st.sampled_from(FP64) | st.floats(allow_nan=True, allow_infinity=True),
)
def test_any_value_in_any_field_fails_the_manager_or_fits_every_sink(field, element, u64, fp64):
    name, slot = field
    value = fp64 if slot.kind == "fp64" or (slot.kind == "io_stat" and element % 2) else u64
    outcome(replay(patched(name, element, value)), name)


TEXT_FIELDS = sorted(n for n, slot in LAYOUT.ts.items() if slot.kind == "char")  # name, verror, description
TEXTS = {
    "not UTF-8": b"\xff\xfe",
    "a cut UTF-8 sequence": b"\xc3",
    "UTF-8 beyond ASCII": "é".encode(),
    "terminal controls": b"\x1b[2J\r",
    "empty": b"\x00",
    "plain, no NUL to end it": b"A",
}


def with_text(name: str, data: bytes) -> list[Packet]:
    """The recorded session with a text field filled to its whole length by ``data`` (no NUL where ``data``
    has none: the longest text the record can carry)."""
    slot = LAYOUT.ts[name]
    out = []
    for p in PACKETS:
        if p.opcode == TS_OP and len(p.payload) >= slot.offset + slot.count:
            body = bytearray(p.payload)
            body[slot.offset : slot.offset + slot.count] = (data * slot.count)[: slot.count]
            p = Packet(p.version, p.opcode, p.tag, bytes(body))
        out.append(p)
    return out


@pytest.mark.parametrize("data", list(TEXTS.values()), ids=list(TEXTS))
@pytest.mark.parametrize("name", TEXT_FIELDS)
def test_every_text_field_with_any_bytes_fails_the_manager_or_fits_every_sink(name, data):
    """A job name that is not UTF-8 fails the manager, the name shown short; any other text goes on as
    text every sink holds (the final report's raw JSON included)."""
    events = with_text(name, data)
    events = replay(events)
    feed_every_sink(events)
    ends = [e for e in events if isinstance(e, Finished)]
    assert len(ends) == 1, ends
    if ends[0].ok:
        raw = [e.raw for e in events if isinstance(e, Snapshot) and e.raw]
        assert raw and all(isinstance(orjson.loads(r), dict) for r in raw)
        return
    assert name == "name" and "jobname = " in ends[0].reason, ends[0].reason
    assert "M1 (127.0.0.50:8765)" in ends[0].reason and len(ends[0].reason) < 200, ends[0].reason


def first_payload(opcode: int) -> bytes:
    return next(p.payload for p in PACKETS if p.opcode == opcode)


WORDS = {
    "2^64-1": b"\xff" * 8,
    "NaN": struct.pack("<d", math.nan),
    "-1.0": struct.pack("<d", -1.0),
    "2^63": struct.pack("<Q", 2**63),
}


def with_word(opcode: int, at: int, word: bytes) -> list[Packet]:
    out = []
    for p in PACKETS:
        if p.opcode == opcode and len(p.payload) >= at + 8:
            body = bytearray(p.payload)
            body[at : at + 8] = word
            p = Packet(p.version, p.opcode, p.tag, bytes(body))
        out.append(p)
    return out


@pytest.mark.parametrize("word", list(WORDS.values()), ids=list(WORDS))
@pytest.mark.parametrize("record", ["group status (GS)", "disk use (DU)"])
def test_every_word_of_the_group_and_disk_records_fails_the_manager_or_fits_every_sink(record, word):
    """The records beside the thread status: every 8-byte word of fio's group status and disk use records
    (the disk's name included) set to each extreme value, the whole session replayed each time."""
    opcode = Op.GS if record.startswith("group") else Op.DU
    size = len(first_payload(opcode))
    for at in range(0, size - 7, 8):
        events = replay(with_word(opcode, at, word))
        feed_every_sink(events)
        ends = [e for e in events if isinstance(e, Finished)]
        assert len(ends) == 1, (at, ends)
        if not ends[0].ok:
            assert "M1 (127.0.0.50:8765)" in ends[0].reason and "internal error" not in ends[0].reason, (
                at,
                ends,
            )
