"""Writes Fiometer cannot verify (issue 36; pinned at 100 % in .ci/coverage-floor.txt): which steps write on a
host, and the warning for a host armed without verification, for a plain fio server and an ssh:// host."""

from __future__ import annotations

import pytest

from app.engine.guards.unverified import CANNOT_VERIFY, SWAPPED, note, writes_there
from app.engine.jobs.jobfile import JobInfo


def _job(*, writes: bool, network: bool = False) -> JobInfo:
    return JobInfo(
        "m.w1.t1",
        "m",
        "w1",
        "Worker 1",
        "w1.t1",
        "t",
        "/tmp/t",
        False,
        "S",
        1,
        writes=writes,
        network=network,
    )


@pytest.mark.parametrize(
    ("jobs", "lays_out", "writes"),
    [
        ([], False, False),
        ([], True, True),  # a test file laid out writes, whatever the jobs do
        ([_job(writes=False)], False, False),
        ([_job(writes=True, network=True)], False, False),  # a network worker sends: nothing written on disk
        ([_job(writes=False), _job(writes=True)], False, True),
    ],
)
def test_a_step_writes_there_when_a_storage_job_writes_or_a_file_is_laid_out(jobs, lays_out, writes):
    assert writes_there(jobs, lays_out) is writes


def test_the_warning_for_an_armed_host_says_what_cannot_be_examined():
    assert note("M1", "10.0.0.7:8765") == (
        f"manager 'M1' (10.0.0.7:8765): writes armed without verification — {CANNOT_VERIFY}"
    )
    ssh = note("M2", "ssh://me@box")
    assert ssh == (
        "manager 'M2' (ssh://me@box): writes armed without verification — Fiometer cannot examine that host's "
        f"files, so {SWAPPED}"
    )
