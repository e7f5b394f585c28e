"""Open a plan from an Iometer .icf or a Fiometer plan file, with everything the user should read."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import icf_import
from app.model import planfile
from app.model.fidelity import all_notes
from app.model.from_icf import nothing_to_run, plan_from_icf
from app.model.plan import FidelityNote, Plan


class PlanOpenError(Exception):
    """The file cannot be used as a plan; str() is 'FILE:LINE: message' lines."""


@dataclass
class OpenedPlan:
    plan: Plan
    warnings: list[str] = field(default_factory=list)  # located messages from the reader
    notes: list[FidelityNote] = field(default_factory=list)  # what fio cannot reproduce exactly


def is_icf(path: str | Path) -> bool:
    """Whether the file is an Iometer configuration, by its content (Quarch ships them as .conf); a file
    that cannot be read, or whose content is neither an Iometer file nor JSON, goes by its extension."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return path.suffix.lower() == ".icf"
    if icf_import.looks_like_icf(head):
        return True
    named_icf = path.suffix.lower() == ".icf"
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") and (b"fiometer-plan" in head or not named_icf):
        return False  # a plan file (JSON)
    return path.suffix.lower() != ".json"  # neither: the .icf reader says it is not an Iometer file


MAX_PLAN_BYTES = 64 << 20  # far above any real plan (the largest corpus .icf is ~1 MB)


def check_plan_file(path: Path) -> None:
    """Refuse what is not a readable regular file, in words, before reading it (reading a pipe would
    wait for ever; a folder or a dangling link would end in an OS error text)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        dangling = os.path.islink(path)
        raise PlanOpenError(
            f"{path}: " + ("is a link to a file that does not exist" if dangling else "no such file")
        ) from None
    except OSError as e:
        raise PlanOpenError(f"{path}: cannot be read: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise PlanOpenError(f"{path}: is a folder, not a plan file; give an .icf or a plan file inside it")
    if not stat.S_ISREG(st.st_mode):
        raise PlanOpenError(
            f"{path}: is not a regular file (a pipe, socket or device); save the plan as a file"
        )
    if st.st_size > MAX_PLAN_BYTES:
        raise PlanOpenError(
            f"{path}: is {st.st_size >> 20} MiB, too large for a plan file "
            f"(at most {MAX_PLAN_BYTES >> 20} MiB)"
        )
    if not os.access(path, os.R_OK):
        raise PlanOpenError(f"{path}: cannot be read: permission denied")


def open_plan(path: str | Path) -> OpenedPlan:
    path = Path(path)
    check_plan_file(path)
    if is_icf(path):
        try:
            doc = icf_import.load(path)
        except icf_import.IcfError as e:
            raise PlanOpenError(str(e)) from e
        if doc.errors:  # with the warnings, which often explain the error (a name cut short ...)
            raise PlanOpenError("\n".join(str(d) for d in doc.diagnostics))
        plan = plan_from_icf(doc)
        warnings = [str(d) for d in doc.warnings]
        empty = nothing_to_run(plan)
        if empty:  # said, not a plan of 0 steps opened silently
            warnings.append(f"{path}: {empty}")
        return OpenedPlan(plan, warnings, all_notes(plan))
    try:
        plan, problems = planfile.load(path)
    except planfile.PlanFileError as e:
        raise PlanOpenError(str(e)) from e
    return OpenedPlan(plan, [f"{path}: {p}" for p in problems], all_notes(plan))
