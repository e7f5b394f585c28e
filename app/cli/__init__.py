"""The command line: `main` is the `fiometer` entry point (see entry.py)."""

from app.cli.entry import main

__all__ = ["main"]
