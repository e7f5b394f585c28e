"""Where Fiometer's bundled resources live, the one lookup for them: ``resources/`` at the top of a checkout,
``app/resources`` in an installed wheel (package data mapped there by setup.py), ``resources`` beside the
frozen app's modules."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "resources"
    here = Path(__file__).resolve().parent
    installed = here / "resources"
    return installed if installed.is_dir() else here.parent / "resources"


def example_plan() -> Path:
    return resources_dir() / "examples" / "vmware-unofficial-storage-performance.icf"


def user_guide() -> Path:
    """The user guide shown by Help > User guide: a copy of docs/user-guide.md shipped with the resources
    (tests/unit/test_user_guide_resource.py keeps the copy equal to the docs)."""
    return resources_dir() / "docs" / "user-guide.md"


ICON_SIZES = (16, 32, 48, 64, 128, 256)


def icons_dir() -> Path:
    return resources_dir() / "icons"


def icon_files() -> list[Path]:
    """The application icon for the GUI (``QIcon`` + ``addFile`` each): PNGs 16..256 px, then the SVG."""
    icons = icons_dir()
    return [icons / f"fiometer-{s}.png" for s in ICON_SIZES] + [icons / "fiometer.svg"]
