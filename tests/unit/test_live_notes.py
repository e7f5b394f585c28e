"""Liveness notes summarised in the step's messages: one line per kind and second, not one per manager."""

from app.engine.jobs.jobfile import JobFile, JobInfo
from app.engine.jobs.sequence import Step
from app.engine.run.live_notes import LiveNotes, kind_of
from app.engine.run.step_loop import StepLoop
from app.engine.run.step_watch import StepWatch
from app.engine.sampling.telemetry import StepTelemetry
from app.engine.transports.transport import (
    ANSWERING_AGAIN,
    LATE,
    LIVENESS_KINDS,
    SENT_NOTHING,
    UNREACHABLE,
    Finished,
    Message,
    Snapshot,
)
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
        loop.on_event(n, Message(n, text, "warning", SENT_NOTHING), 1.0 + i / 10)
    loop.on_event("M4", Message("M4", "fio said: bad option", "error"), 1.3)
    assert [m.text for m in heard.said] == ["fio said: bad option"]
    loop.on_tick(2.0, {}, {})
    (_, silent) = heard.said
    assert silent.level == "warning" and silent.text.startswith(
        "sent nothing (host busy or frozen?): 3 managers (M1, M2, M3); e.g. manager M1"
    )
    for n in NAMES[:2]:
        loop.on_event(
            n,
            Message(n, f"manager {n} (h) is answering again after 6 s of silence", "info", ANSWERING_AGAIN),
            2.5,
        )
    for n in NAMES:
        loop.on_event(n, Finished(n, True), 2.6)
    loop.flush()
    assert heard.said[-1].text.startswith("answering again: 2 managers (M1, M2)")


def test_names_sort_naturally_and_one_line_per_manager():
    notes = LiveNotes()
    for n in ("M10", "M2", "M2", "M1"):
        notes.add(Message(n, f"numbers from {n} are late: last report 4 s ago (x)", "warning", LATE), 0.0)
    assert notes.due(0.5) == []
    (line,) = notes.due(1.0)
    assert line.text.startswith("numbers late: 3 managers (M1, M2, M10)")
    assert notes.flush() == []


def test_a_note_is_known_by_its_kind_not_its_wording():
    """A liveness note reworded (or translated) is still summarised: its producer says which kind it is. Words
    that look like a note but come without a kind (fio's own text, say) pass untouched; an error is never held
    back, whatever its kind; the summary keeps the kind (whoever counts the lines reads it there)."""
    notes = LiveNotes()
    for n in ("M1", "M2", "M3"):
        assert notes.add(Message(n, f"{n}: rien reçu depuis 5 s", "warning", SENT_NOTHING), 0.0) == []
    plain = Message("M4", "numbers from M4 are late: last report 4 s ago (fio said so)", "warning")
    assert notes.add(plain, 0.1) == [plain]
    error = Message("M5", "manager M5 is unreachable (and it failed)", "error", UNREACHABLE)
    assert notes.add(error, 0.2) == [error]
    (line,) = notes.due(1.0)
    assert (
        line.text
        == "sent nothing (host busy or frozen?): 3 managers (M1, M2, M3); e.g. M1: rien reçu depuis 5 s"
    )
    assert (line.manager, line.level, line.kind, kind_of(line)) == ("", "warning", SENT_NOTHING, SENT_NOTHING)
    assert kind_of(Message("M1", "x", "info", "some other kind")) is None


def test_every_liveness_kind_has_its_summary_wording():
    from app.engine.run.live_notes import KINDS

    assert set(KINDS) == set(LIVENESS_KINDS) and len(LIVENESS_KINDS) == 6


def test_the_step_watch_s_notes_carry_their_kind_through_the_step():
    """The step watch's own notes (late, arriving again, behind) reach the listener with their kind, one
    manager's note as it was said."""
    from app.engine.transports.transport import ARRIVING_AGAIN, BEHIND

    heard = Heard()
    loop = _loop(heard)
    for n in NAMES:
        loop.on_event(n, _report(n, 1), 1.0)
    for t in (2.0, 3.0, 4.0, 5.0, 6.0):
        loop.on_tick(t, {n: 1000 for n in NAMES}, {n: t for n in NAMES})
    loop.on_event("M1", _report("M1", 6), 6.5)
    loop.on_tick(7.5, {n: 1000 for n in NAMES}, {n: 7.5 for n in NAMES})
    kinds = [(m.manager, m.kind) for m in heard.said]
    assert kinds == [("", LATE), ("M1", ARRIVING_AGAIN)], [m.text for m in heard.said]
    # behind: past its deadline, still reporting, short of the planned end on fio's clock
    heard = Heard()
    loop = _loop(heard)
    for k in range(1, 74):  # a report a second, fio's own clock in it at half speed
        for n in NAMES:
            job = report_job(ios=100 * k, runtime=1000 * k, name=f"{n}.j") | {"job_runtime": 500 * k}
            loop.on_event(n, Snapshot(n, float(k), [job]), k)
        loop.on_tick(float(k), {n: 1000 * k for n in NAMES}, {n: float(k) for n in NAMES})
    behind = [m for m in heard.said if m.kind == BEHIND]
    assert behind and behind[0].text.startswith("behind on fio's clock (reports arrive late): 12 managers"), [
        m.text for m in heard.said
    ]
