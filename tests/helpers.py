"""Small builders shared by tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from app.model.plan import AccessSpec, Manager, Plan, SpecLine, Target, Worker

if TYPE_CHECKING:
    from app.engine.run.runner import Runner

R = TypeVar("R", bound="Runner")


def shared_dir() -> Path:
    """The test fixtures folder, tests/fixtures/ (icf/, fio-captures/, iometer-results/...; see its
    PROVENANCE.md). Never anything outside the repository."""
    return Path(__file__).resolve().parent / "fixtures"


def spec(name: str = "S", *lines: SpecLine) -> AccessSpec:
    return AccessSpec(name, list(lines) or [SpecLine(4096, 100, 100, 100, 0, 1, 0, 0)])


def grid(managers: int, workers: int, targets: int, specs: tuple[str, ...] = ("S",), qd: int = 1) -> Plan:
    """managers x workers x targets, every worker assigned `specs`."""
    plan = Plan(specs=[spec(s) for s in specs])
    for m in range(managers):
        mgr = Manager(f"M{m + 1}")
        for w in range(workers):
            mgr.workers.append(
                Worker(
                    f"W{w + 1}",
                    queue_depth=qd,
                    specs=list(specs),
                    targets=[Target(f"/t/m{m + 1}w{w + 1}t{t + 1}") for t in range(targets)],
                )
            )
        plan.managers.append(mgr)
    return plan


BLOCK_QT = (
    "import sys\n"
    "class Block:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph'):\n"
    "            raise ImportError('Qt is blocked in this test: ' + name)\n"
    "sys.meta_path.insert(0, Block())\n"
)


def run_without_qt(code: str, **kwargs) -> subprocess.CompletedProcess:
    """Run Python code in a child process where importing PySide6/shiboken6/pyqtgraph fails."""
    return subprocess.run([sys.executable, "-c", BLOCK_QT + code], capture_output=True, text=True, **kwargs)


def assert_imports_without_qt(modules: list[str]) -> None:
    out = run_without_qt(f"for m in {modules!r}:\n    __import__(m)\nprint('ok')\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def prepared(runner: R) -> R:
    """``runner`` with its checks run (``Runner.prepare``: RunRefused is raised here, as a refused run is)."""
    runner.prepare()
    return runner
