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

__all__ = [
    "AccessSpec", "BarChart", "Cycling", "Diagnostic", "IcfDocument", "IcfError", "Manager",
    "QueueDepthCycling", "ResultsDisplay", "SpecLine", "Target", "TestSetup", "Worker",
]
