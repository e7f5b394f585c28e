"""A stored `fiometer pts` run read back: its record (app.store.run_extras key ``pts``, written by
app.engine.run.pts_runner), each round's stimuli and their figures, and the steady-state decision worked out
again from the stored rounds by the PTS rule (app.model.steady_state.pts_steady_state)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.model.metrics import Metrics
from app.model.pts import PTS_REVISION, TEST, VARIANT
from app.model.steady_state import PtsDecision, pts_steady_state
from app.store.records import Run
from app.store.run_extras import PTS, extra


@dataclass
class PtsRun:
    run: Run
    record: dict[str, Any]
    decision: PtsDecision
    whole: dict[int, Metrics]  # step index -> the step's whole-step ALL figures
    status: dict[int, str]  # step index -> its status

    @property
    def test(self) -> str:
        return str(self.record.get("test", ""))

    @property
    def title(self) -> str:
        t = TEST.get(self.test)
        return t.title if t else self.test

    @property
    def variant_letter(self) -> str:
        v = VARIANT.get(str(self.record.get("variant", "")))
        return v.letter if v else "?"

    @property
    def settings(self) -> dict[str, Any]:
        s = self.record.get("settings")
        return s if isinstance(s, dict) else {}

    @property
    def device(self) -> dict[str, Any]:
        d = self.record.get("device")
        return d if isinstance(d, dict) else {}

    @property
    def rounds(self) -> list[dict[str, Any]]:
        r = self.record.get("rounds")
        return [x for x in r if isinstance(x, dict)] if isinstance(r, list) else []

    @property
    def stimuli(self) -> list[str]:
        return [str(x) for x in self.settings.get("stimuli", [])]

    @property
    def variable(self) -> str:
        return str(self.settings.get("variable", "iops"))

    @property
    def revision(self) -> str:
        return str(self.record.get("revision", PTS_REVISION))

    def window_rounds(self) -> list[dict[str, Any]]:
        """The rounds of the measurement window: the steady one, else the last rounds run."""
        d = self.decision
        if d.first_round <= 0:
            return []
        return [
            r for r in self.rounds if d.first_round <= int(r.get("round", 0)) < d.first_round + len(d.rounds)
        ]

    def figures(self, stimulus: int, rounds: list[dict[str, Any]]) -> list[Metrics]:
        """The whole-step figures of stimulus number ``stimulus`` in each of ``rounds`` that ran it."""
        out = []
        for r in rounds:
            if r.get("run") not in (None, self.run.id):
                continue  # a resumed run's inherited round: its steps are the earlier run's
            steps = r.get("steps") or []
            if stimulus < len(steps) and (m := self.whole.get(int(steps[stimulus]))) is not None:
                out.append(m)
        return out


def pts_of(run: Run) -> PtsRun | None:
    """The run's PTS record and decision, or None for a run that is not a `fiometer pts` run."""
    record = extra(run, PTS)
    if not isinstance(record, dict):
        return None
    rounds = [r for r in record.get("rounds") or [] if isinstance(r, dict)]
    values = [float(r.get("tracking") or 0.0) for r in rounds]
    settings = record.get("settings") if isinstance(record.get("settings"), dict) else {}
    rounds_max = int(settings.get("rounds_max") or 25) if isinstance(settings, dict) else 25
    decision = pts_steady_state(values, max_rounds=rounds_max)
    whole: dict[int, Metrics] = {}
    status: dict[int, str] = {}
    for s in run.steps:
        status[s.index] = s.status
        m = next((r.metrics for r in s.results if r.level == "all"), None)
        if m is not None:
            whole[s.index] = m
    return PtsRun(run, record, decision, whole, status)
