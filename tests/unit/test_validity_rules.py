"""Validity rules that a single real run on this machine cannot provoke on demand: drifting IOPS (judged by the
preconditioning's steady-state rule), a remote host's clock (fio 3.36+ says when its job started by its own
clock; the fio here is 3.33), fio's write-buffer options Fiometer does not write itself (zero_buffers,
buffer_compress_percentage), and what a comparison says when one side carries a note the other does not."""

from __future__ import annotations

import json

import pytest

from app.analysis.validity import (
    CLOCK,
    COMPRESSIBLE,
    NOT_STEADY,
    Note,
    StepFacts,
    clock_notes,
    compressible_notes,
    differences,
    lines,
    not_steady_notes,
    parse_jobs,
)
from app.model.plan import Precondition
from app.store.records import Run, StepInfo

MiB = 1 << 20
JOB = """; Fiometer job file
[global]
ioengine=libaio
direct=1
[m1.w1.t1]
filename=/dev/sdx
rw=randwrite
bs=4k
iodepth=8
"""


def run_and_step(started="2026-11-27T10:00:00.000+00:00", ended="2026-11-27T10:00:10.000+00:00"):
    run = Run(1, "u", "r", "", "complete", started, ended, "p", "", "", [], 1)
    step = StepInfo(1, 1, 0, "S", "", 8, [], [], 0.0, 10.0, started, ended, "complete")
    run.steps = [step]
    return run, step


def test_job_sections_take_the_global_options():
    (job,) = parse_jobs(JOB)
    assert job.name == "m1.w1.t1" and job.direct and job.writes and not job.reads
    assert job.get("iodepth") == "8" and job.get("ioengine") == "libaio"


def test_zero_and_compressible_buffers_are_named_with_their_option():
    run, step = run_and_step()
    zeros = StepFacts(run, step, "M1", parse_jobs(JOB + "zero_buffers=1\n"), {}, {})
    (note,) = compressible_notes(zeros)
    assert note.kind == COMPRESSIBLE and "zero_buffers=1" in note.figure and note.step == 0
    half = StepFacts(
        run, step, "M1", parse_jobs(JOB + "buffer_compress_percentage=50\nrefill_buffers=1\n"), {}, {}
    )
    assert "buffer_compress_percentage=50" in compressible_notes(half)[0].figure
    random = StepFacts(run, step, "M1", parse_jobs(JOB + "refill_buffers=1\n"), {}, {})
    assert compressible_notes(random) == []


def samples(iops: list[float]) -> list[tuple[float, int, float]]:
    return [(float(t + 1), int(v), 1.0) for t, v in enumerate(iops)]


def test_a_step_whose_iops_drift_is_not_steady_by_the_preconditioning_rule():
    run, step = run_and_step()
    facts = StepFacts(run, step, "", [], {}, {})
    pc = Precondition()  # ±20 % of the mean, slope ±10 %
    steady = samples([1000, 1010, 990, 1005, 995] * 4)
    assert not_steady_notes(facts, steady, pc) == []
    falling = samples([2000 - 50 * t for t in range(20)])  # an SLC cache filling up
    (note,) = not_steady_notes(facts, falling, pc)
    assert note.kind == NOT_STEADY and "rounds of 4 s" in note.figure and "drift -" in note.figure
    assert not_steady_notes(facts, samples([1000, 10]), pc) == []  # too short to judge


def remote_doc(job_start_s: float) -> dict:
    return {
        "client_stats": [{"jobname": "m1.w1.t1", "job_start": int(job_start_s * 1000), "job_runtime": 10000}]
    }


def test_a_remote_clock_outside_the_step_is_said_with_its_offset():
    run, step = run_and_step()
    begin = 1795773600.0  # 2026-11-27T10:00:00Z
    inside = StepFacts(run, step, "DB01", [], remote_doc(begin + 0.4), {})
    assert clock_notes(inside, local=False) == []
    behind = StepFacts(run, step, "DB01", [], remote_doc(begin - 4.0), {})
    (note,) = clock_notes(behind, local=False)
    assert note.kind == CLOCK and "at least 4.0 s behind" in note.figure
    ahead = StepFacts(run, step, "DB01", [], remote_doc(begin + 13.0), {})
    assert "3.0 s ahead of" in clock_notes(ahead, local=False)[0].figure
    assert clock_notes(behind, local=True) == []  # a local fio shares our clock
    assert (
        clock_notes(StepFacts(run, step, "DB01", [], {"client_stats": [{"jobname": "x"}]}, {}), False) == []
    )


def test_a_comparison_says_which_side_carries_a_note_the_other_does_not():
    cache = Note(
        "cache", "97 % of fio's 374,387 reads not seen by the disk", "use direct I/O", "97 %", 0, "M1"
    )
    compress = Note("compressible", "writes of zeros", "use full random", "zeros", 0, "M1")
    said = differences([compress], [cache, compress], ("before", "after"))
    assert said == ["after: cache — 97 % of fio's 374,387 reads not seen by the disk (not in before)"]
    assert differences([cache], [cache]) == []


def test_the_same_note_in_several_steps_is_one_line():
    a = Note("compressible", "writes of X", "do Y", "X", 0, "M1")
    b = Note("compressible", "writes of X", "do Y", "X", 1, "M1")
    assert lines([a, b]) == ["Compressible data (steps 1, 2, on M1): writes of X. What to do: do Y."]
    assert json.loads(json.dumps(a.to_json())) == a.to_json() and Note.from_json(a.to_json()) == a


