"""Qt's offscreen platform with a screen of a chosen size.

The offscreen platform's screen is 800 x 800 by default, and the main window fits itself to its screen: a
benchmark asking for a 1280 x 800 window would measure a smaller one (charts at their minimum size). Import
this before QApplication is made, and call ``use_screen`` first.
"""

from __future__ import annotations

import json
import os
import tempfile


def use_screen(width: int = 1920, height: int = 1200) -> None:
    """Run offscreen (unless another platform was asked for) on a screen of ``width`` x ``height`` pixels."""
    platform = os.environ.get("QT_QPA_PLATFORM", "offscreen")
    if platform != "offscreen":
        return
    config = {
        "screens": [
            {
                "name": "benchmark",
                "x": 0,
                "y": 0,
                "width": width,
                "height": height,
                "logicalDpi": 96,
                "logicalBaseDpi": 96,
                "dpr": 1,
            }
        ]
    }
    fd, path = tempfile.mkstemp(prefix="fiometer-screen-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(config, f)
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={path}"
