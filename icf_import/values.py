"""Turning value text into numbers, switches and enum names the way Iometer's loaders do.

Every function raises Fail (aborting the section) when the text cannot mean what is expected.
"""

from __future__ import annotations

from icf_import.cursor import Context, Fail, shown
from icf_import.lexer import extract_int, extract_token, looks_like_text


def take_int(value: str, line: int, what: str) -> tuple[int, str]:
    """One integer read like ExtractFirstInt, and the rest of the value.

    Iometer skips any text before the number; text that is clearly not a number (a word or a
    placeholder such as [*TIME_SECS*]) is reported instead of being skipped.
    """
    number, rest, skipped = extract_int(value)
    if number is None or looks_like_text(skipped):
        raise Fail(line, f"expected an integer for {what}, found {shown(value)}")
    return number, rest


def take_ints(value: str, count: int, line: int, what: str, names: tuple[str, ...]) -> tuple[list[int], str]:
    """count integers separated by commas and/or whitespace; names label each for messages."""
    numbers = []
    rest = value
    for i in range(count):
        number, rest2, skipped = extract_int(rest)
        if number is None or looks_like_text(skipped):
            raise Fail(
                line,
                f"expected {count} integers ({', '.join(names)}) for {what}, "
                f"found {shown(value)} where {names[i]} should be",
            )
        numbers.append(number)
        rest = rest2
    return numbers, rest


def take_count(value: str, line: int, what: str) -> tuple[int, str]:
    """A non-negative integer (Iometer reads these as unsigned 64-bit decimal numbers)."""
    number, rest = take_int(value, line, what)
    if number < 0:
        raise Fail(line, f"expected a non-negative integer for {what}, found {number}")
    return number, rest


def take_switch(value: str, line: int, what: str) -> tuple[bool, str]:
    """ENABLED or DISABLED, as the next token."""
    token, rest = extract_token(value)
    upper = token.upper()
    if upper == "ENABLED":
        return True, rest
    if upper == "DISABLED":
        return False, rest
    raise Fail(line, f"expected ENABLED or DISABLED for {what}, found {shown(token or value)}")


def name_or_index(value: str, names: tuple[str, ...], line: int, what: str) -> str:
    """An enum written as its name, or (older files) as its integer index into names."""
    upper = value.upper()
    if upper in names:
        return upper
    number, _, skipped = extract_int(value)
    if number is None or looks_like_text(skipped):
        raise Fail(
            line, f"expected {' | '.join(names)} (or 0..{len(names) - 1}) for {what}, found {shown(value)}"
        )
    if not 0 <= number < len(names):
        raise Fail(line, f"expected {what} 0..{len(names) - 1} ({' | '.join(names)}), found {number}")
    return names[number]


def step_type(rest: str, line: int, what: str, ctx: Context) -> str:
    """LINEAR or EXPONENTIAL after the cycling numbers; older files wrote 0 or 1."""
    token, _ = extract_token(rest)
    upper = token.upper()
    if upper in ("LINEAR", "EXPONENTIAL"):
        return upper
    if token == "":
        ctx.warn(line, f"expected a step type (LINEAR or EXPONENTIAL) for {what}, found none; read as LINEAR")
        return "LINEAR"
    if token in ("0", "1"):
        return ("LINEAR", "EXPONENTIAL")[int(token)]
    raise Fail(
        line, f"expected LINEAR or EXPONENTIAL (or 0/1) for the {what} step type, found {shown(token)}"
    )


def workers_to_spawn(value: str, line: int, what: str) -> int:
    """NUMBER_OF_CPUS (-1) or an integer."""
    token, _ = extract_token(value)
    if token.upper() == "NUMBER_OF_CPUS":
        return -1
    number, _, skipped = extract_int(token)
    if token == "" or number is None or skipped or looks_like_text(token):
        raise Fail(line, f"expected NUMBER_OF_CPUS or an integer for {what}, found {shown(value)}")
    return number


def target_type(value: str, line: int, what: str) -> str:
    """DISK, NETWORK,TCP or NETWORK,VI (tokens: the separator may be a comma or spaces)."""
    first, rest = extract_token(value)
    kind = first.upper()
    if kind == "DISK":
        return "DISK"
    if kind == "NETWORK":
        sub, _ = extract_token(rest)
        if sub.upper() in ("TCP", "VI"):
            return f"NETWORK,{sub.upper()}"
        raise Fail(line, f"expected NETWORK,TCP or NETWORK,VI for {what}, found {shown(value)}")
    raise Fail(line, f"expected DISK, NETWORK,TCP or NETWORK,VI for {what}, found {shown(value)}")
