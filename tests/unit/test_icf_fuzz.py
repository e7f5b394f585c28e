"""Damaged corpus files never make the reader raise; every diagnostic points at a line of the file."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from icf_import import parse, write
from tests.unit.icf_corpus import CORPUS_FILES, lines_in

ORIGINALS = [p.read_bytes() for p in CORPUS_FILES]
# Bytes that matter to the grammar, so mutations hit the interesting paths more often than random bytes.
PIECES = [
    b"'",
    b"\t",
    b",",
    b" ",
    b"\r",
    b"\n",
    b"\r\n",
    b"-",
    b"0",
    b"99999999999999999999999999999999",
    b"'End target\n",
    b"'End",
    b"'Version",
    b"\xef\xbb\xbf",
    b"\x00",
    b"\xe9",
    b"[*X*]",
    b"|",
    b"NETWORK,TCP",
    b"'MANAGER LIST\n",
    b"'TEST SETUP\n",
    b"ENABLED",
]

operations = st.tuples(
    st.sampled_from(["set", "insert", "delete_line", "duplicate_line", "swap_lines", "truncate"]),
    st.integers(min_value=0, max_value=1 << 20),
    st.integers(min_value=0, max_value=1 << 20),
    st.one_of(st.sampled_from(PIECES), st.binary(min_size=1, max_size=6)),
)


def mutate(data: bytes, ops: list[tuple[str, int, int, bytes]]) -> bytes:
    for op, a, b, piece in ops:
        lines = data.splitlines(keepends=True)
        if op == "set" and data:
            i = a % len(data)
            data = data[:i] + piece + data[i + 1 :]
        elif op == "insert":
            i = a % (len(data) + 1)
            data = data[:i] + piece + data[i:]
        elif op == "truncate" and data:
            data = data[: a % len(data)]
        elif lines:
            i, j = a % len(lines), b % len(lines)
            if op == "delete_line":
                del lines[i]
            elif op == "duplicate_line":
                lines.insert(i, lines[i])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            data = b"".join(lines)
    return data


@settings(max_examples=200, deadline=None)
@given(original=st.sampled_from(ORIGINALS), ops=st.lists(operations, min_size=1, max_size=6))
def test_mutated_files_give_documents_with_line_numbers_inside_the_file(original, ops):
    data = mutate(original, ops)
    doc = parse(data, "fuzz.icf")
    n = lines_in(data)
    for d in doc.diagnostics:
        assert d.severity in ("error", "warning")
        assert (1 <= d.line <= n) if n else d.line == 0, (d, n)
        assert "internal error" not in d.message, d
    again = parse(write(doc))  # whatever was read can be written and read again
    if not doc.errors:
        assert again == doc
