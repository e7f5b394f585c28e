"""Marks for tests that cannot run on every OS Fiometer supports, each with its reason.

`posix_only`: the behaviour itself is POSIX (a pid's /proc entry, a FIFO, a file mode, a block-device
node); under Windows Python (`bash bootstrap.sh test-windows`) the test is skipped and says why.
`wine_limit`: Windows has it but Wine does not show it; skipped under Wine, run on a real Windows.
`windows_only`: a Windows branch that only Windows Python can exercise; skipped elsewhere.
"""

from __future__ import annotations

import sys

import pytest

ON_WINDOWS = sys.platform == "win32"


def under_wine() -> bool:
    """Windows Python running in Wine (ntdll exports wine_get_version there, never on Windows)."""
    if not ON_WINDOWS:
        return False
    import ctypes

    return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")


def posix_only(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(ON_WINDOWS, reason=f"POSIX by nature: {reason}")


def windows_only(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(not ON_WINDOWS, reason=f"Windows only: {reason}")


# Wine on Xvfb (no window manager) gives Qt's window no keyboard focus: key events reach neither shortcuts nor
# the focused view (measured: Esc and Return did nothing, the same actions triggered from the menu worked)
KEYS_UNDER_WINE = (
    "keys typed into the window (no keyboard focus under Wine on Xvfb; the menu actions are tested)"
)


def wine_limit(what: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(under_wine(), reason=f"Wine cannot show {what}; needs real Windows")


__all__ = ["KEYS_UNDER_WINE", "ON_WINDOWS", "posix_only", "under_wine", "windows_only", "wine_limit"]
