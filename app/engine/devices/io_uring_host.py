"""Whether this machine can run fio's io_uring engine: the kernel's answer and the fio binary's.

The kernel is asked directly (``io_uring_setup`` with one entry, the ring closed at once): it refuses when it
is older than 5.1, when ``kernel.io_uring_disabled`` says so, or when a container's seccomp profile blocks the
call (Docker's default does). fio is asked which engines it was built with (``fio --enghelp``). Each answer is
kept per fio binary for the life of the process: neither changes while Fiometer runs.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import subprocess

SYS_IO_URING_SETUP = 425  # the same number on every Linux architecture (added after the tables were unified)
PARAMS_BYTES = 120  # sizeof(struct io_uring_params)


def kernel_refusal() -> str | None:
    """None when this kernel sets up an io_uring for this process, else why not, in plain words."""
    if platform.system() != "Linux":
        return "io_uring is Linux's (this is " + platform.system() + ")"
    return _kernel_refusal()


@functools.cache
def _kernel_refusal() -> str | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        params = ctypes.create_string_buffer(PARAMS_BYTES)
        fd = libc.syscall(SYS_IO_URING_SETUP, ctypes.c_uint(1), params)
    except (OSError, AttributeError) as e:  # no libc to call through
        return f"the kernel could not be asked ({e})"
    if fd >= 0:
        os.close(fd)
        return None
    code = ctypes.get_errno()
    if code == errno.ENOSYS:
        return "this kernel has no io_uring (it needs Linux 5.1 or later)"
    if code == errno.EPERM:
        return (
            "the kernel does not allow io_uring here (sysctl kernel.io_uring_disabled, or a container's "
            "seccomp profile)"
        )
    return f"the kernel refused to set up an io_uring ({os.strerror(code)})"


@functools.cache
def fio_engines(fio_path: str, timeout: float = 10.0) -> frozenset[str]:
    """The I/O engines ``fio --enghelp`` lists (empty when fio cannot be asked)."""
    try:
        out = subprocess.run(
            [fio_path, "--enghelp"], capture_output=True, text=True, timeout=timeout, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    return frozenset(line.strip() for line in out.splitlines()[1:] if line.strip())


def refusal(fio_path: str) -> str | None:
    """None when ``fio_path`` can run io_uring jobs on this machine, else why not."""
    why = kernel_refusal()
    if why is None and "io_uring" not in fio_engines(fio_path):
        why = f"{fio_path} was built without the io_uring engine"
    return why


def polled_queues(disk: str, sys_block: str = "/sys/block") -> bool:
    """Whether a block device has polled I/O queues (what fio's hipri needs: NVMe with poll_queues > 0)."""
    try:
        with open(os.path.join(sys_block, disk, "queue", "io_poll"), encoding="ascii") as f:
            return f.read().strip() == "1"
    except OSError:
        return False
