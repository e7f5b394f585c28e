"""Python's cyclic garbage collector while a run is live.

During a live run the collector frees nothing (measured with 32 remote managers: 0 objects in 20 s) yet,
at Python's default thresholds, runs some 230 times, each time holding the GIL (on the GUI thread: ``gui_collector``). Its full collections walked every object of the window (85,000 of them: 60-90 ms of CPU, past 100 ms
when fio's processes took the CPU meanwhile), and the GUI thread waited as long. So a run starts with a
collection of the young generations (the objects Start made; a full one cost the GUI thread 50 ms of CPU at
Start with 64 managers, 220 ms of wall time on a loaded machine), then freezes what exists (``gc.freeze``:
collections skip it; older garbage waits for the run's end) and collects the young
generation every ``RUN_THRESHOLD`` new objects instead of every 700: 4 collections in such a run, 15 ms
of CPU in all, the longest 8 ms. Frozen objects are still freed by reference counting; the run's end
gives them back to the collector and its thresholds back to what they were.
"""

from __future__ import annotations

import gc

RUN_THRESHOLD = 10_000
_before: tuple[int, int, int] | None = None  # the thresholds while no run is live


def run_starting() -> None:
    global _before
    gc.collect(1)
    gc.freeze()
    _before = _before or gc.get_threshold()
    gc.set_threshold(RUN_THRESHOLD, *_before[1:])


def run_ended() -> None:
    global _before
    if _before is not None:
        gc.set_threshold(*_before)
        _before = None
    gc.unfreeze()
