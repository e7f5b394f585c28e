"""Iometer .icf reader and writer (pure Python; imports neither Qt nor app)."""

from icf_import.document import (
    AccessSpec,
    BarChart,
    Cycling,
    Diagnostic,
    IcfDocument,
    IcfError,
    Manager,
    QueueDepthCycling,
    ResultsDisplay,
    SpecLine,
    Target,
    TestSetup,
    Worker,
)
from icf_import.lexer import version_number
from icf_import.reader import load, load_strict, looks_like_icf, parse
from icf_import.writer import save, write

__all__ = [
    "AccessSpec",
    "BarChart",
    "Cycling",
    "Diagnostic",
    "IcfDocument",
    "IcfError",
    "Manager",
    "QueueDepthCycling",
    "ResultsDisplay",
    "SpecLine",
    "Target",
    "TestSetup",
    "Worker",
    "load",
    "load_strict",
    "looks_like_icf",
    "parse",
    "save",
    "version_number",
    "write",
]
