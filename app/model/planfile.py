"""The versioned JSON plan file (``*.fiometer.json``): save, load, and field-level load errors."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any

from app.model.plan import Plan
from app.model.validation import Problem

FORMAT = "fiometer-plan"
VERSION = 1


class PlanFileError(Exception):
    """The file cannot be used; str() names the file and each field that is wrong."""

    def __init__(self, source: str, problems: list[Problem]):
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {p}" for p in problems))


def to_dict(plan: Plan) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "plan": dataclasses.asdict(plan)}


def dumps(plan: Plan) -> str:
    return json.dumps(to_dict(plan), indent=2, ensure_ascii=False) + "\n"


def save(plan: Plan, path: str | Path) -> None:
    """Write atomically: a crash mid-write never leaves a half plan behind; never through a link, never
    over a device (app.safe_files)."""
    from app.safe_files import write_file

    write_file(path, dumps(plan))


def _convert(tp: Any, value: Any, path: str, problems: list[Problem]) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value, path, problems)
    if origin is list:
        if not isinstance(value, list):
            problems.append(Problem(path, f"must be a list, got {type(value).__name__}"))
            return []
        (item,) = typing.get_args(tp)
        return [_convert(item, v, f"{path}[{i}]", problems) for i, v in enumerate(value)]
    if dataclasses.is_dataclass(tp):
        return _build(tp, value, path, problems)
    if tp is int and (not isinstance(value, int) or isinstance(value, bool)):
        problems.append(Problem(path, f"must be a whole number, got {value!r}"))
        return 0
    if tp is bool and not isinstance(value, bool):
        problems.append(Problem(path, f"must be true or false, got {value!r}"))
        return False
    if tp is str and not isinstance(value, str):
        problems.append(Problem(path, f"must be text, got {value!r}"))
        return str(value)
    return value


def _build(cls: Any, data: Any, path: str, problems: list[Problem]) -> Any:
    if not isinstance(data, dict):
        problems.append(Problem(path or "plan", f"must be an object, got {type(data).__name__}"))
        return cls() if cls is Plan else None
    hints = typing.get_type_hints(cls)
    kwargs = {}
    known = {f.name for f in dataclasses.fields(cls)}
    for key in data:
        if key not in known:
            problems.append(Problem(f"{path}.{key}".lstrip("."), "unknown field, ignored", "warning"))
    for f in dataclasses.fields(cls):
        if f.name in data:
            kwargs[f.name] = _convert(hints[f.name], data[f.name], f"{path}.{f.name}".lstrip("."), problems)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            problems.append(Problem(f"{path}.{f.name}".lstrip("."), "is required"))
            kwargs[f.name] = _convert(hints[f.name], "", f"{path}.{f.name}", [])
    return cls(**kwargs)


def from_dict(data: Any, source: str = "<plan>") -> tuple[Plan, list[Problem]]:
    """Build a plan; raises PlanFileError on structural errors, returns warnings alongside."""
    problems: list[Problem] = []
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PlanFileError(
            source, [Problem("format", f'not a Fiometer plan (expected "format": "{FORMAT}")')]
        )
    version = data.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise PlanFileError(
            source,
            [
                Problem(
                    "version",
                    f"plan format version {version!r} is newer than this Fiometer reads ({VERSION}); "
                    "update Fiometer to open it",
                )
            ],
        )
    plan = _build(Plan, data.get("plan"), "", problems)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise PlanFileError(source, errors)
    return plan, problems


def load(path: str | Path) -> tuple[Plan, list[Problem]]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise PlanFileError(str(path), [Problem("file", f"cannot be read: {e}")]) from e
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        what = (
            "the plan file is damaged (its JSON breaks off)"
            if FORMAT in text
            else "not a plan: neither an Iometer configuration (.icf) nor a plan saved by Fiometer (JSON)"
        )
        raise PlanFileError(
            f"{path}:{e.lineno}", [Problem("json", f"{e.msg} (column {e.colno})", place=what)]
        ) from e
    except RecursionError:
        raise PlanFileError(str(path), [Problem("json", "nested too deeply to be a plan")]) from None
    plan, warnings = from_dict(data, str(path))
    if not plan.source:
        plan.source = str(path)
    return plan, warnings
