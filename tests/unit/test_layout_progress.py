"""The probe and layout jobs' progress rules (``remote_files._JobProgress``, phase_bounds' probe and layout
rows), driven by scripted reports and the server's last answer: a hung job (reports stop while the server
answers, or its counters stay put in its reports) is given up on; a whole server without a CPU for a while
(no answer either) is not, nor just after it answers again."""

from __future__ import annotations

from app.engine.common.phase_bounds import Bounds
from app.engine.remote.files import STATUS_S, _JobProgress

B = Bounds(stall=3.0, grace=3.0, setup=8.0, stop_grace=1.0, late_data=2.0, behind=2.0)
GAP = B.stall_s(STATUS_S) / 2


def job(ios: int) -> list[dict]:
    return [{"jobname": "fill", "write": {"total_ios": ios}}]


def drive(
    until: float,
    *,
    report_until: float,
    answer_until: float,
    resume: float | None = None,
    ios_move: bool = True,
) -> tuple[float | None, str | None]:
    """Reports every 0.1 s and answers every 0.5 s up to their limits (again from ``resume``); (when the
    job was given up on, why)."""
    p = _JobProgress(0.0)
    heard, ios, t = None, 0, 0.0
    while t < until:
        t = round(t + 0.1, 3)
        on = resume is not None and t >= resume
        if (t <= answer_until or on) and round(t * 10) % 5 == 0:
            heard = t
        if (t <= report_until or on) and not (on and t < resume + 0.3):  # the answer comes first
            ios = ios + 1 if ios_move else max(ios, 1)
            p.saw(job(ios), t, GAP)
        why = p.stuck(t, B, heard)
        if why:
            return t, why
    return None, None


def test_reports_that_stop_while_the_server_answers_end_the_job():
    t, why = drive(20, report_until=2.0, answer_until=20)
    assert t is not None and t - 2.0 <= B.stall + 0.2 and "while its server still answers" in why


def test_counters_that_stay_put_in_its_reports_end_the_job():
    t, why = drive(20, report_until=20, answer_until=20, ios_move=False)
    assert t is not None and t <= B.stall + 0.3 and "stayed at 1" in why


def test_a_whole_server_silent_for_longer_than_the_stall_then_answering_first_is_waited_for():
    assert drive(20, report_until=2.0, answer_until=2.0, resume=2.0 + B.stall + 2.0) == (None, None)


def test_a_whole_server_silent_then_its_counters_still_put_is_judged_from_its_return():
    t, why = drive(30, report_until=2.0, answer_until=2.0, resume=7.0, ios_move=False)
    assert t is not None and t >= 7.0 + B.stall and "stayed at 1" in why
