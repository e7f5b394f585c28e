"""How a local fio is asked to stop, per OS: the signal, and when fio is ready for it.

fio installs its stop handler (SIGINT, SIGTERM, and SIGBREAK on Windows) only in ``run_threads``, once its
job file is parsed (backend.c ``set_sig_handlers``); before that the signal's default action ends fio at once,
with no numbers ("killed (signal 2)") - a Stop pressed just as a step starts, or closing the window then. A
stop sent on its handler's installation ends fio before its jobs did any I/O: a stopped step without numbers.
So the stop waits for fio's first report (written by the threads it starts after installing the handler, after
its first status interval, also while it lays out test files): fio then ends with its final numbers. On Linux
the process's ``SigCgt`` mask must show the handler as well.

On Windows no signal is used. ``CTRL_BREAK_EVENT`` needs a console shared with fio, which the window (and the
packaged ``fiometer.exe``) does not have, and CPython's ``os.kill`` then falls through to
``TerminateProcess(pid, 1)`` (cpython #87128): fio ended at once with no numbers, Stop shown as a failure.
fio's own ``--trigger-file`` works with or without a console: fio's main loop (backend.c ``do_usleep``) looks
for the file every 10-100 ms, and when it exists ends its jobs as after a signal - final report and all,
exit code 0 - after saving verify state files (``local-*-verify.state``) in its working folder, which is
Fiometer's private job folder. fio 3.41 and 3.42 crash there (a NULL read in ``get_all_io_list`` for every
job without ``verify``; fixed by fio PR #2081, April 2026), so with them Windows keeps the signal: sent
directly where Fiometer shares its console with fio (the CLI in a terminal), else through fio's own console
(``windows_console``: attach, CTRL_BREAK to fio's group, detach). Wine cannot show that last way: there
``GenerateConsoleCtrlEvent`` fails (error 6 after attaching to a fio started with a console of its own,
error 12 on the console Wine gives a process started from a Linux shell, measured on this machine's Wine),
so where no way reaches fio (fio 3.41/3.42 under Wine) waiting out the grace would only let the step run on:
fio is ended at once and the step is stopped with its last report's numbers (``local_fio``), and said so.
"""

from __future__ import annotations

import signal
from pathlib import Path

_CTRL_BREAK_EVENT = 1


def stop_signal(os_name: str) -> int:
    """The signal that makes fio end its jobs and still print its final report."""
    if os_name == "Windows":
        return int(getattr(signal, "CTRL_BREAK_EVENT", _CTRL_BREAK_EVENT))
    return int(signal.SIGINT)


TRIGGER_FILE_CRASHES = frozenset({"3.41", "3.42"})  # fio releases that crash on their trigger file


def stops_by_trigger_file(os_name: str, version: str | None) -> bool:
    """Whether fio (``version`` as ``fio --version`` says, None: unknown) is stopped by creating its
    ``--trigger-file`` rather than by ``stop_signal``."""
    return os_name == "Windows" and version is not None and version not in TRIGGER_FILE_CRASHES


def trigger_file_arg(path: Path) -> str:
    return f"--trigger-file={path}"


def caught_signals(pid: int) -> int | None:
    """The mask of signals process ``pid`` has handlers for (Linux ``/proc/PID/status`` SigCgt), or None."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return int(line.split()[1], 16)
    except (OSError, ValueError, IndexError):
        return None
    return None


def ready_for_stop(pid: int, os_name: str, reported: bool) -> bool:
    """Whether fio (main process ``pid``) ends with its final numbers on ``stop_signal`` now; ``reported``:
    fio has written a report."""
    if not reported:
        return False
    if os_name == "Linux":
        mask = caught_signals(pid)
        return mask is None or bool(mask >> (int(signal.SIGINT) - 1) & 1)
    return True
