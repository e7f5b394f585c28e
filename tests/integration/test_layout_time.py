"""Test-file layout happens before the step's clock starts, and is reported apart (issue 26, point 5)."""

import shutil

import pytest

from app.engine.remote import files as remote_files
from app.engine.run.managers import build_endpoints
from app.engine.run.runner import RunListener, Runner, RunOptions
from app.model.plan import SpecLine, Target
from tests.helpers import grid, prepared

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")]
SIZE = 1 << 20


class Seen(RunListener):
    def __init__(self, path):
        self.path, self.at_start, self.said, self.first_t = path, None, [], None

    def step_started(self, step, jobfiles):
        self.at_start = self.path.stat().st_size if self.path.exists() else None

    def message(self, step, message):
        self.said.append(message.text)

    def samples(self, step, samples):
        if self.first_t is None:
            self.first_t = min(s.t for s in samples)


def test_a_remote_test_file_is_laid_out_before_the_step_starts_and_its_time_is_said(tmp_path, fio_server):
    host, port, _ = fio_server("127.0.0.7")
    path = tmp_path / "new.tst"
    plan = grid(1, 1, 1, qd=2)
    plan.specs[0].lines = [SpecLine(4096, 100, 0, 100, 0, 1, 4096, 0)]  # random writes: Fiometer lays it out
    plan.managers[0].host = f"{host}:{port}"
    plan.managers[0].workers[0].targets = [Target(str(path))]
    seen = Seen(path)
    runner = prepared(
        Runner(
            plan, build_endpoints(plan), seen, RunOptions(run_time=1, file_size=SIZE, allow_unverified={"M1"})
        )
    )
    assert runner.run() == "complete"
    spill = 4096  # the largest block, as remote_files places the marker past it
    assert seen.at_start == SIZE + spill + remote_files.MARK_SIZE  # whole before the step started
    said = [t for t in seen.said if t.startswith(f"laid out the test file {path} in ")]
    assert len(said) == 1 and said[0].endswith("s (before the step's time)"), seen.said
    assert seen.first_t == 0.0
