"""Linux: a disk's kernel counters (/sys/block/NAME/stat) as fio's JSON ``disk_util`` entries.

fio finds the disk of a target from the file name it was given (``lstat``). A target handed over as
``/proc/self/fd/N`` (``engine.held_targets``) is a link in procfs to fio, so fio reports no disk for it;
``LocalFio`` then adds the entries fio would have written, from the same counters fio reads, counted from
just before fio starts: read/write I/Os, merges, ticks, time in queue and the utilisation in percent.

The entries Fiometer writes itself carry the sectors over the same span as their I/O counts (``span_*``), for
request sizes where a step is too short for a kernel window. fio before 3.36 does not say how many sectors a
disk moved, so a request size (iostat's rareq-sz) cannot be
had from its counts; ``LocalFio`` adds to each disk of fio's reports the kernel's own counters between its
first report and this one (:func:`window_entry`, key ``KERNEL_WINDOW``): I/Os, sectors and the window's
length, all over one and the same window, as iostat reads them.
"""

from __future__ import annotations

from pathlib import Path

SYS_BLOCK = Path("/sys/block")
SYS_CLASS_BLOCK = Path("/sys/class/block")  # partitions too (sda1), which /sys/block lists under their disk
KERNEL_WINDOW = "kernel_window"  # the key of a disk_util entry's kernel counters (window_entry)
SECTOR = 512  # /sys/block/*/stat counts 512-byte sectors whatever the device's sector size


def read(name: str, sys_block: Path = SYS_BLOCK) -> tuple[int, ...] | None:
    """The counters of disk ``name``: reads, read merges, read sectors, read ticks, writes, write merges, write
    sectors, write ticks, in flight, io_ticks, time in queue (and more on newer kernels); None if absent."""
    for base in (sys_block, SYS_CLASS_BLOCK) if sys_block == SYS_BLOCK else (sys_block,):
        try:
            return tuple(int(x) for x in (base / name / "stat").read_text().split())
        except (OSError, ValueError):
            continue
    return None


def window_entry(base: tuple[int, ...], now: tuple[int, ...], elapsed_ms: float) -> dict[str, int | float]:
    """The kernel's counts between two readings of one disk: I/Os and 512-byte sectors each way, and the
    window's length in ms."""
    d = [max(b - a, 0) for a, b in zip(base, now, strict=False)]
    return {
        "msec": round(elapsed_ms, 3),
        "read_ios": d[0],
        "read_sectors": d[2],
        "write_ios": d[4],
        "write_sectors": d[6],
    }


def fio_entry(
    name: str, base: tuple[int, ...], now: tuple[int, ...], elapsed_ms: float
) -> dict[str, str | int | float]:
    """One ``disk_util`` entry as fio 3.36's JSON writes it, for the counters between ``base`` and ``now``."""
    d = [max(b - a, 0) for a, b in zip(base, now, strict=False)]
    util = 100.0 * d[9] / elapsed_ms if elapsed_ms > 0 else 0.0
    return {
        "name": name,
        "read_ios": d[0],
        "write_ios": d[4],
        # the sectors over the very span of these I/O counts: a request size however short the step (a
        # step of one report has no kernel window); not fio's "read_sectors", whose window is fio's
        "span_read_sectors": d[2],
        "span_write_sectors": d[6],
        "read_merges": d[1],
        "write_merges": d[5],
        "read_ticks": d[3],
        "write_ticks": d[7],
        "in_queue": d[10],
        "util": min(util, 100.0),
    }
