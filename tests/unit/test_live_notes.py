"""Liveness notes summarised in the step's messages: one line per kind and second, not one per manager."""

from app.engine.jobs.jobfile import JobFile, JobInfo
from app.engine.jobs.sequence import Step
from app.engine.run.live_notes import LiveNotes
from app.engine.run.step_loop import StepLoop
from app.engine.run.step_watch import StepWatch
from app.engine.sampling.telemetry import StepTelemetry
from app.engine.transports.transport import Finished, Message
from tests.unit.test_step_bounds import job as report_job
from tests.unit.test_step_loop import Heard

NAMES = [f"M{i}" for i in range(1, 13)]


def _loop(heard: Heard) -> StepLoop:
    files = {
        n: JobFile(
            n, "", [JobInfo(f"{n}.j", n, "w1", "w1", "w1.t", "t", f"/d/{n}", False, "s", 1)], run_time=60
        )
        for n in NAMES
    }
    tel = StepTelemetry({f"{n}.j": (n, "w1", "t") for n in NAMES})
    watch = StepWatch(
        {n: f"{n} (127.0.0.{i + 2}:8765)" for i, n in enumerate(NAMES)},
        run_s=60,
        ramp_s=0,
        interval=1.0,
        ramp=False,
        go_at=0.0,
    )
    return StepLoop(Step(0, 0), files, tel, watch, heard, heard)


def _report(n: str, k: int):
    from app.engine.transports.transport import Snapshot

    return Snapshot(n, float(k), [report_job(ios=100 * k, runtime=1000 * k, name=f"{n}.j")])


def test_twelve_late_managers_make_one_line_and_their_return_another():
    """Twelve managers' reports stop at once (a loaded Fiometer): the step says so in one line naming them
    (six, then '+6'), not twelve; when they come back, one 'arriving again' line; one manager alone keeps
    its own full note."""
    heard = Heard()
    loop = _loop(heard)
    for n in NAMES:
        loop.on_event(n, _report(n, 1), 1.0)
    for t in (2.0, 3.0, 4.0, 5.0, 5.5, 6.0, 6.5):
        loop.on_tick(t, {n: 1000 for n in NAMES}, {n: t for n in NAMES})
    said = [m.text for m in heard.said]
    late = [s for s in said if "late" in s]
    assert late == [
        "numbers late: 12 managers (M1, M2, M3, M4, M5, M6, … +6); e.g. numbers from M1 (127.0.0.2:8765) "
        "are late: last report 4 s ago (nothing new received)"
    ], said
    assert all(m.manager == "" for m in heard.said)
    for n in NAMES:
        loop.on_event(n, _report(n, 6), 7.0)
    loop.on_tick(7.0, {n: 6000 for n in NAMES}, {n: 7.0 for n in NAMES})
    assert len(heard.said) == 1  # held for the second: the others may still come
    loop.on_tick(8.0, {n: 6000 for n in NAMES}, {n: 8.0 for n in NAMES})
    again = heard.said[1]
    assert again.level == "info" and again.text.startswith("numbers arriving again: 12 managers (M1, M2,")
    # one manager late on its own: its own note, as before
    for n in NAMES[1:]:
        loop.on_event(n, _report(n, 8), 9.0)
        loop.on_event(n, _report(n, 11), 12.0)
    for t in (12.0, 13.0):
        loop.on_tick(t, {n: 6000 for n in NAMES}, {n: t for n in NAMES})
    assert heard.said[2].manager == "M1" and "numbers from M1 (127.0.0.2:8765) are late" in heard.said[2].text


def test_transport_notes_are_summarised_too_and_errors_are_not_held():
    """The transports' own notes ('has sent nothing for', 'is answering again') go the same way; an error
    (a stop, an impossible value) is told at once; what is held when the step ends is told then."""
    heard = Heard()
    loop = _loop(heard)
    for i, n in enumerate(NAMES[:3]):
        text = f"manager {n} (127.0.0.{i + 2}:8765) has sent nothing for 5 s (its host busy, or frozen?); waiting"
        loop.on_event(n, Message(n, text, "warning"), 1.0 + i / 10)
    loop.on_event("M4", Message("M4", "fio said: bad option", "error"), 1.3)
    assert [m.text for m in heard.said] == ["fio said: bad option"]
    loop.on_tick(2.0, {}, {})
    (_, silent) = heard.said
    assert silent.level == "warning" and silent.text.startswith(
        "sent nothing (host busy or frozen?): 3 managers (M1, M2, M3); e.g. manager M1"
    )
    for n in NAMES[:2]:
        loop.on_event(n, Message(n, f"manager {n} (h) is answering again after 6 s of silence", "info"), 2.5)
    for n in NAMES:
        loop.on_event(n, Finished(n, True), 2.6)
    loop.flush()
    assert heard.said[-1].text.startswith("answering again: 2 managers (M1, M2)")


def test_names_sort_naturally_and_one_line_per_manager():
    notes = LiveNotes()
    for n in ("M10", "M2", "M2", "M1"):
        notes.add(Message(n, f"numbers from {n} are late: last report 4 s ago (x)", "warning"), 0.0)
    assert notes.due(0.5) == []
    (line,) = notes.due(1.0)
    assert line.text.startswith("numbers late: 3 managers (M1, M2, M10)")
    assert notes.flush() == []
