import json
import random

import pytest

from app.engine.transports.fio_json_stream import FioJsonStream, JsonDocument, TextLine
from tests.fio_fixtures import documents, stdout


def split(data: bytes, chunk_sizes=None) -> list:
    s = FioJsonStream()
    out = []
    if chunk_sizes is None:
        out += s.feed(data)
    else:
        pos, i = 0, 0
        while pos < len(data):
            n = chunk_sizes[i % len(chunk_sizes)]
            out += s.feed(data[pos : pos + n])
            pos += n
            i += 1
    return out + s.close()


def kinds(pieces) -> list[str]:
    return ["doc" if isinstance(p, JsonDocument) else "text" for p in pieces]


@pytest.mark.parametrize("name", ["two_jobs_ramp", "null_ramp", "numjobs", "layout", "locked", "sigint"])
def test_documents_equal_an_independent_parse(name):
    pieces = split(stdout(name))
    docs = [json.loads(p.text) for p in pieces if isinstance(p, JsonDocument)]
    assert docs == documents(name)
    assert len(docs) >= 1


def test_signal_line_between_documents_is_text_in_order():
    pieces = split(stdout("sigint"))
    assert kinds(pieces) == ["doc", "text", "doc"]
    assert pieces[1] == TextLine("fio: terminating on signal 2")


def test_open_failure_line_before_documents():
    pieces = split(stdout("locked"))
    assert kinds(pieces)[0] == "text"
    assert pieces[0].text.startswith("fio: pid=") and "func=open(" in pieces[0].text
    assert kinds(pieces)[1:] == ["doc"] * 3


@pytest.mark.parametrize("sizes", [[1], [3], [4096], [7, 1, 13, 2]])
def test_partial_reads_give_the_same_pieces(sizes):
    data = stdout("sigint")
    assert split(data, sizes) == split(data)


def test_random_chunking_of_a_multi_document_stream():
    data = stdout("two_jobs_ramp")
    rnd = random.Random(1234)
    sizes = [rnd.randint(1, 9000) for _ in range(200)]
    assert split(data, sizes) == split(data)


def test_crlf_line_endings():
    data = stdout("sigint").replace(b"\n", b"\r\n")
    pieces = split(data, [5, 300])
    assert kinds(pieces) == ["doc", "text", "doc"]
    assert [json.loads(p.text) for p in pieces if isinstance(p, JsonDocument)] == documents("sigint")
    assert pieces[1].text == "fio: terminating on signal 2"


def test_trailing_text_without_newline_comes_out_on_close():
    s = FioJsonStream()
    assert s.feed(b"fio: io_u error on file /x: Invalid argument: read offset=0, buflen=4") == []
    assert s.close() == [TextLine("fio: io_u error on file /x: Invalid argument: read offset=0, buflen=4")]


def test_cut_off_document_is_not_returned():
    data = stdout("sigint")
    cut = data[: data.rindex(b"\n}\n") - 50]  # the final document loses its end
    pieces = split(cut)
    s = FioJsonStream()
    s.feed(cut)
    s.close()
    assert s.incomplete_at_eof
    assert kinds(pieces) == ["doc", "text"]


def test_foreign_column0_line_inside_a_document_is_pulled_out():
    doc = documents("sigint")[0]
    lines = json.dumps(doc, indent=2).split("\n")
    intruder = "fio: pid=7, err=5/file:io_u.c:1, func=io_u error, error=Input/output error"
    lines.insert(len(lines) // 2, intruder)
    pieces = split(("\n".join(lines) + "\n").encode())
    assert pieces[0] == TextLine(intruder)
    assert json.loads(pieces[1].text) == doc


def test_blank_lines_are_dropped_and_bad_utf8_is_replaced():
    pieces = split(b"\n\n  \nfio: odd \xff byte\n{\n}\n")
    assert pieces == [TextLine("fio: odd \ufffd byte"), JsonDocument("{\n}")]
