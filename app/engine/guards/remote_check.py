"""The local checks, run on an ``ssh://`` manager's host over SSH (a plain fio server offers no way).

A small, self-contained Python program (``CHECKER``) is sent to ``python3`` on the remote host through
the user's ``ssh``; for every target path it reports what the path resolves to (every link followed),
the object's type, device numbers, size and identity, whether a block device is in use as the kernel
sees it (an exclusive open fails with EBUSY while it is mounted in any namespace, swap, or held by
dm/md/btrfs/a loop device) and where it is mounted. ``findings`` turns that into what needs arming and
what cannot run, the same words as for local targets. Without ``python3`` there, only the checks
through fio (app.engine.transports.remote_files) remain, and a note says so.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from typing import Any

from app.engine.guards.safety import WriteRisk

CHECKER = r"""
import json, os, stat, sys, errno
out = {}
for path in json.loads(sys.stdin.read()):
    r = {"real": os.path.realpath(path)}
    try:
        st = os.stat(path)
    except FileNotFoundError:
        r["kind"] = "missing"
        r["folder"] = os.path.isdir(os.path.dirname(r["real"]))
        out[path] = r
        continue
    except OSError as e:
        r["kind"] = "error"; r["error"] = e.strerror or str(e); out[path] = r; continue
    m = st.st_mode
    r["kind"] = ("block" if stat.S_ISBLK(m) else "char" if stat.S_ISCHR(m) else "dir" if stat.S_ISDIR(m)
                 else "file" if stat.S_ISREG(m) else "other")
    r["size"], r["dev"], r["ino"] = st.st_size, st.st_dev, st.st_ino
    if r["kind"] in ("block", "char"):
        r["rdev"] = [os.major(st.st_rdev), os.minor(st.st_rdev)]
    if r["kind"] == "block":
        try:
            fd = os.open(path, os.O_RDONLY | os.O_EXCL | getattr(os, "O_CLOEXEC", 0))
            os.close(fd)
            r["busy"] = False
        except OSError as e:
            r["busy"] = e.errno == errno.EBUSY
            if e.errno != errno.EBUSY:
                r["busy_error"] = e.strerror
        mounts = []
        try:
            with open("/proc/self/mountinfo") as f:
                for line in f:
                    parts = line.split()
                    if parts[2] == "%d:%d" % tuple(r["rdev"]):
                        mounts.append(parts[4])
        except OSError:
            pass
        r["mounts"] = mounts
    out[path] = r
print(json.dumps(out))
"""

TIMEOUT_S = 20.0


class CheckUnavailable(Exception):
    """The checker could not run on that host (no python3, ssh failed); str() says why."""


CheckRecord = dict[str, Any]
"""What CHECKER reports for one path: JSON from the remote host, read field by field with .get()."""

Identity = tuple[str] | tuple[str, int | None, int | None, tuple[int, ...]]
"""(kind,) for what does not exist there, else (kind, dev, ino, rdev): see ``identity``."""


@dataclass(frozen=True)
class Finding:
    risk: WriteRisk | None = None
    problem: str = ""


def run_checker(ssh_argv: list[str], paths: list[str]) -> dict[str, CheckRecord]:
    """Run CHECKER on the host ``ssh_argv`` reaches (the ssh command up to and including its destination)."""
    try:
        done = subprocess.run(
            [*ssh_argv, "python3", "-c", _quoted(CHECKER)],
            input=json.dumps(paths),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CheckUnavailable(f"ssh could not run the check: {e}") from e
    if done.returncode != 0:
        raise CheckUnavailable((done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1])
    try:
        data = json.loads(done.stdout)
    except ValueError as e:
        raise CheckUnavailable(f"the check's answer was not understood: {done.stdout[:200]!r}") from e
    if not isinstance(data, dict):
        raise CheckUnavailable("the check's answer was not understood")
    return data


def _quoted(code: str) -> str:
    """The remote shell reads the command line again: quote the program once for it."""
    return "'" + code.replace("'", "'\"'\"'") + "'"


def identity(r: CheckRecord) -> Identity:
    """What the checked object is: its type and, for an existing one, device and inode (and rdev)."""
    kind = r.get("kind", "unknown")
    if kind in ("missing", "unknown", "error"):
        return (kind,)
    return (kind, r.get("dev"), r.get("ino"), tuple(r.get("rdev") or ()))


def describe(ident: Identity) -> str:
    if len(ident) == 1:
        return ident[0]
    kind, dev, ino, rdev = ident
    return f"{kind} {':'.join(map(str, rdev))}" if rdev else f"{kind} (inode {ino} on device {dev})"


def finding(manager: str, target: str, path: str, writes: bool, r: CheckRecord) -> Finding:
    """What one checked path means for the run."""
    where = f"manager {manager!r}, target {target!r}"
    real = r.get("real", path)
    if real != path:
        return Finding(
            problem=f"{where}: {path} leads to {real} on that host (a link); give {real} itself, so "
            "fio opens what was checked"
        )
    kind = r.get("kind")
    if kind == "missing":
        return (
            Finding()
            if r.get("folder")
            else Finding(
                problem=f"{where}: the folder of {path} does not exist on that host; create it there first"
            )
        )
    if kind == "dir":
        return Finding(problem=f"{where}: {path} is a folder on that host; give a test file inside it")
    if kind == "other":
        return Finding(
            problem=f"{where}: {path} is neither a file nor a device on that host (a pipe or socket)"
        )
    if kind == "error":
        return Finding(problem=f"{where}: Fiometer cannot examine {path} on that host ({r.get('error')})")
    if kind in ("block", "char"):
        if not writes:
            return Finding()
        uses = [f"mounted at {m}" for m in r.get("mounts", [])]
        if r.get("busy"):
            uses.append("in use as the kernel sees it (an exclusive open fails: mounted, swap, or held)")
        if kind == "char" or r.get("busy_error"):
            uses.append("Fiometer cannot tell what uses it")
        return Finding(
            WriteRisk(
                manager,
                target,
                path,
                f"a {'block' if kind == 'block' else 'character'} device "
                "on that host: writes destroy its data",
                bool(uses),
                "; ".join(uses),
            )
        )
    return Finding()  # a regular file: whose it is, fio says (the marker, app.engine.transports.remote_files)
