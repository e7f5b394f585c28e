"""A test file's facts and Fiometer's marker on it: stdlib only, so the same code runs on an ``ssh://``
manager's host (``remote.hold``) as here (``guards.safety``).

The facts (size, device and inode, modification and change times) and a random marker in the extended
attribute ``user.fiometer.test-file`` are what ``safety.CreatedFiles`` records; a file rewritten in place
changes its change time, which no program can set back.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat

MARKER_XATTR = "user.fiometer.test-file"

Facts = dict[str, int | str | None]
"""One file's record: size, dev, ino, mtime_ns, ctime_ns and marker."""


def facts_st(st: os.stat_result) -> Facts:
    return {
        "size": st.st_size,
        "dev": st.st_dev,
        "ino": st.st_ino,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
    }


def marker_of(where: str | int) -> str | None:
    """Fiometer's marker on a file (by path, not following a link, or by descriptor); "" where the file
    system keeps no extended attributes; None when absent."""
    try:
        if isinstance(where, int):
            return os.getxattr(where, MARKER_XATTR).decode("ascii", "replace")
        return os.getxattr(where, MARKER_XATTR, follow_symlinks=False).decode("ascii", "replace")
    except OSError as e:
        return "" if e.errno in (errno.ENOTSUP, errno.EOPNOTSUPP) else None
    except AttributeError:  # pragma: no cover - no extended attributes on this OS (Windows)
        return ""


def stamp(fd: int) -> Facts | None:
    """Write a fresh marker on the open file and return its facts (after: the marker moves its change time).
    None unless it is a regular file with exactly one link."""
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode) or before.st_nlink != 1:
            return None
        token = secrets.token_hex(8)
        try:
            os.setxattr(fd, MARKER_XATTR, token.encode("ascii"))
        except OSError as e:
            if e.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP):
                return None
            token = ""
        except AttributeError:  # pragma: no cover - Windows
            token = ""
        st = os.fstat(fd)
    except OSError:
        return None
    return {**facts_st(st), "marker": token}


def same(path: str, fd: int) -> bool:
    """The name still leads to the open object: not a link, same device and inode, one link."""
    try:
        st, held = os.lstat(path), os.fstat(fd)
    except OSError:
        return False
    return (
        stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)
    )
