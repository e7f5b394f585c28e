"""An access specification's definition as text: the compact form steps are stored with, and words for people.

A step stores what it ran as ``spec_text``: each line's eight Iometer fields as CSV
(``size,% of size,% reads,% random,delay,burst,align,reply``), lines joined by ``"; "``, and where workers
ran different specifications in one step, each specification's lines joined by ``" | "``.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.model.plan import AccessSpec, SpecLine
from app.model.units import format_bytes

SPEC_SEP = " | "
LINE_SEP = "; "


def line_summary(ln: SpecLine) -> str:
    align = "sector" if ln.align == 0 else ("size" if ln.align == ln.size else format_bytes(ln.align))
    out = f"{format_bytes(ln.size)}, {ln.reads}% read, {ln.random}% random, align {align}"
    if ln.delay:
        out += f", delay {ln.delay} ms × burst {ln.burst}"
    if ln.reply:
        out += f", reply {format_bytes(ln.reply)}"
    return out


def spec_summary(spec: AccessSpec) -> str:
    if len(spec.lines) == 1:
        return line_summary(spec.lines[0])
    return (
        f"{len(spec.lines)} lines: "
        + "; ".join(f"{ln.of_size}% {format_bytes(ln.size)}" for ln in spec.lines[:4])
        + ("; …" if len(spec.lines) > 4 else "")
    )


def spec_text(specs: Iterable[AccessSpec]) -> str:
    """The stored form of what a step ran (see the module docstring)."""
    return SPEC_SEP.join(LINE_SEP.join(ln.as_csv() for ln in s.lines) for s in specs)


def parse_spec_text(text: str) -> list[list[SpecLine]] | None:
    """The specifications' lines of a stored ``spec_text``; None when it is empty or not in that form."""
    out = []
    for part in text.split(SPEC_SEP.strip()):
        lines = []
        for chunk in part.split(LINE_SEP.strip()):
            fields = [f.strip() for f in chunk.split(",") if f.strip()]
            if len(fields) != 8:
                return None
            try:
                lines.append(SpecLine(*(int(f) for f in fields)))
            except ValueError:
                return None
        out.append(lines)
    return out if out else None


def canonical_definition(text: str) -> str:
    """A stored ``spec_text`` in a form where equal definitions are equal strings: lines in a fixed order
    (Iometer draws a line by its share, so their order means nothing), specifications in a fixed order.
    Text that is not in the stored form is kept as it is (stripped); empty stays empty."""
    specs = parse_spec_text(text)
    if specs is None:
        return text.strip()
    parts = sorted(LINE_SEP.join(sorted(ln.as_csv() for ln in lines)) for lines in specs)
    return SPEC_SEP.join(parts)


def definition_summary(text: str) -> str:
    """A stored ``spec_text`` in words, e.g. "512 B, 100% read, 100% random" (the usual sector alignment
    left unsaid)."""
    specs = parse_spec_text(text)
    if specs is None:
        return text.strip() or "definition unknown"
    return " + ".join(spec_summary(AccessSpec("", lines)).replace(", align sector", "") for lines in specs)
