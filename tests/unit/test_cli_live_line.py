"""The CLI's live line: three significant digits, no "0.000 ms" without completions, no "19s/14s"."""

from __future__ import annotations

import io

from app.cli.progress import ProgressPrinter, brief
from app.engine.jobs.jobfile import JobFile
from app.engine.jobs.sequence import Step
from app.engine.sampling.telemetry import Sample
from app.model.metrics import Metrics


def test_numbers_have_three_significant_digits():
    m = Metrics(
        seconds=1.0,
        read_ios=12345,
        read_bytes=12345 * 4096,
        read_iops=12345.0,
        read_bps=12345 * 4096.0,
        read_lat_sum_ns=12345 * 81_234,
        read_lat_n=12345,
    )
    assert brief(m) == "12,345 IOPS 50.6 MB/s 0.0812 ms"


def test_bytes_without_completions_show_dashes_not_zeros():
    m = Metrics(seconds=1.0, write_bytes=139_810_000, write_bps=139_810_000.0)
    assert brief(m) == "- IOPS 140 MB/s - ms"


def _printer_in_step(ramp: int, run: int, out: io.StringIO) -> tuple[ProgressPrinter, Step]:
    printer = ProgressPrinter(out)
    step = Step(0, 0, [])
    printer.steps = [step]
    printer.step_started(step, {"m1": JobFile("m1", "", run_time=run, ramp_up=ramp)})
    return printer, step


def _manager_sample(fio_seconds: float, final: bool = False) -> Sample:
    m = Metrics(
        seconds=fio_seconds, read_ios=100, read_bytes=409_600, read_lat_sum_ns=100_000, read_lat_n=100
    )
    return Sample("m1", "manager", "m1", 0.0, m, m, final)


def test_the_step_time_is_fio_s_clock_not_how_late_this_process_saw_the_report():
    """A loaded machine (fio slow to start, the final report handled late) once showed "5s (4s planned)" for
    a 2-s ramp-up and a 2-s run: the line's time is the ramp-up plus fio's measured runtime."""
    out = io.StringIO()
    printer, step = _printer_in_step(2, 2, out)
    printer.step_start -= 30.0  # the step began 30 s ago by the wall clock
    printer.samples(step, [_manager_sample(1.0)])
    printer.samples(step, [_manager_sample(2.002, final=True)])
    printer.samples(step, [])  # a tick's ALL-only batch keeps the time of the last report
    lines = [ln for ln in out.getvalue().splitlines() if ln.startswith("  [1/1")]
    assert [ln.split("]")[0] for ln in lines] == ["  [1/1     3s/4s", "  [1/1     4s/4s", "  [1/1     4s/4s"]


def test_a_step_fio_itself_runs_over_shows_its_plan():
    out = io.StringIO()
    printer, step = _printer_in_step(0, 2, out)
    printer.samples(step, [_manager_sample(1.0)])
    printer.samples(step, [_manager_sample(3.2)])  # fio ran over its 2 s (a job slow to end)
    lines = [ln.split("]")[0] for ln in out.getvalue().splitlines() if ln.startswith("  [1/1")]
    assert lines == ["  [1/1     1s/2s", "  [1/1     3s (2s planned)"]
