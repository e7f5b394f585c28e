"""The protocol table generated from fio's sources, the layouts built from it, and the calibration rule for a
protocol newer than the table (the live half: tests/integration/test_remote_protocols.py)."""

from __future__ import annotations

import gzip
import importlib.util
import sys
from pathlib import Path

import pytest

from app.engine.transports.fioproto.calibrate import CALIBRATION_IOS, calibration_problems
from app.engine.transports.fioproto.layouts import (
    LAYOUTS,
    SHAPES,
    Layout,
    UnsupportedVersion,
    layout_for,
    nearest_known,
    newest_release,
    supported_fio_versions,
)
from app.engine.transports.fioproto.protocol_table import PROTOCOL_ROWS

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests/fixtures/fioproto"


def _script():
    spec = importlib.util.spec_from_file_location("fio_protocols", ROOT / ".ci/fio_protocols.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_every_number_from_97_to_the_newest_is_in_the_table_and_decoded():
    numbers = [r.protocol for r in PROTOCOL_ROWS]
    assert numbers == list(range(97, numbers[-1] + 1)) and numbers[-1] >= 121
    # what releases and distribution packages speak, 108 and 110 (passing states) included
    assert {97, 99, 100, 101, 103, 107, 108, 109, 110, 111, 113, 120} <= set(LAYOUTS)
    assert all(r.shape is not None and r.wire_same for r in PROTOCOL_ROWS)
    releases = {v: r.protocol for r in PROTOCOL_ROWS for v in r.releases}
    assert releases["3.33"] == 97 and releases["3.39"] == 107 and releases["3.40"] == 111
    assert releases["3.42"] == 120
    assert [r.protocol for r in PROTOCOL_ROWS if any("Debian 13" in p for p in r.packages)] == [109]


@pytest.mark.parametrize("row", PROTOCOL_ROWS, ids=lambda r: str(r.protocol))
def test_each_layout_has_the_size_fios_headers_give(row):
    # pdu_size was computed from fio's C headers by the generator; the layout computes its own offsets
    lay = layout_for(row.protocol)
    assert lay.pdu_size == row.pdu_size
    assert lay.ts_fields == SHAPES[row.shape] and lay.features == frozenset(row.features)


def test_the_docs_table_is_the_generated_one():
    script = _script()
    text = (ROOT / "docs/reference/fio.md").read_text()
    start, end = text.index(script.DOC_BEGIN), text.index(script.DOC_END) + len(script.DOC_END)
    assert text[start:end] == script.doc_table(list(PROTOCOL_ROWS))
    assert "| 109 |" in text and "Debian 13 (trixie) fio 3.39-1" in text


def test_the_struct_reader_lays_out_fios_packed_structures():
    script = _script()
    header = """
    #define NAME_SZ 8
    #define BITS 2
    #define NR (3 * (1 << BITS))
    enum {
        CNT = 3,
    };
    struct inner { uint64_t a; fio_fp64_t b; };
    struct outer {
        char name[NAME_SZ];          /* 0 */
        uint32_t x, y[CNT];          // 8, 12
        struct inner in __attribute__((aligned(8)));   /* 24 */
        union { uint16_t small; uint32_t wide; };      /* 48, four bytes */
        uint64_t hist[CNT][NR];      /* 52 */
        union { uint64_t *p; uint64_t p_offset; };     /* 340 */
        uint8_t last;                /* 348 */
    } __attribute__((packed));
    """
    consts = script.constants([header])
    assert consts["NR"] == 12 and consts["CNT"] == 3
    inner, size, _ = script.layout(script.struct_body(header, "inner"), consts, {})
    assert size == 24
    members, size, align = script.layout(script.struct_body(header, "outer"), consts, {"inner": 24})
    got = {m.name: (m.offset, m.size) for m in members}
    assert got == {
        "name": (0, 8),
        "x": (8, 4),
        "y": (12, 12),
        "in": (24, 24),
        "small": (48, 2),
        "wide": (48, 4),
        "hist": (52, 288),
        "p_offset": (340, 8),
        "last": (348, 1),
    }
    assert (size, align) == (349, 8)


def test_supported_versions_name_releases_and_packages():
    text = supported_fio_versions()
    assert "fio 3.31-3.33 (protocol 97)" in text and "fio 3.42 (protocol 120)" in text
    assert "Debian 13 (trixie) fio 3.39-1 (protocol 109)" in text
    assert newest_release() == "fio 3.42 (protocol 120)"
    assert nearest_known(200).protocol == max(LAYOUTS) and nearest_known(98).protocol == 97
    with pytest.raises(UnsupportedVersion):
        nearest_known(97)
    newer = layout_for(200, decoded_as=120)
    assert newer.protocol == 200 and newer.ts == LAYOUTS[120].ts
    with pytest.raises(UnsupportedVersion):
        layout_for(200)


# --- the calibration rule, on a record of the calibration job recorded from a real fio 3.33 server ---------


def _record() -> bytes:
    return gzip.decompress((FIXTURES / "calibration-fio-3.33.ts.gz").read_bytes())


def test_the_calibration_record_decodes_with_its_own_layout():
    record = _record()
    assert len(record) == LAYOUTS[97].pdu_size
    assert calibration_problems(record, LAYOUTS[97]) == []


def test_a_layout_of_another_size_fails_the_calibration():
    for other in (101, 120):
        problems = calibration_problems(_record(), LAYOUTS[other])
        assert problems == [
            f"its statistics record has 184056 bytes, protocol {other}'s {LAYOUTS[other].pdu_size}"
        ]


def _moved(fields, name, after):
    """The field list with ``name`` moved behind ``after`` (same size, other offsets)."""
    f = next(x for x in fields if x.name == name)
    rest = [x for x in fields if x.name != name]
    i = next(k for k, x in enumerate(rest) if x.name == after)
    return tuple(rest[: i + 1] + [f] + rest[i + 1 :])


@pytest.mark.parametrize(
    ("name", "after", "expect"),
    [
        ("groupid", "pid", "groupid"),  # near the start
        ("pad", "io_u_lat_m", "percentile list"),  # the middle: every later field moves by 4
        ("pad3", "sig_figs", "significant figures"),  # after the block table, at the end
    ],
)
def test_a_layout_of_the_same_size_with_a_moved_field_fails_the_calibration(name, after, expect):
    base = LAYOUTS[97]
    fields = _moved(base.ts_fields, name, after)
    lay = Layout(97, (), fields, base.features)
    assert lay.pdu_size == base.pdu_size and lay.ts != base.ts
    problems = calibration_problems(_record(), lay)
    assert problems and any(p.startswith(expect) for p in problems), problems


def test_a_record_with_other_numbers_fails_the_calibration():
    record = bytearray(_record())
    off = LAYOUTS[97].ts["io_bytes"].offset
    record[off : off + 8] = (CALIBRATION_IOS * 4096 * 2).to_bytes(8, "little")
    problems = calibration_problems(bytes(record), LAYOUTS[97])
    assert problems == ["bytes: [8388608, 0, 0] decoded, [4194304, 0, 0] expected"]


# --- the whole exchange, with records of builds from the future (3.42 answering as 125; as 126 with a field
# added to thread_stat) replayed by a fake server ---------------------------------------------------------


def _future_server(protocol: int, record: bytes):
    import struct

    from app.engine.transports.fioproto.commands import Op
    from tests.fioproto_support import FakeServer, accept_job, probe_reply_payload, version_gate

    def handler(conn) -> None:
        pkt = version_gate(conn, protocol)
        if pkt is None:
            return
        conn.send(protocol, Op.PROBE, probe_reply_payload("fio-3.42"), tag=pkt.tag)
        if accept_job(conn, protocol):  # the calibration job (a plain probe closes instead)
            conn.send(protocol, Op.TS, record)
            conn.send(protocol, Op.STOP, struct.pack("<ii", 0, 0))
            conn.send(protocol, Op.QUIT)

    return FakeServer(handler)


@pytest.mark.parametrize(
    ("protocol", "fixture", "decoded_as"),
    [
        (125, "calibration-fio-3.42-proto125.ts.gz", 121),
        (126, "calibration-fio-3.42-proto126-field.ts.gz", None),
    ],
)
def test_a_recorded_fio_from_the_future_is_calibrated(monkeypatch, protocol, fixture, decoded_as):
    import app.engine.transports.fioproto.client as client
    from app.engine.transports.transport import TransportError

    monkeypatch.setattr(client, "_calibrated", {})
    srv = _future_server(protocol, gzip.decompress((FIXTURES / fixture).read_bytes()))
    try:
        client.forget_protocol("127.0.0.1", srv.port)
        if decoded_as is None:
            with pytest.raises(TransportError) as exc:
                client.probe("127.0.0.1", srv.port, timeout=5)
            assert f"runs fio-3.42, which speaks fio protocol {protocol}" in str(exc.value)
            assert "its statistics record has 184080 bytes, protocol 121's 184072" in str(exc.value)
        else:
            info = client.probe("127.0.0.1", srv.port, timeout=5)
            assert (info.protocol, info.decoded_as, info.fio_version) == (protocol, decoded_as, "fio-3.42")
            assert info.layout.ts == LAYOUTS[decoded_as].ts and info.layout.protocol == protocol
    finally:
        srv.close()
        client.forget_protocol("127.0.0.1", srv.port)
