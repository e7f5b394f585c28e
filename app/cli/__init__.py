"""The command line: `main` is the `fiometer` entry point (see entry.py)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """``fiometer`` (``argv`` None: the process's own). The window's start shows its splash before the
    command modules are read (app.cli.early), then entry.main runs the command."""
    if argv is None:
        from app.cli.early import early_splash

        early_splash(sys.argv[1:])
    from app.cli.entry import main as run

    return run(argv)


__all__ = ["main"]
