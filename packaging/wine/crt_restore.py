"""Undo crt_fill.py in a PyInstaller build made under Wine: the release build, which runs on Windows.

The build is made from the Wine test bed's patched modules (numpy imports its complex math from
crt_fill.FILLER there); this puts Windows' own ``api-ms-win-crt-math-l1-1-0.dll`` back, in place (the two
names have the same length). packaging/wine/setup.sh patches the installed copy again inside its Wine
test prefix only.

usage: python3 crt_restore.py ROOT     (prints the restored files)
"""

from __future__ import annotations

import sys
from pathlib import Path

from crt_fill import APISET, FILLER


def restore(root: Path) -> int:
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() in (".pyd", ".dll") and path.is_file():
            data = path.read_bytes()
            if FILLER in data:
                path.write_bytes(data.replace(FILLER, APISET))
                print(f"crt_restore: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(restore(Path(sys.argv[1])))
