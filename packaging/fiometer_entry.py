"""Entry point of the packaged app (PyInstaller): the same `fiometer` command as `pip install` gives.

No arguments opens the GUI; `fiometer --smoke` checks the build. On Windows this script becomes both
fiometer.exe (no console window) and fiometer-cli.exe (console), see packaging/fiometer.spec.
"""

import sys

from app.cli import main

if __name__ == "__main__":
    sys.exit(main())
