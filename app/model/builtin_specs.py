"""Iometer 1.1.0's built-in access specifications, for lookups by name (docs/reference/iometer.md,
"Built-in access specifications")."""

from __future__ import annotations

from app.model.plan import AccessSpec, SpecLine


def _sized(label: str, size: int, reads: tuple[int, ...], random: int, align: int) -> list[AccessSpec]:
    rnd = f"{random}% random"
    return [
        AccessSpec(f"{label}; {r}% Read; {rnd}", [SpecLine(size, 100, r, random, 0, 1, align, 0)])
        for r in reads
    ]


def builtin_specs() -> list[AccessSpec]:
    """A fresh copy of the 1.1.0 final list (without Idle, which is never saved or run)."""
    five = (100, 75, 50, 25, 0)
    three = (100, 50, 0)
    singles = (
        _sized("512 B", 512, five, 0, 0)
        + _sized("4 KiB", 4096, five, 0, 0)
        + _sized("4 KiB aligned", 4096, three, 100, 4096)
        + _sized("16 KiB", 16384, five, 0, 0)
        + _sized("32 KiB", 32768, five, 0, 0)
        + _sized("64 KiB", 65536, three, 0, 0)
        + _sized("256 KiB", 262144, three, 0, 0)
    )
    all_lines = [
        SpecLine(**{**vars(s.lines[0]), "of_size": 4 if i < 13 else 3}) for i, s in enumerate(singles)
    ]
    return [
        AccessSpec("Default", [SpecLine(2048, 100, 67, 100, 0, 1, 2048, 0)]),
        *singles,
        AccessSpec("All in one", all_lines),
    ]


def find_builtin(name: str) -> AccessSpec | None:
    for spec in builtin_specs():
        if spec.name.casefold() == name.casefold():
            return spec
    return None
