"""The record of Fiometer's own test files (app/engine/guards/safety.py; pinned at 100 % in
.ci/coverage-floor.txt): kept beside the database or, for a runner without one, in memory for the run; files
adopted after a step only while their name still leads to the object fio wrote (one link); other hosts'
files by the facts read there; a record that cannot be written said in words, the run going on; the null
engine writes nothing; arming after the question; an in-use file needs the second override."""

from __future__ import annotations

import os

import pytest

from app.engine.guards.safety import CreatedFiles, WriteRisk, arm, job_risk, record_beside, write_risks
from app.engine.jobs.jobfile import JobInfo
from app.engine.jobs.placement import Placement, placer
from tests.helpers import grid
from tests.platform_marks import posix_only
from tests.unit.test_safety import jobfiles_for


def _file(tmp_path, name: str, size: int = 4096) -> str:
    path = tmp_path / name
    path.write_bytes(b"\x5a" * size)
    return str(path)


def test_the_record_sits_beside_the_database(tmp_path):
    assert record_beside(tmp_path / "r.db").path == tmp_path / "r.db.test-files.json"


def test_without_a_database_the_record_is_kept_in_memory_for_the_run(tmp_path):
    reg = CreatedFiles(os.devnull)
    mine = _file(tmp_path, "mine.tst")
    reg.add([mine])
    assert mine in reg
    assert not (tmp_path / "nothing").exists() and reg.problem is None
    assert str(tmp_path / "gone.tst") not in reg  # no such file


@posix_only("a second hard link to a test file")
def test_files_are_adopted_after_a_step_only_with_one_link_to_the_object_held(tmp_path):
    reg = CreatedFiles(tmp_path / "reg.json")
    one, linked = _file(tmp_path, "one.tst"), _file(tmp_path, "linked.tst")
    os.link(linked, tmp_path / "another-name")  # two links: someone else may reach it
    fds = {p: os.open(p, os.O_RDONLY) for p in (one, linked)}
    try:
        assert reg.adopt(fds, forget=[str(tmp_path / "old.tst")]) == [one]
    finally:
        for fd in fds.values():
            os.close(fd)
    assert one in reg and linked not in reg


def test_another_hosts_files_are_remembered_and_forgotten_by_name(tmp_path):
    reg = CreatedFiles(tmp_path / "reg.json", host="here")
    facts = {"size": 1 << 20, "dev": 1, "ino": 2, "mtime_ns": 3, "ctime_ns": 4, "marker": "m"}
    reg.remember("there", {"/data/t.tst": facts})
    assert reg.known("there", "/data/t.tst") == facts
    assert reg.known("here", "/data/t.tst") is None  # per host
    reg.remember("there", {}, forget=["/data/t.tst"])
    assert reg.known("there", "/data/t.tst") is None


def test_an_unverified_placement_is_never_owned(tmp_path):
    reg = CreatedFiles(tmp_path / "reg.json")
    assert not reg.owns(Placement("t", "/remote/t.tst", False, verified=False))


def test_a_record_that_cannot_be_written_is_said_and_kept_for_the_run(tmp_path):
    blocked = tmp_path / "record"
    blocked.mkdir()  # a folder where the record's file should be
    reg = CreatedFiles(blocked)
    mine = _file(tmp_path, "mine.tst")
    reg.add([mine])
    assert reg.problem is not None and "The record of Fiometer's test files cannot be written" in reg.problem
    assert f"Remove or rename {blocked}" in reg.problem
    assert mine in reg  # kept in memory: this run goes on knowing it


@posix_only("a Linux manager's POSIX path is this machine's temporary folder")
def test_the_null_engine_writes_nothing(tmp_path):
    foreign = _file(tmp_path, "precious.db", 2 << 20)
    jobfiles = jobfiles_for(grid(1, 1, 1), foreign)
    reg = CreatedFiles(tmp_path / "reg.json")
    assert len(write_risks(jobfiles, reg)) == 1
    assert write_risks(jobfiles, reg, engine="null") == []


def test_arming_after_the_question_adds_the_second_override_only_for_what_is_in_use():
    plain = WriteRisk("M1", "t1", "/dev/sdb", "writes to a raw device destroy its data")
    used = WriteRisk("M1", "t2", "/dev/sdc", "writes to a raw device destroy its data", True, "mounted at /d")
    assert arm([plain, used], {"x"}, set()) == ({"x", "/dev/sdb", "/dev/sdc"}, {"/dev/sdc"})


@pytest.mark.parametrize(
    ("writes", "said"), [(True, "writes overwrite this file"), (False, "laid out again")]
)
def test_a_file_in_use_needs_the_second_override(tmp_path, writes, said):
    path = _file(tmp_path, "swapfile", 4096)
    placed = placer(True, "Linux", "M1")(path)
    placed = Placement(**{**vars(placed), "in_use": ("active swap",)})
    job = JobInfo(
        "j",
        "M1",
        "w1",
        "W",
        "w1.t1",
        "t1",
        path,
        False,
        "S",
        1,
        size=1 << 20,
        placement=placed,
        writes=writes,
    )
    risk = job_risk(job, CreatedFiles(tmp_path / "reg.json"))
    assert risk is not None and risk.in_use and risk.use == "active swap" and said in risk.reason
