"""Timed transfers: a plan whose steps move a fixed number of bytes (``setup.transfer_bytes``) is judged by
how long each step took — the figure admins compare before and after a change, as they would with dd."""

from __future__ import annotations

from dataclasses import dataclass

from app.model.units import format_bytes, format_elapsed
from app.store.records import Run


@dataclass(frozen=True)
class Transfer:
    step: int
    spec: str
    bytes: int
    seconds: float

    def sentence(self) -> str:
        rate = self.bytes / self.seconds / 1e6 if self.seconds else 0.0
        return (
            f"step {self.step + 1} {self.spec}: {format_bytes(self.bytes)} in {format_elapsed(self.seconds)} "
            f"({rate:,.1f} MB/s)"
        )


def transfer_bytes(run: Run) -> int:
    """The plan's bytes per job, or 0 when its steps were timed as usual."""
    try:
        return int(run.plan_setup().get("transfer_bytes") or 0)
    except (ValueError, TypeError):
        return 0


def transfers(run: Run) -> list[Transfer]:
    """Each finished step's bytes and elapsed time (fio's own runtime), for a timed-transfer run."""
    if not transfer_bytes(run):
        return []
    out = []
    for s in run.steps:
        total = next((r.metrics for r in s.results if r.level == "all"), None)
        if total is not None and total.bytes:
            out.append(Transfer(s.index, s.spec_name, total.bytes, total.seconds))
    return out
