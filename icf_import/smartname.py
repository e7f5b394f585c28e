"""Names Iometer gives the unnamed access specs of old (pre-1998.05.21) files.

Rules from Iometer's AccessSpecList::SmartName and NextUntitled: a one-line spec is named from
its size, % random and % reads ("2 KiB random 67% reads", "512 B sequential writes",
"1 MiB 50% random 25% reads"); a clash gets " 2", " 3", ... appended. A multi-line spec keeps
the "Untitled <n>" name it was created with.
"""

from __future__ import annotations

from collections.abc import Collection

from icf_import.document import SpecLine

KIB = 1024
MIB = 1024 * 1024


def smart_name(line: SpecLine, taken: Collection[str]) -> str:
    """The name for a one-line spec; taken holds the casefolded names already in use."""
    if line.size == 512:
        name = "512 B"
    elif line.size == MIB:
        name = "1 MiB"
    else:
        kib = abs(line.size) // KIB  # C integer division truncates toward zero
        name = f"{kib if line.size >= 0 else -kib} KiB"
    if line.random == 0:
        name += " sequential"
    elif line.random == 100:
        name += " random"
    else:
        name += f" {line.random}% random"
    if line.reads == 0:
        name += " writes"
    elif line.reads == 100:
        name += " reads"
    else:
        name += f" {line.reads}% reads"
    base = name
    number = 1
    while name.casefold() in taken:
        number += 1
        name = f"{base} {number}"
    return name


def untitled_name(existing: Collection[str], taken: Collection[str]) -> str:
    """'Untitled <n>': n counts the existing names that start with 'Untitled', then skips clashes."""
    number = sum(1 for n in existing if n.startswith("Untitled"))
    while True:
        number += 1
        name = f"Untitled {number}"
        if name.casefold() not in taken:
            return name
