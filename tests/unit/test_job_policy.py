"""Only benchmark options ever reach fio: every generated job passes; commands never do."""

import pytest

from app.engine.jobs.job_policy import JobRefused, check_job_text
from app.engine.jobs.jobfile import JobSettings, step_jobfile
from app.engine.jobs.sequence import expand
from app.engine.run.runner import Runner, RunOptions, RunRefused
from app.model.examples import EXAMPLES, TESTFILE
from tests.helpers import grid, prepared


@pytest.mark.parametrize("os_name", ["Linux", "Windows"])
def test_every_generated_job_is_allowed(os_name):
    for ex in EXAMPLES:
        plan = ex.build()
        for step in expand(plan):
            where = "/tmp/x.tst" if os_name == "Linux" else "C:\\x.tst"
            check_job_text(step_jobfile(plan, step, 0, os_name, JobSettings(mapping={TESTFILE: where})).text)


@pytest.mark.parametrize(
    "line",
    [
        "exec_prerun=touch /tmp/pwned",
        "exec_postrun=id",
        "trigger_cmd=id",
        "ioengine=external:/tmp/evil.so",
        "ioengine=exec",
        "write_iolog=/etc/passwd",
    ],
)
def test_commands_and_external_engines_are_refused(line):
    with pytest.raises(JobRefused, match="job line 3"):
        check_job_text(f"[global]\ndirect=1\n{line}\n")


def test_the_runner_refuses_before_anything_runs(monkeypatch):
    import app.engine.run.preflight as preflight_mod

    def evil_jobfile(*args, **kwargs):
        jf = step_jobfile(*args, **kwargs)
        jf.text += "exec_postrun=id\n"
        return jf

    monkeypatch.setattr(preflight_mod, "step_jobfile", evil_jobfile)
    plan = grid(1, 1, 1)
    from app.engine.run.runner import ManagerEndpoint

    endpoints = {"M1": ManagerEndpoint("M1", "Linux", lambda: None)}
    with pytest.raises(RunRefused, match="'exec_postrun' is not one Fiometer sends"):
        prepared(Runner(plan, endpoints, None, RunOptions()))