def test_buffered_writes_are_the_page_caches():
    from app.analysis.validity import CACHE, cache_notes

    run, step = run_and_step()
    run.host = {"managers": {"M1": {"memory_bytes": 8 << 30}}}
    buffered = StepFacts(
        run, step, "M1", parse_jobs(JOB.replace("direct=1", "direct=0") + "size=1073741824\n"), {}, {}
    )
    (note,) = cache_notes(buffered)
    assert (
        note.kind == CACHE and "buffered writes" in note.text and note.figure.startswith("1 GiB test region")
    )
    assert cache_notes(StepFacts(run, step, "M1", parse_jobs(JOB + "size=1073741824\n"), {}, {})) == []


def test_rounds_share_an_interval_by_its_time_so_jitter_leaves_no_round_empty():
    """fio's intervals as a real 5-s step sent them (0.999 s to 1.007 s): cut on whole intervals, the last
    1-s round was empty ("..., 0"); shared by time, every round holds its second."""
    from app.model.steady_state import rounds_of

    jittered = [
        (1.109, 2414, 0.999),
        (2.112, 4698, 1.0),
        (3.109, 5406, 1.001),
        (4.108, 3586, 0.999),
        (5.111, 2656, 1.007),
    ]
    rounds = rounds_of(jittered, 1)
    assert len(rounds) == 5 and min(rounds) > 2000, rounds
    assert sum(rounds) == pytest.approx(2414 + 4698 + 5406 + 3586 + 2656, rel=0.01)


def test_a_short_step_is_too_short_to_judge_not_unsteady():
    from app.analysis.validity import too_short_to_judge, unjudged_line

    run, step = run_and_step()
    facts = StepFacts(run, step, "", [], {}, {})
    swinging = samples([2414, 4698, 5406, 3586, 2656])  # 5 s: rounds of 1 s would be one interval each
    assert not_steady_notes(facts, swinging, Precondition()) == [] and too_short_to_judge(swinging)
    assert not too_short_to_judge(samples([1000] * 10))  # 5 rounds of 2 s: judged
    line = unjudged_line(run, {0: swinging})
    assert line is not None and line.startswith("Steadiness (step 1): too short to judge")


def test_the_rule_is_the_range_of_the_rounds_within_the_tolerance():
    from app.model.steady_state import first_steady_window

    rule = Precondition(round_s=1, window_rounds=5, tolerance_pct=20, slope_pct=10)
    # every round within ±15 % of the mean (the old reading passed it), but the range is 30 %
    assert first_steady_window([100, 115, 85, 115, 85], rule) is None
    assert first_steady_window([100, 105, 95, 104, 96], rule) is not None


def test_other_traffic_is_bytes_over_one_window_so_a_split_request_is_not_traffic():
    from app.analysis.validity import OTHER_TRAFFIC, other_traffic_notes

    run, step = run_and_step()
    job = JOB.replace("rw=randwrite", "rw=read").replace("bs=4k", "bs=1m")

    def facts(disk_sectors: int) -> StepFacts:
        fio_bytes = 8_000 * MiB
        doc = {
            "jobs": [
                {
                    "jobname": "m1.w1.t1",
                    "job_runtime": 5000,
                    "read": {"io_bytes": fio_bytes, "total_ios": 8000},
                }
            ],
            "disk_util": [
                {
                    "name": "sdx",
                    "read_ios": 16000,  # each 1M read reached the disk as two 512 KiB requests
                    "kernel_window": {
                        "msec": 4000.0,
                        "read_ios": 12800,
                        "read_sectors": disk_sectors,
                        "fio_read_bytes": 6_400 * MiB,
                        "write_sectors": 0,
                    },
                }
            ],
        }
        return StepFacts(run, step, "M1", parse_jobs(job), doc, {})

    assert other_traffic_notes(facts(6_400 * MiB // 512)) == []  # the same bytes: split, not traffic
    (note,) = other_traffic_notes(facts(9_600 * MiB // 512))  # half as much again: someone else's
    assert note.kind == OTHER_TRAFFIC and "while fio moved 6.2 GiB" in note.figure


def test_layout_only_where_a_file_was_laid_out_and_cache_only_for_buffered_io():
    """The issue's "1.1 s of test-file layout" on a raw device (it was the ramp-up) and "cache-bound quick
    run" on direct I/O: a raw device lays out nothing, direct I/O bypasses the page cache."""
    from app.analysis.validity import cache_can_serve, lays_out_files
    from app.store.records import StepOutput

    run, step = run_and_step()
    step.outputs = {"M1": StepOutput(job_text=JOB)}  # /dev/sdx, direct=1
    assert not lays_out_files(run, step) and not cache_can_serve(run)
    step.outputs = {"M1": StepOutput(job_text=JOB.replace("/dev/sdx", "/mnt/t/iobw.tst"))}
    assert lays_out_files(run, step) and not cache_can_serve(run)
    step.outputs = {"M1": StepOutput(job_text=JOB.replace("direct=1", "direct=0") + "size=1g\n")}
    run.host = {"managers": {"M1": {"memory_bytes": 8 << 30}}}
    assert cache_can_serve(run)  # 1 GiB buffered on a host of 8 GiB
    step.outputs = {"M1": StepOutput(job_text=JOB.replace("direct=1", "direct=0") + "size=64g\n")}
    assert not cache_can_serve(run)
