"""The plan a run stored with itself (``runs.plan_json``), read for what it tells a report or a comparison.

A damaged one (not JSON, JSON nested past Python's recursion limit, not a plan, fields of the wrong types)
is None, never an exception: whoever reads it goes on with the results the store holds and says so."""

from __future__ import annotations

import json
from typing import Any

from app.model import planfile
from app.model.plan import Plan
from app.store.records import Run

UNREADABLE = (ValueError, TypeError, KeyError, AttributeError, RecursionError, planfile.PlanFileError)


def plan_document(run: Run) -> dict[str, Any] | None:
    """The stored plan as JSON, or None when it is not a JSON object."""
    try:
        doc = json.loads(run.plan_json or "")
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def stored_plan(run: Run) -> Plan | None:
    """The stored plan, or None when it cannot be read as one."""
    doc = plan_document(run)
    if doc is None:
        return None
    try:
        plan, _ = planfile.from_dict(doc)
    except UNREADABLE:
        return None
    return plan
