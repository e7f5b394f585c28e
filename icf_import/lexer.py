"""Lexical rules of an .icf file: decoding, lines, trimming, integers, tokens, version numbers.

These follow Iometer's ICF_ifstream (ExtractFirstInt, ExtractFirstToken, GetVersion) so that a
value means here what it meant to Iometer.
"""

from __future__ import annotations

import re

# CString::TrimLeft/TrimRight trim C-locale whitespace only (not NBSP, which is 0xA0 in cp1252).
WHITESPACE = " \t\n\r\x0b\x0c"

# Version thresholds used by Iometer's loaders (comparable numbers, see version_number()).
OLDEST_KNOWN_VERSION = 19980105  # older: Iometer warns and continues
NEW_SPEC_FORMAT_VERSION = 19980521  # older: unnamed six-field access specs
STRICT_TEST_SETUP_VERSION = 19990217  # older: an unknown TEST SETUP key ends the section

MAX_LINE = 199  # Iometer reads lines with getline(buf, 200)

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_TOKEN_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz1234567890`~!@#$%^&*()-_=+[]{}\\:;\"'./<>?"
)
_TOKEN_CHARS_SPACE = _TOKEN_CHARS | {" "}
_INT_CHARS = frozenset("-0123456789")
_DIGITS = frozenset("0123456789")
_STRICT_INT = re.compile(r"[-+]?[0-9]{1,30}")
MAX_DIGITS = 30  # longer digit runs are no number Iometer could hold; they read as "not an integer"
# Text skipped before a number that means "this was not a number" (placeholders, words).
_NOT_A_NUMBER = re.compile(r"[A-Za-z\[\]*_]")


def decode(data: bytes) -> str:
    """Bytes to text: UTF-8 (with or without BOM) when valid, else the ANSI code page cp1252.

    cp1252 leaves five bytes undefined; those decode as Latin-1 so no byte is ever lost.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return "".join(chr(b) if b in _CP1252_UNDEFINED else bytes((b,)).decode("cp1252") for b in data)


_CP1252_UNDEFINED = frozenset(b"\x81\x8d\x8f\x90\x9d")


def split_lines(text: str) -> list[str]:
    """CRLF, LF and CR all end a line; a final line break does not start another line."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def trim(s: str) -> str:
    return s.strip(WHITESPACE)


def extract_int(s: str) -> tuple[int | None, str, str]:
    """ExtractFirstInt: the first run of [-0-9] in s.

    Returns (number, rest, skipped): number is None when s holds no integer (or a '-' sits inside
    the digits); rest has the whitespace and one comma after the number removed; skipped is the
    text before the number, which Iometer silently ignores.
    """
    n = len(s)
    i = 0
    while i < n and s[i] not in _INT_CHARS:
        i += 1
    if i == n:
        return None, s, s
    j = i
    while j < n and s[j] in _INT_CHARS:
        j += 1
    run = s[i:j]
    if "-" in run[1:]:
        return None, s, s[:i]
    digits = run[1:] if run.startswith("-") else run
    if len(digits) > MAX_DIGITS:
        return None, s, s[:i]
    number = int(digits) if digits else 0  # atoi("-") is 0
    if run.startswith("-"):
        number = -number
    rest = s[j:].lstrip(WHITESPACE)
    if rest.startswith(","):
        rest = rest[1:]
    return number, rest.lstrip(WHITESPACE), s[:i]


def looks_like_text(skipped: str) -> bool:
    """True when text skipped before a number shows the value was not a number (e.g. [*TIME*])."""
    return bool(_NOT_A_NUMBER.search(skipped))


def extract_token(s: str, spaces: bool = False) -> tuple[str, str]:
    """ExtractFirstToken: the first run of token characters, and the trimmed rest after it.

    Token characters are ASCII letters, digits and `~!@#$%^&*()-_=+[]{}\\:;"'./<>? (and space
    when spaces=True); comma, TAB, '|' and non-ASCII characters end a token.
    """
    chars = _TOKEN_CHARS_SPACE if spaces else _TOKEN_CHARS
    n = len(s)
    i = 0
    while i < n and s[i] not in chars:
        i += 1
    if i == n:
        return "", s
    j = i
    while j < n and s[j] in chars:
        j += 1
    return s[i:j], trim(s[j:])


def first_non_token(s: str, spaces: bool = True) -> str:
    """The first character of s that would end a token ("" when there is none)."""
    chars = _TOKEN_CHARS_SPACE if spaces else _TOKEN_CHARS
    return next((c for c in s if c not in chars), "")


_WHITESPACE_RUN = re.compile(r"[ \t\n\r\x0b\x0c]+")


def split_whitespace(s: str) -> list[str]:
    """Fields separated by C-locale whitespace (what istream >> skips), no empty fields."""
    return [f for f in _WHITESPACE_RUN.split(s) if f]


def strict_int(s: str) -> int | None:
    """An optionally signed decimal integer with nothing else around it but whitespace."""
    t = trim(s)
    return int(t) if _STRICT_INT.fullmatch(t) else None


def _version_parts(s: str) -> list[int]:
    """ExtractFirstIntVersion three times: runs of digits; '-' and other characters are skipped."""
    parts: list[int] = []
    n = len(s)
    i = 0
    while len(parts) < 3:
        while i < n and s[i] not in _DIGITS:
            i += 1
        if i == n:
            break
        j = i
        while j < n and s[j] in _DIGITS:
            j += 1
        if j - i > MAX_DIGITS:
            break
        parts.append(int(s[i:j]))
        i = j
    return parts


def version_number(version: str) -> int | None:
    """The comparable version number Iometer 1.1.0 computes from a version string.

    Dates (major > 1900) become yyyymmdd, e.g. '2008.06.18-RC2' -> 20080618; anything else
    major*10^10 + middle*10^5 + minor, e.g. '1.1.0' -> 10000100000 and '3.26.97' -> 30002600097
    (so Iometer 1.1.0's special case for 3.26.97 never fires). None when three numbers are missing.
    """
    parts = _version_parts(version)
    if len(parts) < 3:
        return None
    major, middle, minor = parts
    if major > 1900:
        return major * 10000 + middle * 100 + minor
    return major * 10_000_000_000 + middle * 100_000 + minor
