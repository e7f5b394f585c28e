"""The ACCESS SPECIFICATIONS section, named format and the old six-field format.

Iometer deletes a spec whose percentages are out of range or do not add up to 100; here the
spec is kept as written and a warning names its line, so the user sees what the file says.
"""

from __future__ import annotations

from icf_import.cursor import Context, Cursor, Fail, shown
from icf_import.document import ASSIGNMENTS, AccessSpec, SpecLine
from icf_import.lexer import extract_token, split_whitespace, strict_int, trim
from icf_import.smartname import smart_name, untitled_name

FIELDS = ("size", "% of size", "% reads", "% random", "delay", "burst", "align", "reply")
OLD_FIELDS = FIELDS[:6]
MAX_LINES = 100  # MAX_ACCESS_SPECS: lines per spec
NAME_KEY = "'access specification name,default assignment"


def read_specs_new(cur: Cursor, specs: list[AccessSpec], ctx: Context) -> None:
    """Named specs up to 'END access specifications'; a repeated name replaces the earlier spec."""
    expected = "'Access specification name,default assignment' or 'END access specifications'"
    while True:
        p = cur.get_pair(expected)
        key = p.key.lower()
        if key == "'end access specifications":
            return
        if key != NAME_KEY:
            raise Fail(p.key_line, f"expected {expected}, found {shown(p.key)}")
        if p.value_line == p.key_line:  # the next key line ends the search for a value
            raise cur.fail(
                "an access specification name after 'Access specification name,default assignment'"
            )
        spec = AccessSpec(_spec_name(p.value, p.value_line, ctx), line_no=p.key_line)
        spec.default_assignment = _assignment(p.value, p.value_line, ctx)
        header, header_line = cur.next_line("the 'size,% of size,...' line after the spec name")
        if not header.startswith("'"):
            raise Fail(
                header_line,
                "expected the 'size,% of size,% reads,% random,delay,burst,align,reply' "
                f"line after the access specification name, found {shown(header)}",
            )
        while not cur.at_end() and not cur.is_key(cur.pos):
            text, line = cur.next_line("")
            if text == "":
                ctx.warn(line, f"blank line inside access specification '{spec.name}' skipped")
                continue
            spec.lines.append(_data_line(text, line, ctx))
            _check_ranges(spec.lines[-1], line, ctx)
        _check_total(spec, ctx)
        _add(specs, spec, ctx)


def _spec_name(value: str, line: int, ctx: Context) -> str:
    """The name is the first run of token characters (spaces included), as Iometer reads it."""
    token, _ = extract_token(value, spaces=True)
    name = token.strip(" ")
    if not name:
        raise Fail(line, f"expected '<name>,<default assignment>', found {shown(value)}")
    after = value[value.find(token) + len(token) :].lstrip(" ")
    if after and not after.startswith(","):
        ctx.warn(
            line,
            f"access specification name ends before {shown(after[:1])} (Iometer reads names up to "
            f"the first comma, TAB, '|' or non-ASCII character); read as '{name}'",
        )
    return name


def _assignment(value: str, line: int, ctx: Context) -> str:
    comma = value.find(",")
    token, _ = extract_token(value[comma + 1 :] if comma >= 0 else "")
    upper = token.upper()
    if upper in ("NONE", "ALL", "DISK", "NET"):
        return upper
    if token in ("0", "1", "2", "3"):
        return ASSIGNMENTS[int(token)]
    ctx.warn(
        line,
        f"expected a default assignment NONE, ALL, DISK or NET after the spec name, "
        f"found {shown(token)}; read as NONE (as Iometer does)",
    )
    return "NONE"


def _data_line(text: str, line: int, ctx: Context) -> SpecLine:
    fields = text.split(",")
    if len(fields) < len(FIELDS):
        raise Fail(
            line,
            f"expected 8 comma-separated values ({','.join(FIELDS)}), found {len(fields)}: {shown(text)}",
        )
    if any(trim(f) for f in fields[len(FIELDS) :]):
        ctx.warn(line, f"values after the 8th on this access specification line are ignored: {shown(text)}")
    return SpecLine(*_ints(fields[: len(FIELDS)], FIELDS, line))


def _ints(fields: list[str], names: tuple[str, ...], line: int) -> list[int]:
    numbers = []
    for name, field in zip(names, fields, strict=True):
        number = strict_int(field)
        if number is None:
            raise Fail(line, f"expected an integer for '{name}', found {shown(trim(field))}")
        numbers.append(number)
    return numbers


def _check_ranges(sl: SpecLine, line: int, ctx: Context) -> None:
    for name, value in (("% of size", sl.of_size), ("% reads", sl.reads), ("% random", sl.random)):
        if not 0 <= value <= 100:
            ctx.warn(
                line, f"'{name}' is {value}, outside 0..100 (Iometer rejects this spec); kept as written"
            )
    # What no I/O can be made of: errors, so no test job is ever written for them.
    if sl.size < 1:
        ctx.error(
            line,
            f"the transfer 'size' is {sl.size} bytes; expected at least 1 (Iometer's editor "
            "refuses it and fio cannot do an I/O of that size): correct the size on this line",
        )
    if sl.burst < 1:
        ctx.error(line, f"'burst' is {sl.burst}; expected at least 1 I/O per burst: correct it on this line")
    for name, value in (("delay", sl.delay), ("align", sl.align), ("reply", sl.reply)):
        if value < 0:
            ctx.error(line, f"'{name}' is {value}; expected 0 or more: correct it on this line")


