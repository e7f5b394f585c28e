"""The step loop driven by scripted event lists (recorded fio 3.33 reports), without sockets or threads."""

import copy

from app.engine.jobs.jobfile import JobFile, JobInfo
from app.engine.jobs.sequence import Step
from app.engine.run.step_loop import StepLoop
from app.engine.run.step_watch import LATE_DATA_S, SETUP_S
from app.engine.sampling.telemetry import StepTelemetry
from app.engine.transports.transport import Finished, Message
from tests.fio_fixtures import documents, snapshots


class Heard:
    """A listener and a control that write down what the loop told and asked, in order."""

    def __init__(self):
        self.said, self.got, self.ended, self.asked = [], [], [], []
        self.stopping_now = False

    # StepListener
    def samples(self, step, samples):
        self.got.append(samples)

    def message(self, step, message):
        self.said.append(message)

    def manager_finished(self, step, finished):
        self.ended.append(finished)

    # StepControl
    def stop_manager(self, name):
        self.asked.append(("stop", name))

    def abort_manager(self, name):
        self.asked.append(("abort", name))

    def end_step(self):
        self.asked.append(("end", ""))

    def stopping(self):
        return self.stopping_now


def job(name, manager, path):
    return JobInfo(name, manager, "w1", "w1", f"w1.{name}", name, path, False, "spec", 1)


FILES = {
    "A": JobFile("A", "", [job("plain", "A", "/data/a1"), job("ramped", "A", "/data/a2")], run_time=4),
    "B": JobFile("B", "", [job("b.clones", "B", "/data/b")], run_time=2),
}


def loop_for(files, heard, *, run_s=4.0, ramp_s=0.0, finished=None):
    from app.engine.run.step_watch import StepWatch

    tel = StepTelemetry(
        {j.name: (j.manager, j.worker_key, j.target_key) for jf in files.values() for j in jf.jobs}
    )
    watch = StepWatch(
        {n: n for n in files}, run_s=run_s, ramp_s=ramp_s, interval=1.0, ramp=bool(ramp_s), go_at=99.0
    )
    return StepLoop(Step(0, 0), files, tel, watch, heard, heard, finished=finished)


def quiet(files):
    return {n: None for n in files}


def test_two_managers_followed_from_their_events_end_complete_with_fio_s_final_numbers():
    heard = Heard()
    loop = loop_for(FILES, heard, run_s=2.0, ramp_s=1.0)  # two_jobs_ramp: one job ramps up for a second
    a, b = snapshots("two_jobs_ramp", "A"), snapshots("numjobs", "B", rename="b.")
    script = [(99.5, "A", Message("A", "fio is ending its jobs (signal 2)"))]
    script += sorted([(s.received, s.manager, s) for s in a + b], key=lambda x: x[0])  # as they arrive
    script += [(102.5, "B", Finished("B", True)), (104.5, "A", Finished("A", True))]
    for now, name, ev in sorted(script, key=lambda x: x[0]):
        assert not loop.over
        loop.on_event(name, ev, now)
        loop.on_tick(now, quiet(FILES), quiet(FILES))
    assert loop.over
    loop.flush()
    assert loop.status() == "complete" and heard.asked == []
    assert [f.manager for f in heard.ended] == ["B", "A"] and all(f.ok for f in heard.ended)
    assert heard.said[0].text == "fio is ending its jobs (signal 2)"
    final = {s.key: s.whole for s in loop.telemetry.final_results() if s.level == "target"}
    last_a = {j["jobname"]: j["read"]["total_ios"] for j in documents("two_jobs_ramp")[-1]["jobs"]}
    assert final["w1.plain"].read_ios == last_a["plain"] and final["w1.ramped"].read_ios == last_a["ramped"]
    assert final["w1.b.clones"].read_ios == sum(
        j["read"]["total_ios"] for j in documents("numjobs")[-1]["jobs"]
    )
    assert heard.got and loop.last["A"] is a[-1]
    assert any("managers' I/O started within" in m.text for m in loop.closing_messages({}))


