""".icf files as Iometer reads them: what is not one is refused, files are known by content, Iometer's own
input check on cycling, range problems at import with FILE:LINE, warnings printed with the errors they
explain, workers without specs, and saving as .icf saying what it cannot write."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from app.cli import main
from app.model.from_icf import IOMETER_GIVES_NONE
from app.model.opening import open_plan
from app.model.to_icf import unwritable
from tests.helpers import grid, shared_dir

SAVED = shared_dir() / "icf" / "iometer-1.1.0-saved.icf"


def variant(tmp_path, name: str, *edits: tuple[bytes, bytes]) -> str:
    """The fixture in Iometer 1.1.0's saved layout with byte edits, each made once and required to apply."""
    data = SAVED.read_bytes()
    for old, new in edits:
        assert old in data, old
        data = data.replace(old, new, 1)
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def line_of(path: str, needle: bytes, nth: int = 1) -> int:
    lines = Path(path).read_bytes().split(b"\n")
    return [i + 1 for i, ln in enumerate(lines) if needle in ln][nth - 1]


NOT_ICF = "not an Iometer configuration file"


@pytest.mark.parametrize(
    "content",
    [
        random.Random(7).randbytes(400),
        b"v1 2 3 \x00\xff\xfe"
        + random.Random(8).randbytes(300),  # three numbers on line 1 once read as a version
        b"[global]\nioengine=libaio\n[job]\nfilename=/dev/sdb\n",  # another format
        b'{"format": "something-else"}\n',
    ],
    ids=["random", "random-with-numbers", "fio-job", "json"],
)
def test_what_is_not_an_iometer_file_is_refused_with_file_and_line(tmp_path, capsys, content):
    path = tmp_path / "config.icf"
    path.write_bytes(content)
    assert main(["plan", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:1: error: {NOT_ICF}" in err and "Traceback" not in err


def test_iometer_files_are_known_by_content_not_extension(tmp_path, capsys):
    conf = tmp_path / "iometer.conf"  # some vendors ship their Iometer files as .conf
    conf.write_bytes(SAVED.read_bytes())
    assert main(["plan", str(conf)]) == 0
    assert "8 KiB; 70% Read; 100% random" in capsys.readouterr().out
    not_json = tmp_path / "plan.json"
    not_json.write_bytes(SAVED.read_bytes())
    assert open_plan(not_json).plan.setup.description == "8k Random Mixed"


def test_cycling_step_or_start_zero_is_one_as_iometers_input_check_makes_it(tmp_path, capsys):
    path = variant(
        tmp_path,
        "cycle.icf",
        (b"\tNORMAL\r\n", b"\tCYCLE_WORKERS\r\n"),
        (b"\t1          1          LINEAR\r\n", b"\t0          0          LINEAR\r\n"),
    )
    opened = open_plan(path)
    assert (opened.plan.setup.worker_cycling.start, opened.plan.setup.worker_cycling.step) == (1, 1)
    notes = [n.message for n in opened.notes]
    assert (
        "Worker Cycling start is 0; Iometer's input check turns it into 1 when the test starts, and so does "
        "Fiometer" in notes
    )
    assert main(["plan", path, "--steps"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 steps")  # only Worker 1 has a target: one step (before: none, or endless steps)


def test_maximum_size_zero_gets_a_fidelity_note(capsys):
    notes = {n.where: n.message for n in open_plan(SAVED).notes}
    assert notes["workers 'Worker 1'"].startswith("Maximum size is 0 (\u201cfill the target\u201d)")
    assert "Fiometer a 1 GiB test file" in notes["workers 'Worker 1'"]


@pytest.mark.parametrize(
    ("edit", "needle", "message"),
    [
        (
            (b"\t4,DISABLED,1,DISABLED,0", b"\t-4,DISABLED,1,DISABLED,0"),
            b"\t-4,DISABLED",
            "worker 'Worker 1': Number of outstanding IOs is -4; expected 1 or more",
        ),
        (
            (b"\t8192,100,70,100,0,1,8192,0\r\n", b"\t0,100,70,100,0,1,8192,0\r\n"),
            b"\t0,100,70,100,0,1,8192,0",
            "the transfer 'size' is 0 bytes; expected at least 1",
        ),
    ],
    ids=["negative-outstanding-ios", "transfer-size-0"],
)
def test_range_problems_are_reported_at_import_with_file_and_line(tmp_path, capsys, edit, needle, message):
    path = variant(tmp_path, "bad.icf", edit)
    jobs = tmp_path / "jobs"
    assert main(["plan", path, "--jobs", str(jobs), "--os", "windows"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line_of(path, needle)}: error: {message}" in err
    assert not jobs.exists()


def test_plan_jobs_never_writes_a_job_fio_would_refuse(tmp_path, capsys):
    path = variant(
        tmp_path, "pct.icf", (b"\t8192,100,70,100,0,1,8192,0\r\n", b"\t8192,100,150,100,0,1,8192,0\r\n")
    )
    jobs = tmp_path / "jobs"
    assert main(["plan", path, "--jobs", str(jobs), "--os", "windows"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line_of(path, b'8192,100,150')}: warning: '% reads' is 150" in err  # the why, located
    assert "no job files written" in err and "% read: must be a whole number from 0 to 100" in err
    assert not jobs.exists() or not any(jobs.iterdir())


@pytest.mark.fio
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_the_jobs_written_for_an_iometer_file_pass_fios_own_check(tmp_path, capsys):
    path = variant(
        tmp_path,
        "cycle.icf",
        (b"\tNORMAL\r\n", b"\tCYCLE_WORKERS\r\n"),
        (b"\t1          1          LINEAR\r\n", b"\t0          0          LINEAR\r\n"),
    )
    jobs = tmp_path / "jobs"
    assert main(["plan", path, "--jobs", str(jobs), "--map", f'E: "SCRATCH"={tmp_path / "iobw.tst"}']) == 0
    files = sorted(jobs.iterdir())
    assert len(files) == 1
    res = subprocess.run(["fio", "--parse-only", *map(str, files)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_an_error_comes_with_the_warnings_that_explain_it(tmp_path, capsys):
    """A spec name cut at a non-ASCII character: the worker's assignment no longer matches, so no worker has
    a spec. The cut is what the user must see, not only the final error."""
    name = b"8 KiB; 70% Read; 100% random"
    path = variant(
        tmp_path,
        "accent.icf",
        (b"\t" + name + b",NONE", "\tLecture aléatoire,NONE".encode("cp1252")),
        *[
            (b"\t" + name + b"\r\n'End assigned", "\tLecture aléatoire\r\n'End assigned".encode("cp1252"))
            for _ in range(3)
        ],
    )
    assert main(["plan", path]) == 2
    err = capsys.readouterr().err
    cut = f"{path}:{line_of(path, b'Lecture al')}: warning: access specification name ends before"
    assert cut in err and "read as 'Lecture al'" in err
    assert "error: no worker has an access specification" in err
    assert err.index(cut) < err.index("error: no worker has")


def test_a_worker_without_assigned_specs_gets_none_as_in_iometer(tmp_path):
    # Worker 2 (the second block) loses its assignment; workers 1 and 3 keep theirs
    data = SAVED.read_bytes()
    first = data.index(b"'End assigned access specs")
    second = data.index(b"'Assigned access specs\r\n\t8 KiB", first)
    block_end = data.index(b"'End assigned access specs", second)
    path = tmp_path / "bare.icf"
    path.write_bytes(data[:second] + b"'Assigned access specs\r\n" + data[block_end:])
    opened = open_plan(path)
    workers = opened.plan.managers[0].workers
    assert [w.specs for w in workers] == [
        ["8 KiB; 70% Read; 100% random"],
        [],
        ["8 KiB; 70% Read; 100% random"],
    ]
    (note,) = [n for n in opened.notes if n.where.endswith("'Worker 2'")]
    assert note.message.startswith(IOMETER_GIVES_NONE + ", so it does no I/O")


def test_saving_as_icf_says_what_it_cannot_write():
    plan = grid(1, 1, 1, specs=("Lecture aléatoire", "a|b", "fine"))
    plan.managers[0].workers[0].name = "Worker \u2713"
    problems = unwritable(plan)
    assert problems == [
        "worker M1/'Worker \u2713': '\u2713' cannot be written in an .icf (Windows-1252); Iometer would read '?' "
        "there - change it",
        "access spec 'Lecture aléatoire': Iometer reads the name only up to 'é', as 'Lecture al', so workers "
        "assigned it would lose it - rename it",
        "access spec 'a|b': Iometer reads the name only up to '|', as 'a', so workers assigned it would lose it "
        "- rename it",
    ]
    assert unwritable(grid(1, 2, 1)) == []
