"""The global access-specification library: Iometer's built-ins, the plan's own specs and the
user's saved specs ("My library", kept in the settings so every plan can use them)."""

from __future__ import annotations

import copy
import dataclasses
import json
from dataclasses import dataclass

from PySide6.QtCore import QSettings

from app.model.builtin_specs import builtin_specs
from app.model.plan import AccessSpec, Plan, SpecLine

BUILTIN = "builtin"
PLAN = "plan"
USER = "user"
ORIGIN_TITLES = {PLAN: "In this plan", USER: "My library", BUILTIN: "Iometer built-ins"}
_KEY = "library/specs"


@dataclass
class LibraryEntry:
    origin: str  # BUILTIN | PLAN | USER
    spec: AccessSpec


def _spec_from_dict(d: dict) -> AccessSpec | None:
    try:
        lines = [
            SpecLine(**{k: int(v) for k, v in ln.items() if k in SpecLine.__dataclass_fields__})
            for ln in d.get("lines", [])
        ]
        return AccessSpec(
            str(d["name"]),
            lines or [SpecLine()],
            str(d.get("default_assignment", "NONE")),
            str(d.get("description", "")),
        )
    except (KeyError, TypeError, ValueError):
        return None


class SpecLibrary:
    """Built-ins (read-only) and the user's own specs (persisted); the plan's specs are read live."""

    def __init__(self, settings: QSettings | None):
        self.settings = settings
        self.builtins = builtin_specs()
        self.user: list[AccessSpec] = self._load()

    def _load(self) -> list[AccessSpec]:
        if self.settings is None:
            return []
        raw = self.settings.value(_KEY, "")
        try:
            items = json.loads(raw) if raw else []
        except (TypeError, ValueError):
            return []
        return [s for s in (_spec_from_dict(d) for d in items if isinstance(d, dict)) if s]

    def _store(self) -> None:
        if self.settings is not None:
            self.settings.setValue(_KEY, json.dumps([dataclasses.asdict(s) for s in self.user]))

    def entries(self, plan: Plan) -> list[LibraryEntry]:
        return (
            [LibraryEntry(PLAN, s) for s in plan.specs]
            + [LibraryEntry(USER, s) for s in self.user]
            + [LibraryEntry(BUILTIN, s) for s in self.builtins]
        )

    def find(self, origin: str, name: str, plan: Plan) -> AccessSpec | None:
        for e in self.entries(plan):
            if e.origin == origin and e.spec.name.casefold() == name.casefold():
                return e.spec
        return None

    def save_user(self, spec: AccessSpec, replacing: str | None = None) -> None:
        """Add or replace (by the old name) a spec in My library."""
        key = (replacing or spec.name).casefold()
        self.user = [s for s in self.user if s.name.casefold() not in (key, spec.name.casefold())]
        self.user.append(copy.deepcopy(spec))
        self.user.sort(key=lambda s: s.name.casefold())
        self._store()

    def remove_user(self, name: str) -> None:
        self.user = [s for s in self.user if s.name.casefold() != name.casefold()]
        self._store()


def ensure_in_plan(plan: Plan, spec: AccessSpec) -> AccessSpec:
    """The plan's spec of that name, copying a library spec into the plan the first time it is used."""
    existing = plan.spec(spec.name)
    if existing is not None:
        return existing
    copied = copy.deepcopy(spec)
    plan.specs.append(copied)
    return copied


def rename_in_plan(plan: Plan, old: str, new: str) -> None:
    """Keep workers' assignments pointing at a renamed spec."""
    for m in plan.managers:
        for w in m.workers:
            w.specs = [new if s.casefold() == old.casefold() else s for s in w.specs]


def unique_name(plan: Plan, base: str) -> str:
    if plan.spec(base) is None:
        return base
    n = 2
    while plan.spec(f"{base} ({n})") is not None:
        n += 1
    return f"{base} ({n})"