def test_a_manager_that_ends_well_without_any_io_fails_in_fio_s_words_unless_stopped():
    files = {"A": FILES["A"]}
    for stopping in (False, True):
        heard = Heard()
        loop = loop_for(files, heard)
        loop.on_event("A", Message("A", "fio: /data/a1: Permission denied", "error"), 100.0)
        heard.stopping_now = stopping
        loop.on_event("A", Finished("A", True), 100.5)
        loop.on_tick(100.5, quiet(files), quiet(files))
        ended = loop.finished["A"]
        if stopping:
            assert ended.ok and loop.status() == "stopped"
            continue
        assert not ended.ok and loop.status() == "failed" and heard.ended == [ended]
        assert ended.reason.startswith(
            "fio did no I/O on /data/a1, /data/a2; fio said: fio: /data/a1: Permission"
        )
        assert ended.reason.endswith("(targets of manager 'A': /data/a1, /data/a2)")


def test_a_manager_that_never_reports_is_stopped_at_its_deadline_then_aborted_and_later_events_ignored():
    files = {"A": FILES["A"], "B": FILES["B"]}
    heard = Heard()
    loop = loop_for(files, heard, finished={"B": Finished("B", False, "could not start")})
    deadline = 99.0 + SETUP_S + 4.0 + 10.0  # RUN + setup allowance + run time + grace
    loop.on_tick(deadline - 1, quiet(files), quiet(files))
    assert heard.asked == [] and [f.manager for f in heard.ended] == ["B"]
    loop.on_tick(deadline, quiet(files), quiet(files))
    assert heard.asked == [("stop", "A")] and not loop.over
    loop.on_tick(deadline + LATE_DATA_S, quiet(files), quiet(files))
    assert heard.asked == [("stop", "A"), ("abort", "A")] and loop.over
    assert "did not end when asked" in loop.finished["A"].reason and heard.ended == [
        files_b := heard.ended[0],
        loop.finished["A"],
    ]
    assert files_b.manager == "B"
    loop.on_event("A", snapshots("two_jobs_ramp", "A")[0], deadline + LATE_DATA_S + 1)  # too late: not used
    loop.on_event("A", Finished("A", True), deadline + LATE_DATA_S + 1)
    assert "A" not in loop.last and loop.status() == "failed" and not loop.finished["A"].ok


def test_reports_whose_counters_stand_still_stop_the_manager_and_its_good_end_still_fails():
    files = {"A": FILES["A"]}
    heard = Heard()
    loop = loop_for(files, heard, run_s=600.0)
    first = snapshots("two_jobs_ramp", "A")[0]
    t = 100.0
    while ("stop", "A") not in heard.asked and t < 130:
        snap = copy.deepcopy(first)
        snap.received = t
        loop.on_event("A", snap, t)
        loop.on_tick(t, quiet(files), quiet(files))
        t += 1.0
    assert heard.asked == [("stop", "A")] and 110 <= t <= 112
    loop.on_event("A", Finished("A", True, stopped=True), t)
    assert not loop.finished["A"].ok and "made no progress" in loop.finished["A"].reason


def test_a_batch_of_events_tells_its_samples_once_and_keeps_them_before_what_follows():
    """The runner hands on what waited in its queue as one batch: the samples of its reports reach the
    listener as one list (one store transaction), and a message or a manager's end inside the batch still
    comes after the samples of the reports before it."""
    order = []

    class Ordered(Heard):
        def samples(self, step, samples):
            order.append(("samples", tuple(sorted({s.manager for s in samples if s.manager}))))

        def message(self, step, message):
            order.append(("message", message.text))

        def manager_finished(self, step, finished):
            order.append(("ended", finished.manager))

    heard = Ordered()
    loop = loop_for(FILES, heard, run_s=2.0, ramp_s=1.0)
    a, b = snapshots("two_jobs_ramp", "A"), snapshots("numjobs", "B", rename="b.")
    with loop.batch():  # a wave of reports, both managers
        for s in (a[1], b[1], a[2]):
            loop.on_event(s.manager, s, s.received)
        assert order == []
    assert order == [("samples", ("A", "B"))]
    with loop.batch():
        loop.on_event("B", b[2], b[2].received)
        loop.on_event("A", Message("A", "fio said something", "warning"), b[2].received)
        loop.on_event("A", a[3], a[3].received)
        loop.on_event("B", Finished("B", True), 103.0)
        loop.on_tick(103.0, quiet(FILES), quiet(FILES))
    assert order[1:4] == [("samples", ("B",)), ("message", "fio said something"), ("samples", ("A",))]
    assert ("ended", "B") in order[4:]
