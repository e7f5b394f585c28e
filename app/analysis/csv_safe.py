"""Cells a spreadsheet will not run: text that starts like a formula is written with a leading apostrophe.

Excel, LibreOffice and Google Sheets treat a cell starting with ``=``, ``+``, ``-`` or ``@`` (and, after
a tab or carriage return, whatever follows) as a formula, so a run, target or spec name read from a plan
someone sent could run commands when the CSV is opened. A real number (``-1``, ``+2.5``, ``-3e-05``) stays
a number: only text that does not parse as one is neutralised. Every CSV Fiometer writes uses this.
"""

from __future__ import annotations

import re

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def safe_cell(value: object) -> str:
    """The text a CSV cell holds for ``value``; None is empty, numbers are written as they are."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    text = str(value)
    if text.startswith(FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text
