"""What `fiometer` does before reading its command modules (about a second, many under load): when the
command opens the window (`fiometer`, `fiometer gui`, `fiometer --db X gui PLAN`), the splash goes on screen
at once (app.ui.splash; issue 38.7). Never fatal: without PySide6 or a display nothing is shown here, and
the command says why itself."""

from __future__ import annotations

NO_WINDOW = ("--screenshot", "-h", "--help", "--version", "--smoke")
VALUED_GLOBAL = ("--db",)  # global options that take a value, before the command


def wants_window(args: list[str]) -> bool:
    """Whether these arguments open the window (a screenshot or help does not)."""
    if any(a == f or a.startswith(f + "=") for a in args for f in NO_WINDOW):
        return False
    rest = list(args)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in VALUED_GLOBAL and rest:
            rest.pop(0)
    return not rest or rest[0] == "gui"


def early_splash(args: list[str]) -> bool:
    """Show the splash (kept by app.ui.splash until the window is up) when ``args`` open the window."""
    from app.cli.system_commands import has_no_display

    if not wants_window(args) or has_no_display():
        return False
    try:
        from app.ui.splash import keep, starting
    except ImportError:
        return False
    keep(starting())
    return True
