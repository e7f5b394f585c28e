"""Every file a Fiometer command writes: never through a link planted in its folder, never renamed over
anything but a regular file; `-o /dev/null` and `-o /dev/stdout` write to the device (issue 25)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import shared_dir

ROOT = Path(__file__).resolve().parents[2]
ICF = shared_dir() / "icf" / "fourmix_2004.icf"
DB = shared_dir() / "store" / "v3-one-worker-run.db"
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX links and device nodes")


def fiometer(*args: object, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def _null() -> tuple[int, int, int]:
    st = os.lstat("/dev/null")
    assert stat.S_ISCHR(st.st_mode)
    return st.st_ino, st.st_rdev, stat.S_IFMT(st.st_mode)


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    v = tmp_path / "victim.bin"
    v.write_bytes(b"somebody else's data" * 100)
    return v


def _assert_untouched(victim: Path) -> None:
    assert victim.read_bytes() == b"somebody else's data" * 100


@posix_only
def test_import_to_dev_null_writes_the_device_and_leaves_it_a_device() -> None:
    before = _null()
    done = fiometer("import", ICF, "-o", "/dev/null")
    assert done.returncode == 0, done.stderr
    assert _null() == before


@posix_only
def test_import_to_dev_stdout_writes_the_plan_to_the_pipe() -> None:
    done = fiometer("import", ICF, "-o", "/dev/stdout")
    assert done.returncode == 0, done.stderr
    assert '"format": "fiometer-plan"' in done.stdout
    assert stat.S_ISLNK(os.lstat("/dev/stdout").st_mode) or stat.S_ISCHR(os.lstat("/dev/stdout").st_mode)


@posix_only
def test_import_never_writes_through_a_planted_link(tmp_path: Path, victim: Path) -> None:
    out = tmp_path / "plan.json"
    out.symlink_to(victim)
    done = fiometer("import", ICF, "-o", out)
    assert done.returncode != 0
    assert "symbolic link" in done.stderr and "Traceback" not in done.stderr
    _assert_untouched(victim)


@posix_only
def test_plan_jobs_never_writes_through_a_link_planted_as_a_job_file(tmp_path: Path, victim: Path) -> None:
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "step-002-LAB-STOR-07.fio").symlink_to(victim)
    done = fiometer("plan", ICF, "--jobs", jobs, "--map", f"D:={tmp_path / 'iobw.tst'}")
    assert done.returncode != 0
    assert "step-002-LAB-STOR-07.fio: is a symbolic link" in done.stderr, done.stderr
    _assert_untouched(victim)
    assert (jobs / "step-002-LAB-STOR-07.fio").is_symlink()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="needs root (mknod)")
def test_plan_jobs_refuses_a_device_node_planted_as_a_job_file(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    node = jobs / "step-001-LAB-STOR-07.fio"
    os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(7, 251))
    done = fiometer("plan", ICF, "--jobs", jobs, "--map", f"D:={tmp_path / 'iobw.tst'}")
    assert done.returncode != 0 and "block device" in done.stderr
    assert stat.S_ISBLK(os.lstat(node).st_mode)


@posix_only
@pytest.mark.parametrize("option", ["--html", "--csv", "--csv-tables", "--xlsx", "--pdf"])
def test_report_formats_to_dev_null_and_never_through_a_link(
    tmp_path: Path, victim: Path, option: str
) -> None:
    db = tmp_path / "r.db"
    shutil.copy(DB, db)
    before = _null()
    done = fiometer("--db", db, "report", "1", option, "/dev/null")
    assert done.returncode == 0, done.stderr
    assert _null() == before
    out = tmp_path / "report.out"
    out.symlink_to(victim)
    done = fiometer("--db", db, "report", "1", option, out)
    assert done.returncode != 0 and "symbolic link" in done.stderr and "Traceback" not in done.stderr
    _assert_untouched(victim)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary left


@posix_only
def test_export_to_dev_null_and_never_through_a_link(tmp_path: Path, victim: Path) -> None:
    db = tmp_path / "r.db"
    shutil.copy(DB, db)
    before = _null()
    for option in ("--iometer-csv", "--samples"):
        done = fiometer("--db", db, "export", "1", option, "/dev/null")
        assert done.returncode == 0, done.stderr
        assert _null() == before
        out = tmp_path / f"x{option}.csv"
        out.symlink_to(victim)
        done = fiometer("--db", db, "export", "1", option, out)
        assert done.returncode != 0 and "symbolic link" in done.stderr
        _assert_untouched(victim)


@posix_only
def test_examples_save_never_writes_through_a_link(tmp_path: Path, victim: Path) -> None:
    out = tmp_path / "examples"
    out.mkdir()
    (out / "backup.json").symlink_to(victim)
    done = fiometer("examples", "--save", out)
    assert done.returncode != 0 and "symbolic link" in done.stderr
    _assert_untouched(victim)


@posix_only
def test_dev_stdout_redirected_to_a_file_is_refused_in_words(tmp_path: Path) -> None:
    """/dev/stdout is then a link to a regular file: never written through (or renamed over)."""
    out = tmp_path / "redirected.json"
    with out.open("wb") as f:
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", "import", str(ICF), "-o", "/dev/stdout"],
            stdout=f,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            timeout=300,
        )
    assert done.returncode != 0
    assert "standard output only to a pipe or a terminal" in done.stderr
    assert b'"fiometer-plan"' not in out.read_bytes()
