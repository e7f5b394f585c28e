"""Reading position over the lines of a file, with Iometer's GetPair / GetNextLine / SkipTo rules.

A line whose first byte is an apostrophe is a key (comment) line; everything else is a value.
Section readers raise Fail to abort the section they are in; the reader turns it into an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from icf_import.document import Diagnostic
from icf_import.lexer import trim


class Fail(Exception):
    """Aborts the current section with an error at a line."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass
class Context:
    source: str
    version: int | None  # comparable version number; None when the version line is unreadable
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def warn(self, line: int, message: str) -> None:
        self.diagnostics.append(Diagnostic("warning", self.source, line, message))

    def error(self, line: int, message: str) -> None:
        self.diagnostics.append(Diagnostic("error", self.source, line, message))

    def version_below(self, threshold: int) -> bool:
        return self.version is not None and self.version < threshold


@dataclass
class Pair:
    key: str  # trimmed key line, apostrophe included
    key_line: int
    value: str  # trimmed value; "" when the key has none
    value_line: int  # line of the value; the key's line when there is none


def shown(text: str, limit: int = 70) -> str:
    """How a line is quoted in a message: a key without its apostrophe, any text in quotes."""
    if text == "":
        return "a blank line"
    if text.startswith("'"):
        text = text[1:]
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"'{text}'"


def _ends_value_search(text: str) -> bool:
    head = text[:8].lower()
    return head.startswith("'end") or head.startswith("'version")


class Cursor:
    def __init__(self, lines: list[str]):
        self.raw = lines
        self.text = [trim(x) for x in lines]
        self.pos = 0  # index of the next line to read (0-based)

    @property
    def count(self) -> int:
        return len(self.raw)

    def at_end(self) -> bool:
        return self.pos >= len(self.raw)

    def is_key(self, index: int) -> bool:
        return self.raw[index].startswith("'")

    def line_no(self) -> int:
        """1-based number of the next line, or of the last line at the end of the file."""
        return min(self.pos, len(self.raw) - 1) + 1 if self.raw else 0

    def found(self) -> str:
        """What sits at the current position, for 'expected X, found Y' messages."""
        return "the end of the file" if self.at_end() else shown(self.text[self.pos])

    def fail(self, expected: str) -> Fail:
        return Fail(self.line_no(), f"expected {expected}, found {self.found()}")

    def next_line(self, expected: str) -> tuple[str, int]:
        """GetNextLine: the trimmed next line and its number; the end of the file is an error."""
        if self.at_end():
            raise self.fail(expected)
        i = self.pos
        self.pos += 1
        return self.text[i], i + 1

    def get_pair(self, expected: str) -> Pair:
        """GetPair: a key line, further key lines skipped, then its value line.

        Keys starting with 'End or 'Version have no value; a skipped key line starting with
        'End or 'Version is left for the next call and the value is empty.
        """
        if self.at_end() or not self.is_key(self.pos):
            raise self.fail(expected)
        key_index = self.pos
        key = self.text[key_index]
        self.pos += 1
        if _ends_value_search(key):
            return Pair(key, key_index + 1, "", key_index + 1)
        while not self.at_end() and self.is_key(self.pos):
            if _ends_value_search(self.text[self.pos]):
                return Pair(key, key_index + 1, "", key_index + 1)
            self.pos += 1
        if self.at_end():
            raise Fail(self.line_no(), f"expected a value after {shown(key)}, found the end of the file")
        value_index = self.pos
        self.pos += 1
        return Pair(key, key_index + 1, self.text[value_index], value_index + 1)
