"""Python's cyclic garbage collector runs on the GUI thread only.

Left automatic, the collector runs in whichever thread happens to allocate: a store task's, a probe's, the
run's. Run there, it destroys the GUI thread's unreachable Qt objects (a closed view's charts, a finished
dialog) from the wrong thread: Qt warns "QBasicTimer::start: Timers cannot be started from another
thread" and may crash (seen on Python 3.13 in the compare views and the report dialog, after a store task
had been kept from collecting: other threads did it then). So the window turns automatic collection off
and a timer on the GUI thread collects what the automatic collector would have collected by now: the same
thresholds (``gc.get_threshold``, which ``live_gc`` raises during a run), the same generations, a quarter
of a second late at most. The automatic collector spares full collections until the objects new since the
last one are a quarter of all (a count Python does not expose); here a full collection waits at least
``FULL_EVERY_S`` since the last instead, so a window of many objects is not walked every few seconds.
Reference counting, which frees almost everything, is unchanged.
"""

from __future__ import annotations

import gc
import threading
import time

from PySide6.QtCore import QCoreApplication, QTimer

INTERVAL_MS = 250
FULL_EVERY_S = 10.0
_timer: QTimer | None = None
_last_full = 0.0


def collect_on_gui_thread(app: QCoreApplication | None) -> None:
    """Turn automatic collection off and collect from a timer of ``app`` (the timer made once per process)."""
    global _timer
    if app is None:
        return
    gc.disable()
    if _timer is not None:
        return
    _timer = QTimer(app)
    _timer.setInterval(INTERVAL_MS)
    _timer.timeout.connect(collect_due)
    _timer.start()


def collect_due() -> int:
    """Collect the oldest generation whose count has reached its threshold, as the automatic collector
    would on its next allocation; nothing off the main thread. Returns the generation collected, or -1."""
    global _last_full
    if threading.current_thread() is not threading.main_thread():
        return -1
    counts, thresholds = gc.get_count(), gc.get_threshold()
    if counts[0] < thresholds[0]:
        return -1
    generation = 0
    if thresholds[1] and counts[1] >= thresholds[1]:
        generation = 1
        if thresholds[2] and counts[2] >= thresholds[2] and time.monotonic() - _last_full >= FULL_EVERY_S:
            generation = 2
            _last_full = time.monotonic()
    gc.collect(generation)
    return generation
