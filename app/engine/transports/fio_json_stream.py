"""Split fio's ``--output-format=json+ --status-interval=N`` stdout into documents and text lines.

fio prints one pretty-printed JSON document per interval. Each starts with a line that is exactly
``{`` and ends with a line that is exactly ``}``, both in column 0; every nested line is indented.
Between documents fio may print plain text (``fio: terminating on signal 2``, open failures ...).
Documents are found with ``bytes.find``/regex on the raw buffer, not line by line, because a
256-job json+ document is several MiB.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DOC_END = re.compile(rb"\n\}\r?\n")
# A column-0 line inside a document that is not part of it (another fio process wrote between
# the chunks of the report). Nested JSON lines are always indented.
_FOREIGN = re.compile(rb"\n(?=[^\s}])")


@dataclass(frozen=True)
class JsonDocument:
    text: str  # the complete document, '{' ... '}', ready for json.loads


@dataclass(frozen=True)
class TextLine:
    text: str  # one non-empty line of plain text, without its line ending


Piece = JsonDocument | TextLine


def _decode(b: bytes) -> str:
    return b.decode("utf-8", errors="replace")


class FioJsonStream:
    """Feed stdout bytes as they arrive; get complete documents and text lines in stream order."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._in_doc = False
        self._scan = 0  # where to resume looking for the end of the current document
        self.incomplete_at_eof = False  # close() found a document that never ended

    def feed(self, data: bytes) -> list[Piece]:
        buf = self._buf
        buf += data
        out: list[Piece] = []
        pos = 0  # start of what is not consumed yet (a document's '{' while inside one)
        while True:
            if self._in_doc:
                m = _DOC_END.search(buf, self._scan)
                if m is None:
                    self._scan = max(len(buf) - 4, self._scan)  # "\n}\r\n" may straddle reads
                    break
                out.extend(self._document(bytes(buf[pos : m.end()])))
                pos = m.end()
                self._in_doc = False
                continue
            nl = buf.find(b"\n", pos)
            if nl < 0:
                break
            line = bytes(buf[pos:nl]).rstrip(b"\r")
            if line == b"{":
                self._in_doc = True
                self._scan = nl  # "{\n}\n" is a (tiny) complete document
                continue  # pos stays at the '{' so the document includes it
            if line.strip():
                out.append(TextLine(_decode(line)))
            pos = nl + 1
        del buf[:pos]
        self._scan = max(self._scan - pos, 0)
        return out

    def close(self) -> list[Piece]:
        """End of stream: a trailing line without newline is returned; a cut-off document is not."""
        out: list[Piece] = []
        if self._in_doc:
            self.incomplete_at_eof = True
        elif self._buf.strip():
            out.append(TextLine(_decode(bytes(self._buf).strip())))
        self._buf.clear()
        self._in_doc = False
        return out

    @staticmethod
    def _document(raw: bytes) -> list[Piece]:
        # raw starts with b"{" and ends with b"}\n"; check for foreign column-0 lines in between
        body_start = raw.find(b"\n")
        if _FOREIGN.search(raw, body_start) is None:
            return [JsonDocument(_decode(raw).rstrip("\r\n"))]
        doc_lines: list[bytes] = []
        texts: list[Piece] = []
        for line in raw.split(b"\n"):
            stripped = line.rstrip(b"\r")
            if stripped in (b"{", b"}") or stripped[:1] in (b" ", b"\t"):
                doc_lines.append(stripped)
            elif stripped.strip():
                texts.append(TextLine(_decode(stripped)))
        return [*texts, JsonDocument(_decode(b"\n".join(doc_lines)))]
