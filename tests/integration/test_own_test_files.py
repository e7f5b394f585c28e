"""Fiometer's own test files (no root needed): a file swapped or hard-linked to a foreign file during a run is
never adopted as Fiometer's, and fio writes the file it was handed, not the name's new object."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from app.engine.guards.safety import CreatedFiles
from app.engine.jobs.sequence import Step
from app.engine.run.managers import local_endpoint
from app.engine.run.runner import Runner, RunOptions, RunRefused
from app.model.plan import SpecLine, Target
from tests.helpers import grid, prepared

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")]
MiB = 1 << 20


def run(tmp_path: Path, target: Path, hook=None) -> str:
    plan = grid(1, 1, 1)
    plan.specs[0].lines = [SpecLine(4096, 100, 0, 100)]
    plan.managers[0].workers[0].targets = [Target("T1", path=str(target))]
    options = RunOptions(
        run_time=1, file_size=MiB, registry=CreatedFiles(tmp_path / "created.json"), before_fio_start=hook
    )
    return prepared(Runner(plan, {"M1": local_endpoint("M1")}, None, options)).run()


def test_a_test_file_hard_linked_to_a_foreign_file_during_a_run_is_not_adopted(tmp_path):
    target = tmp_path / "iobw.tst"
    assert run(tmp_path, target) == "complete"  # Fiometer's now
    assert run(tmp_path, target) == "complete"  # reused without arming
    foreign = tmp_path / "foreign.db"
    foreign.write_bytes(b"foreign " * (MiB // 8))

    def link_foreign(step: Step) -> None:
        planted = tmp_path / "planted"
        os.link(foreign, planted)
        os.replace(planted, target)

    assert run(tmp_path, target, link_foreign) == "complete"  # fio wrote the file it was handed
    assert foreign.read_bytes() == b"foreign " * (MiB // 8)
    assert os.path.samefile(foreign, target)
    with pytest.raises(RunRefused, match="did not create it"):
        run(tmp_path, target)  # the record did not adopt the foreign file
    assert foreign.read_bytes() == b"foreign " * (MiB // 8)


def test_a_test_file_rewritten_in_place_with_its_times_restored_is_foreign(tmp_path):
    target = tmp_path / "iobw.tst"
    assert run(tmp_path, target) == "complete"
    st = target.stat()
    with open(target, "r+b") as f:  # another program rewrites it in place, same size, then restores mtime
        f.write(b"someone else's data")
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert target.stat().st_mtime_ns == st.st_mtime_ns and target.stat().st_size == st.st_size
    with pytest.raises(RunRefused, match="did not create it"):
        run(tmp_path, target)
    assert target.read_bytes().startswith(b"someone else's data")
