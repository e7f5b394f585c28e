"""Every bundled example is a valid plan whose steps are what its description promises."""

import pytest

from app.engine.jobs.jobfile import JobSettings, step_jobfile
from app.engine.jobs.sequence import expand
from app.model.examples import EXAMPLES, TESTFILE, example
from app.model.validation import validate


@pytest.mark.parametrize("ex", EXAMPLES, ids=lambda e: e.key)
def test_examples_are_valid_and_make_job_files(ex):
    plan = ex.build()
    assert [p for p in validate(plan) if p.severity == "error"] == []
    steps = expand(plan)
    assert steps
    for step in steps:
        jf = step_jobfile(plan, step, 0, "Linux", JobSettings(mapping={TESTFILE: "/tmp/x.tst"}))
        assert jf.jobs


def test_examples_step_shapes():
    assert [s.queue_depths for s in expand(example("qd1qd32"))] == [[1], [32]]
    crystal = expand(example("crystal"))
    assert [(s.spec_label, s.queue_depths) for s in crystal] == [
        ("SEQ1M Q8T1 Read", [8]),
        ("SEQ1M Q8T1 Write", [8]),
        ("RND4K Q32T1 Read", [32]),
        ("RND4K Q32T1 Write", [32]),
    ]
    flash = expand(example("flash"))
    assert [(s.phase, len(s.workers)) for s in flash] == [
        ("fill", 1),
        ("steady", 4),
        *(("measure", n) for n in (4, 1, 4, 1)),
    ]
    assert [s.queue_depths[0] for s in expand(example("orion"))] == [1, 2, 4, 8, 16, 32, 64] * 2
    assert len(expand(example("bssweep"))) == 10
