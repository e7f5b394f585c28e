"""Entry point of the packaged app (PyInstaller): the same `fiometer` command as `pip install` gives.

No arguments opens the GUI; `fiometer --smoke` checks the build; `--remote-host` is the process that
reads remote managers for a run (app.engine.transports.remote_host starts it); `--run-apart` the process that
runs a large fan-out's run for the window (app.session.run_apart starts it). On Windows this script becomes both
fiometer.exe (no console window) and fiometer-cli.exe (console), see packaging/fiometer.spec.
"""

import sys

from app.cli import main

if __name__ == "__main__":
    if sys.argv[1:] == ["--remote-host"]:
        from app.engine.transports.remote_host_child import main as remote_host

        sys.exit(remote_host())
    if sys.argv[1:] == ["--run-apart"]:
        from app.session.run_apart_child import main as run_apart

        run_apart()
    sys.exit(main())
