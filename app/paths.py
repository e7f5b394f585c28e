"""Where Fiometer's bundled resources live (source tree, installed tree or frozen app)."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "resources"
    return Path(__file__).resolve().parents[1] / "resources"


def example_plan() -> Path:
    return resources_dir() / "examples" / "vmware-unofficial-storage-performance.icf"
