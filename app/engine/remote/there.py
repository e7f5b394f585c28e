"""What runs on an ``ssh://`` manager's host (started by ``remote.hold``, under that host's python3):
the local rules themselves, not a copy of them.

``place`` examines each target as ``placement.place_local`` does here (links followed, file type, device
numbers, what uses it through the loop stack, Fiometer's marker); ``hold`` opens, verifies and lays out a
step's targets with ``held_targets.hold`` and keeps the descriptors open while fio runs: fio, on the same
host, is given ``/proc/<pid>/fd/N`` of this process, so a path swapped after the check cannot redirect it.
After the step the files fio was given are stamped and their facts returned (``file_marks``), only while
their names still lead to them. Imports only the standard library and the modules sent with it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import IO, Any

from app.engine.guards import file_marks
from app.engine.guards.held_targets import Arming, HoldRefused, hold
from app.engine.jobs.placement import Placement, PlacementError, place_local


@dataclasses.dataclass
class Job:
    """The part of a job (``jobfile.JobInfo``) the hold needs."""

    path: str
    target_name: str
    is_device: bool
    writes: bool
    network: bool
    offset: int
    size: int | None
    placement: Placement | None


@dataclasses.dataclass
class Jobs:
    text: str
    jobs: list[Job]


def placement_from(d: dict[str, Any]) -> Placement:
    """A Placement from its JSON (tuples arrive as lists)."""
    fields = dict(d)
    for name in ("identity", "obj", "backing"):
        if fields.get(name) is not None:
            fields[name] = tuple(fields[name])
    fields["in_use"] = tuple(fields.get("in_use") or ())
    return Placement(**fields)


def place(targets: list[list[Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path, is_device in targets:
        try:
            placed = place_local(path, bool(is_device))
        except PlacementError as e:
            out[path] = {"error": str(e)}
            continue
        d = dataclasses.asdict(placed)
        d["marker"] = file_marks.marker_of(placed.path) if placed.exists and not placed.is_device else None
        out[path] = d
    return out


def _send(out: IO[str], data: dict[str, Any]) -> None:
    out.write(json.dumps(data) + "\n")
    out.flush()


def serve_hold(request: dict[str, Any], inp: IO[str], out: IO[str]) -> None:
    jobs = [
        Job(**{**j, "placement": placement_from(j["placement"]) if j.get("placement") else None})
        for j in request["jobs"]
    ]
    arming = Arming(
        {p: tuple(o) if o else None for p, o in request["arming"]["objects"].items()},
        set(request["arming"]["in_use"]),
    )
    known: dict[str, Any] = request["known"]

    def owns(path: str, st: os.stat_result, fd: int) -> bool:
        return known.get(path) is not None and known[path] == {
            **file_marks.facts_st(st),
            "marker": file_marks.marker_of(fd),
        }

    said: list[str] = []
    try:
        held = hold(Jobs(request["text"], jobs), arming, owns, say=said.append)  # type: ignore[arg-type]
    except HoldRefused as e:
        _send(out, {"refused": str(e), "said": said})
        return
    try:
        _send(
            out,
            {
                "pid": os.getpid(),
                "text": held.text,
                "files": list(held.files),
                "laid_out": held.laid_out,
                "said": said,
            },
        )
        line = inp.readline()  # the step ran; an empty line (or the session's end): nothing to adopt
        wanted = json.loads(line).get("adopt", []) if line.strip() else []
        adopted = {}
        for path in wanted:
            fd = held.files.get(path)
            facts = file_marks.stamp(fd) if fd is not None else None
            if facts is not None and file_marks.same(path, fd):  # type: ignore[arg-type]
                adopted[path] = facts
        _send(out, {"adopted": adopted})
    finally:
        held.close()


NOT_LINUX = (
    "Fiometer checks and holds targets for fio only on Linux hosts (fio there opens /proc/<pid>/fd/N); "
    "this host runs {}"
)


def main(request: dict[str, Any], inp: IO[str] = sys.stdin, out: IO[str] = sys.stdout) -> None:
    if not sys.platform.startswith("linux"):  # no /proc/<pid>/fd: the host counts as a plain fio server
        import platform

        raise SystemExit(NOT_LINUX.format(platform.system() or sys.platform))
    if request["mode"] == "place":
        _send(out, {"placed": place(request["targets"])})
    else:
        serve_hold(request, inp, out)
