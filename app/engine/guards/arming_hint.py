"""The arming hint's target name (``--allow-write NAME``) as the user's shell wants it typed, and a name copied
from such a hint read back as the name.

POSIX shells strip single quotes; cmd.exe strips none of them (``'C:'`` reaches Fiometer with its quotes) but
strips double quotes, as PowerShell does: on Windows the hint uses double quotes, which both shells take. A name
that arrives still wrapped in one pair of matching quotes (a hint copied into the other kind of shell) is read
without them: no target name begins and ends with the same quote.
"""

from __future__ import annotations

import platform

QUOTES = ("'", '"')


def shell_arg(name: str, os_name: str | None = None) -> str:
    """``name`` quoted for the shell of ``os_name`` (default: this system's)."""
    if (os_name or platform.system()) == "Windows":
        # cmd.exe and PowerShell: double quotes; a double quote inside is written as two (both shells read "")
        return '"' + name.replace('"', '""') + '"'
    return "'" + name.replace("'", "'\"'\"'") + "'"


def copied_name(text: str) -> str:
    """``text`` without one pair of matching quotes around it (``'C:'`` from a hint pasted into cmd.exe)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in QUOTES:
        return text[1:-1]
    return text
