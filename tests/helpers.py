"""Small builders shared by tests."""

from __future__ import annotations

from pathlib import Path

from app.model.plan import AccessSpec, Manager, Plan, SpecLine, Target, Worker


def shared_dir() -> Path:
    """The project's sibling shared/ folder (works from the main checkout and from worktrees)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        cand = parent / "shared"
        if (cand / "icf").is_dir():
            return cand
        cand = parent.parent / "shared"
        if (cand / "icf").is_dir():
            return cand
    raise FileNotFoundError("shared/ folder with icf/ not found next to the repository")


def spec(name: str = "S", *lines: SpecLine) -> AccessSpec:
    return AccessSpec(name, list(lines) or [SpecLine(4096, 100, 100, 100, 0, 1, 0, 0)])


def grid(managers: int, workers: int, targets: int, specs: tuple[str, ...] = ("S",), qd: int = 1) -> Plan:
    """managers x workers x targets, every worker assigned `specs`."""
    plan = Plan(specs=[spec(s) for s in specs])
    for m in range(managers):
        mgr = Manager(f"M{m + 1}")
        for w in range(workers):
            mgr.workers.append(Worker(f"W{w + 1}", queue_depth=qd, specs=list(specs),
                                      targets=[Target(f"/t/m{m + 1}w{w + 1}t{t + 1}") for t in range(targets)]))
        plan.managers.append(mgr)
    return plan
