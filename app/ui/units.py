"""Parsing and showing sizes and numbers the way Iometer's dialogs do (K = 1024 bytes)."""

from __future__ import annotations

import re

from app.model.spec_words import format_bytes  # noqa: F401 (shown with the other units)

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_FACTOR = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_size(text: str) -> int | None:
    """'4096', '4k', '4 KiB', '64KB', '1.5M' -> bytes (binary units, as Iometer); None if not a size."""
    m = _SIZE.match(text)
    if not m:
        return None
    value = float(m.group(1)) * _FACTOR[m.group(2).lower()]
    if value != int(value):
        return None
    return int(value)


def parse_int(text: str) -> int | None:
    text = text.strip()
    return int(text) if re.fullmatch(r"\d+", text) else None


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}"
