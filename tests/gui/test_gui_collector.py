"""Python's cyclic collector runs on the GUI thread only (app/ui/gui_collector.py): a collection set off by
another thread's allocations destroyed the GUI thread's Qt objects there ("QBasicTimer::start: Timers
cannot be started from another thread" on Python 3.13)."""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QTimer

from app.ui import gui_collector


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_garbage_made_in_a_thread_is_collected_on_the_gui_thread(qtbot) -> None:
    assert not gc.isenabled()  # set by the autouse fixture, as MainWindow and StoreTasks do
    collected_in: list[str] = []

    def note(phase: str, info: dict) -> None:
        if phase == "stop":
            collected_in.append(threading.current_thread().name)

    gc.callbacks.append(note)
    try:
        timers = [QTimer() for _ in range(20)]  # Qt objects of the GUI thread, in cycles, unreachable
        for t in timers:
            t.setProperty("cycle", 1)
            t.cycle = _Cycle()  # type: ignore[attr-defined]
            t.cycle.timer = t  # type: ignore[attr-defined]
        del timers, t

        def allocate() -> None:  # a store task's or a probe's thread, making many cyclic objects
            for _ in range(50_000):
                _Cycle()

        worker = threading.Thread(target=allocate, name="worker")
        worker.start()
        worker.join()
        assert collected_in == []  # the worker's allocations set off no collection there
        qtbot.waitUntil(lambda: bool(collected_in), timeout=3 * gui_collector.INTERVAL_MS + 1000)
    finally:
        gc.callbacks.remove(note)
    assert set(collected_in) == {threading.main_thread().name}
    assert gc.get_count()[0] < gc.get_threshold()[0]  # what was due is collected


def test_the_window_turns_automatic_collection_off(qtbot) -> None:
    from app.ui.main_window import MainWindow

    gc.enable()  # (as a test outside tests/gui leaves it)
    win = MainWindow(persist=False)
    qtbot.addWidget(win)
    assert not gc.isenabled()


def test_a_collection_is_due_by_the_thresholds() -> None:
    gc.collect()
    assert gui_collector.collect_due() == -1  # nothing due right after a collection
    for _ in range(gc.get_threshold()[0] + 10):
        _Cycle()
    answers: list[int] = []
    other = threading.Thread(target=lambda: answers.append(gui_collector.collect_due()))
    other.start()
    other.join()
    assert answers == [-1]  # due, but never collected off the main thread
    assert gui_collector.collect_due() == 0
