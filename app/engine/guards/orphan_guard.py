"""Linux: fio ends within a moment when Fiometer is killed, whatever the load.

Why a guard: fio runs each job in a process of its own (forked by fio's main process, then
``setsid()``), so nothing of Fiometer's reaches the jobs when Fiometer dies. The parent-death
signal (``PR_SET_PDEATHSIG``, set in ``local_fio``) only reaches fio's main process, and as SIGTERM
it asks fio to *end gracefully*: every job notices the request, tears down, reports, then the main
process writes its final JSON+ report to a pipe nobody reads. With 256 jobs on a busy machine that
took 12-18 s, with fio writing to the targets meanwhile. Nobody is left to read those numbers.

So each local fio run gets a guard: a tiny ``/bin/sh`` in its own session, blocked reading a pipe
only Fiometer holds. Fiometer tells it ``done`` when fio has ended; if instead the pipe closes
without a word (Fiometer died), the guard freezes fio's main process (no more jobs are forked),
kills its children, then fio itself. The guard checks first that the pid still is this run's
fio (its command line holds the job file's unique path), so a reused pid is never touched.
"""

from __future__ import annotations

import contextlib
import os
import platform
import subprocess

SHELL = "/bin/sh"
_SCRIPT = r"""
read -r word
[ "$word" = done ] && exit 0
grep -qF -- "$2" "/proc/$1/cmdline" 2>/dev/null || exit 0
kill -STOP "$1" 2>/dev/null
kill -KILL $(cat /proc/"$1"/task/*/children 2>/dev/null) 2>/dev/null
kill -KILL "$1" 2>/dev/null
kill -CONT "$1" 2>/dev/null
exit 0
"""


def available(os_name: str | None = None) -> bool:
    return (os_name or platform.system()) == "Linux" and os.access(SHELL, os.X_OK)


class OrphanGuard:
    """Kills fio process ``pid`` (started with ``jobfile`` on its command line) and its job processes
    if this process dies before calling ``release()``."""

    def __init__(self, pid: int, jobfile: str):
        self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            [SHELL, "-c", _SCRIPT, "fiometer-guard", str(pid), jobfile],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C or a kill of Fiometer's process group spares it
        )

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def release(self) -> None:
        """fio has ended: the guard leaves without touching anything."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError, ValueError):
            assert proc.stdin is not None
            proc.stdin.write(b"done\n")
            proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def guard(pid: int, jobfile: str, os_name: str | None = None) -> OrphanGuard | None:
    """A guard for this fio run, or None where there is none (not Linux, no /bin/sh, cannot start)."""
    if not available(os_name):
        return None
    try:
        return OrphanGuard(pid, jobfile)
    except OSError:
        return None
