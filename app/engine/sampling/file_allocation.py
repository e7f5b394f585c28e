"""How much of a region of a file was ever written (allocated), to tell reads of holes from reads of data.

Linux and macOS say where a file's data lies (``SEEK_DATA``/``SEEK_HOLE``); elsewhere, or where the file
system does not, the answer is None (unknown). A freshly created sparse file, or the unwritten part of
one, reads as zeros that no disk I/O produced."""

from __future__ import annotations

import os


def written_bytes(path: str, offset: int, length: int) -> int | None:
    """Bytes of ``[offset, offset + length)`` holding data (not holes); None when it cannot be told."""
    seek_data, seek_hole = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
    if seek_data is None or seek_hole is None or length <= 0:
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        end = min(offset + length, os.fstat(fd).st_size)
        pos, total = offset, 0
        while pos < end:
            try:
                data = os.lseek(fd, pos, seek_data)
            except OSError:  # ENXIO: no data after pos
                break
            if data >= end:
                break
            hole = min(os.lseek(fd, data, seek_hole), end)
            total += hole - data
            pos = hole
        return total
    except OSError:
        return None
    finally:
        os.close(fd)
