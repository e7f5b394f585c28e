"""Open a plan from an Iometer .icf or a Fiometer plan file, with everything the user should read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import icf_import
from app.model import planfile
from app.model.fidelity import all_notes
from app.model.from_icf import plan_from_icf
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


def open_plan(path: str | Path) -> OpenedPlan:
    path = Path(path)
    if is_icf(path):
        doc = icf_import.load(path)
        if doc.errors:  # with the warnings, which often explain the error (a name cut short ...)
            raise PlanOpenError("\n".join(str(d) for d in doc.diagnostics))
        plan = plan_from_icf(doc)
        return OpenedPlan(plan, [str(d) for d in doc.warnings], all_notes(plan))
    try:
        plan, problems = planfile.load(path)
    except planfile.PlanFileError as e:
        raise PlanOpenError(str(e)) from e
    return OpenedPlan(plan, [f"{path}: {p}" for p in problems], all_notes(plan))