def percent_total_words(total: int) -> str:
    """The one verdict on an access specification whose '% of size' lines do not add up to 100, in the open
    file's warning, the plan's validation (Start refuses it), the spec editor and the CLI alike. Iometer
    refuses such a spec too: AccessSpecList::LoadConfigNew says "Percentages don't add to 100." and deletes
    it (src/AccessSpecList.cpp); Fiometer keeps it, so that it can be corrected, but never runs it."""
    return (
        f"'% of size' adds up to {total}, not 100; Iometer refuses such a specification "
        '("Percentages don\'t add to 100") and Start does too: make its lines add up to 100 '
        "(Access Specifications > Edit)"
    )


def _check_total(spec: AccessSpec, ctx: Context) -> None:
    total = sum(sl.of_size for sl in spec.lines)
    if total != 100:
        ctx.warn(spec.line_no, f"access specification '{spec.name}': {percent_total_words(total)}")
    if len(spec.lines) > MAX_LINES:
        ctx.warn(
            spec.line_no,
            f"access specification '{spec.name}' has {len(spec.lines)} lines; "
            f"Iometer allows at most {MAX_LINES}",
        )


def _add(specs: list[AccessSpec], spec: AccessSpec, ctx: Context) -> None:
    folded = spec.name.casefold()
    for i, old in enumerate(specs):
        if old.name.casefold() == folded:
            ctx.warn(
                spec.line_no,
                f"access specification '{spec.name}' is defined again; this definition "
                f"replaces the one at line {old.line_no} (as in Iometer)",
            )
            specs[i] = spec
            return
    specs.append(spec)


OLD_FORMAT_ALIGN = 2048  # Iometer 1.1.0's alignment of a line read from a file older than 1998.05.21


def read_specs_old(cur: Cursor, specs: list[AccessSpec], ctx: Context) -> None:
    """Six whitespace-separated fields per line, no names; a spec ends when '% of size' reaches 100.

    Iometer discards the line after the section banner (the column header), drops 0% lines, names
    one-line specs with SmartName and gives every spec the default assignment ALL.
    """
    if not cur.at_end():
        header, header_line = cur.next_line("")
        if not header.startswith("'"):
            ctx.warn(
                header_line,
                f"the line after 'ACCESS SPECIFICATIONS' is skipped as the column header "
                f"(old format), but it holds {shown(header)}",
            )
    lines: list[SpecLine] = []
    first_line = 0
    total = 0
    while not cur.at_end() and not cur.is_key(cur.pos):
        text, line = cur.next_line("")
        if text == "":
            continue
        fields = split_whitespace(text)
        if len(fields) < len(OLD_FIELDS) or strict_int(fields[0]) is None:
            raise Fail(
                line,
                f"expected six whitespace-separated integers ({' '.join(OLD_FIELDS)}) "
                f"for an access specification of a file older than 1998.05.21, found {shown(text)}",
            )
        if len(fields) > len(OLD_FIELDS):
            ctx.warn(
                line,
                f"values after the 6th on this old-format access specification line are ignored: "
                f"{shown(text)}",
            )
        size, of_size, reads, random, delay, burst = _ints(fields[: len(OLD_FIELDS)], OLD_FIELDS, line)
        sl = SpecLine(size, of_size, reads, random, delay, burst, align=0, reply=0)
        # Iometer 1.1.0 fills each line with its defaults before reading the six fields (InitAccessSpecLine:
        # size 2048, then align = size, i.e. 2048), so an old line keeps a 2048-byte alignment whatever its size
        # (2006.07.27 and earlier set 0: sector alignment)
        sl.align = OLD_FORMAT_ALIGN
        if sl.of_size == 0:
            ctx.warn(line, "access specification line makes up 0% of the test; discarded (as Iometer does)")
            continue
        _check_ranges(sl, line, ctx)
        if not lines:
            first_line = line
        lines.append(sl)
        total += sl.of_size
        if total >= 100:
            _add_old(specs, lines, first_line, ctx)
            lines, total = [], 0
    if lines:
        _add_old(specs, lines, first_line, ctx)


def _add_old(specs: list[AccessSpec], lines: list[SpecLine], line_no: int, ctx: Context) -> None:
    existing = ["Idle"] + [s.name for s in specs]
    taken = {n.casefold() for n in existing}
    untitled = untitled_name(existing, taken)
    name = smart_name(lines[0], taken | {untitled.casefold()}) if len(lines) == 1 else untitled
    spec = AccessSpec(name, "ALL", list(lines), line_no=line_no)
    _check_total(spec, ctx)
    specs.append(spec)
