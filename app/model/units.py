"""Sizes and durations, parsed and shown one way everywhere (K = 1024 bytes, as Iometer and fio read them):
the GUI's fields, the command line's options, disk listings and fio job text."""

from __future__ import annotations

import re

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


def format_bytes(n: int, exact: bool = False) -> str:
    """Exact binary units when whole and short (4 KiB, 1 MiB, 2048 B shows 2 KiB); large odd sizes
    approximately (8,000,000 sectors of 512 B shows 3.8 GiB) unless ``exact`` (text to edit)."""
    for unit, factor in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= factor and n % factor == 0 and (exact or n // factor < 10000):
            if not exact and n // factor >= 1024 and n >= 10 * 1024 * 1024:
                break  # 1536 GiB reads better as 1.5 TiB
            return f"{n // factor} {unit}"
    if n >= 10 * 1024 * 1024 and not exact:
        for unit, factor in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2)):
            if n >= factor:
                return f"{n / factor:.1f} {unit}"
    return f"{n} B"


def fio_size(n: int) -> str:
    """A size as fio job text writes it: 64k, 1m, or plain bytes."""
    for unit, factor in (("m", 1 << 20), ("k", 1 << 10)):
        if n % factor == 0 and n >= factor:
            return f"{n // factor}{unit}"
    return str(n)


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}"


def format_elapsed(seconds: float) -> str:
    """'0.42 s', '38.2 s', '3 min 36 s', '1 h 02 min': how long a transfer took, as people say it."""
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    s = int(round(seconds))
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def format_latency(ns: float) -> str:
    """A response time in the unit that suits it, three significant digits: '850 ns', '84.5 µs', '6.91 ms',
    '1 ms', '2.5 s' (axis ticks and percentile labels)."""
    for unit, factor in (("s", 1e9), ("ms", 1e6), ("\u00b5s", 1e3)):
        if abs(ns) >= factor * 0.9995:
            return f"{ns / factor:.3g} {unit}"
    return f"{ns:.3g} ns"
