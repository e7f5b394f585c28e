"""Destructive writes are armed, not assumed.

A step that writes to a raw device, or touches an existing file that Fiometer did not create as
a test file, is refused until the user arms that exact target (CLI ``--allow-write TARGET``; the
GUI asks). fio also rewrites an existing file that is smaller than the job's size even for a read
job, so such files count as written. A device that is mounted or partitioned needs a second,
explicit override. Only local paths can be checked for existence; remote files are created by fio.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.engine.jobfile import JobFile
from app.model.plan import Plan


@dataclass(frozen=True)
class WriteRisk:
    manager: str
    target: str  # the plan's target name
    path: str
    reason: str
    in_use: bool = False  # mounted or partitioned device: needs the second override

    def names(self) -> set[str]:
        return {self.target, self.path}


class CreatedFiles:
    """The test files Fiometer created, so reusing them later needs no arming."""

    def __init__(self, path: Path):
        self.path = path

    def _load(self) -> set[str]:
        try:
            return set(json.loads(self.path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return set()

    def __contains__(self, file: str) -> bool:
        return os.path.abspath(file) in self._load()

    def add(self, files: Iterable[str]) -> None:
        known = self._load() | {os.path.abspath(f) for f in files}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(sorted(known), indent=1), encoding="utf-8")
        tmp.replace(self.path)


def device_in_use(path: str, mounts_text: str | None = None, sys_block: Path = Path("/sys/block")) -> bool:
    """Linux: the device or one of its partitions is mounted, or it has partitions."""
    dev = os.path.realpath(path)
    name = os.path.basename(dev)
    if mounts_text is None:
        try:
            mounts_text = Path("/proc/mounts").read_text()
        except OSError:
            mounts_text = ""
    mounted = {line.split()[0] for line in mounts_text.splitlines() if line.strip()}
    if any(m == dev or (m.startswith(dev) and m[len(dev):].lstrip("p").isdigit()) for m in mounted):
        return True
    block = sys_block / name
    return block.is_dir() and any((block / child / "partition").exists() for child in os.listdir(block))


def _writes(plan: Plan, spec_name: str) -> bool:
    spec = plan.spec(spec_name)
    return spec is None or any(line.reads < 100 for line in spec.lines)


def write_risks(plan: Plan, jobfiles: dict[str, JobFile], local: set[str], registry: CreatedFiles,
                engine: str | None = None) -> list[WriteRisk]:
    """Targets of one step that would be written or rewritten, and why."""
    if engine == "null":  # the null engine never touches its files
        return []
    out: list[WriteRisk] = []
    for manager, jf in jobfiles.items():
        for job in jf.jobs:
            writes = _writes(plan, job.spec)
            if job.is_device:
                if writes:
                    in_use = manager in local and device_in_use(job.path)
                    out.append(WriteRisk(manager, job.target_name, job.path,
                                         "writes to a raw device destroy its data", in_use))
                continue
            if manager not in local or not os.path.isfile(job.path) or job.path in registry:
                continue
            size = job.size
            if writes:
                out.append(WriteRisk(manager, job.target_name, job.path,
                                     "the file exists and Fiometer did not create it; writes overwrite it"))
            elif size is not None and os.path.getsize(job.path) < size:
                out.append(WriteRisk(manager, job.target_name, job.path,
                                     f"the file exists, is smaller than the test size ({size} bytes) and fio "
                                     "would rewrite it"))
    return out


def unarmed(risks: list[WriteRisk], allow: set[str], allow_in_use: set[str]) -> list[str]:
    """Messages for risks the user has not armed; empty means the step may run."""
    msgs = []
    for r in risks:
        if not r.names() & allow:
            msgs.append(f"manager {r.manager!r}, target {r.target!r} ({r.path}): {r.reason}; "
                        f"arm it with --allow-write '{r.target}'")
        elif r.in_use and not r.names() & allow_in_use:
            msgs.append(f"manager {r.manager!r}, target {r.target!r} ({r.path}) is mounted or partitioned; "
                        f"writing would corrupt a file system — if you really mean it, add "
                        f"--allow-write-mounted '{r.target}'")
    return msgs
