"""Telemetry as tests drive it: the events of started transports merged into one blocking iterator.

The runner has its own loop (``app.engine.run.runner``); this one lets a test follow a step's transports
through a ``StepTelemetry`` without a runner::

    tel = StepTelemetry({"m1.w1.t1": ("M1", "W1", "T1"), ...})
    for tr, job_text in zip(transports, job_texts):
        tr.start(job_text, status_interval=1.0)
    for item in follow_step(transports, tel):
        if isinstance(item, SampleBatch):
            show(item.samples)        # final report: item.snapshot.final, raw text in .raw
        elif isinstance(item, Message):
            log(item.text, item.level)
        else:                         # Finished, one per transport
            note(item.manager, item.ok, item.reason)
    results = tel.final_results()
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from app.engine.sampling.telemetry import Sample, StepTelemetry
from app.engine.transports.transport import Finished, Message, Snapshot, Transport


@dataclass
class SampleBatch:
    snapshot: Snapshot  # the raw report (its ``raw`` text is kept for the final one)
    samples: list[Sample]


StepUpdate = SampleBatch | Message | Finished


def follow_step(transports: Sequence[Transport], telemetry: StepTelemetry) -> Iterator[StepUpdate]:
    """Merge the events of already-started transports into one blocking iterator (module doc)."""
    q: queue.Queue[Any] = queue.Queue()

    def pump(tr: Transport) -> None:
        finished = False
        try:
            for ev in tr.events():
                finished = finished or isinstance(ev, Finished)
                q.put(ev)
        except Exception as e:  # a broken transport must not hang the step
            if not finished:
                q.put(Finished(tr.name, ok=False, reason=f"lost the events of {tr.name}: {e}"))
                finished = True
        if not finished:
            q.put(Finished(tr.name, ok=False, reason=f"{tr.name} ended without saying why"))

    for tr in transports:
        threading.Thread(target=pump, args=(tr,), name=f"follow-{tr.name}", daemon=True).start()
    remaining = len(transports)
    while remaining:
        ev = q.get()
        if isinstance(ev, Snapshot):
            yield SampleBatch(ev, telemetry.update(ev))
            continue
        if isinstance(ev, Finished):
            remaining -= 1
        yield ev
