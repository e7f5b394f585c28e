"""engine.held_targets without root: the job text names descriptors, a planted link or foreign file refuses the
step with nothing written, layout writes exactly the size, and a file created for a refused step is removed."""

from __future__ import annotations

import os

import pytest

from app.engine.devices.sys_disk_stats import fio_entry
from app.engine.guards import held_targets
from app.engine.guards.held_targets import Arming, HoldRefused, hold
from app.engine.jobs.jobfile import JobSettings, step_jobfile
from app.engine.jobs.placement import placer
from app.engine.jobs.sequence import expand
from app.model.plan import SpecLine, Target
from tests.helpers import grid
from tests.platform_marks import posix_only

pytestmark = posix_only(
    "Linux only: fio is handed /proc/self/fd/N of a descriptor Fiometer holds (on Windows the "
    "checks run before the run only)"
)

MiB = 1 << 20


def jobfile(*paths: str, reads: int = 0):
    plan = grid(1, 1, len(paths))
    plan.specs[0].lines = [SpecLine(4096, 100, reads, 100)]
    plan.managers[0].workers[0].targets = [Target(p) for p in paths]
    return step_jobfile(
        plan, expand(plan)[0], 0, "Linux", JobSettings(file_size=MiB, place=placer(True, "Linux", "M1"))
    )


def nobody_owns(path, st, fd) -> bool:
    return False


def test_new_test_files_are_created_laid_out_and_named_by_descriptor(tmp_path):
    a, b = tmp_path / "a.tst", tmp_path / "b.tst"
    held = hold(jobfile(str(a), str(b)), Arming(), nobody_owns)
    try:
        assert a.stat().st_size == MiB and b.stat().st_size == MiB
        assert sorted(held.laid_out) == sorted([str(a), str(b)])
        for path, fd in held.fds.items():
            assert f"filename=/proc/self/fd/{fd}" in held.text
            assert os.path.samestat(os.fstat(fd), os.stat(path))
        assert "filename=" + str(a) not in held.text
        assert set(held.files) == {str(a), str(b)}  # Fiometer's own, adopted after the step
    finally:
        held.close()


def test_a_link_planted_after_the_check_refuses_the_step(tmp_path):
    target = tmp_path / "iobw.tst"
    jf = jobfile(str(target))
    (tmp_path / "elsewhere").write_bytes(b"precious")
    target.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(HoldRefused, match="now leads to .*elsewhere.*nothing was written"):
        hold(jf, Arming(), nobody_owns)
    assert (tmp_path / "elsewhere").read_bytes() == b"precious"


def test_a_foreign_file_that_appeared_after_the_check_is_not_written(tmp_path):
    target = tmp_path / "iobw.tst"
    jf = jobfile(str(target))
    target.write_bytes(b"precious" * (MiB // 4))
    with pytest.raises(HoldRefused, match="not the one Fiometer left there"):
        hold(jf, Arming(), nobody_owns)
    assert target.read_bytes() == b"precious" * (MiB // 4)


def test_a_file_created_for_a_step_that_is_then_refused_is_removed(tmp_path, monkeypatch):
    target = tmp_path / "iobw.tst"
    monkeypatch.setattr(held_targets, "free_bytes", lambda fd: 1000)
    with pytest.raises(
        HoldRefused, match=r"needs 1.0 MiB .* has 1000 bytes free.*make the test file smaller"
    ):
        hold(jobfile(str(target)), Arming(), nobody_owns)
    assert not target.exists()


def test_an_armed_foreign_file_is_written_only_while_it_is_the_armed_object(tmp_path):
    target = tmp_path / "data.bin"
    target.write_bytes(b"x" * MiB)
    jf = jobfile(str(target))
    (job,) = jf.jobs
    hold(jf, Arming({str(target): job.placement.obj}), nobody_owns).close()
    other = tmp_path / "other"
    other.write_bytes(b"y" * MiB)
    os.replace(other, target)  # same name, another file
    with pytest.raises(HoldRefused, match="changed since it was checked"):
        hold(jf, Arming({str(target): job.placement.obj}), nobody_owns)


def test_disk_entries_are_fio_s_counters_between_two_readings():
    base = (10, 1, 80, 5, 20, 2, 160, 7, 0, 100, 12)
    now = (15, 2, 120, 9, 26, 4, 208, 10, 1, 600, 40)
    entry = fio_entry("loop3", base, now, 1000.0)
    assert entry == {
        "name": "loop3",
        "read_ios": 5,
        "write_ios": 6,
        "span_read_sectors": 40,
        "span_write_sectors": 48,
        "read_merges": 1,
        "write_merges": 2,
        "read_ticks": 4,
        "write_ticks": 3,
        "in_queue": 28,
        "util": 50.0,
    }
