"""Windows Fiometer with the real Windows fio, run by Windows Python (under Wine by test-windows).

Wine differs from Windows here (docs/user-guide.md, "Windows under Wine"): it opens files without
O_DIRECT, has no size call for \\\\.\\PhysicalDriveN, and fio's affinity call warns at every step.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import uuid
from pathlib import Path

import pytest

from app.paths import resources_dir
from tests.windows.conftest import ENV_LINUX_SERVER, fiometer

VMWARE = resources_dir() / "examples" / "vmware-unofficial-storage-performance.icf"


def _steps(db: Path) -> list[tuple[str, str]]:
    with contextlib.closing(sqlite3.connect(db)) as c:
        return c.execute("SELECT spec_name, status FROM steps ORDER BY idx").fetchall()


def test_the_vmware_template_runs_locally_and_is_stored(windows_fio: Path, tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    shown = fiometer("plan", str(VMWARE), "--jobs", str(jobs))
    assert shown.returncode == 0, shown.stderr
    text = (jobs / sorted(os.listdir(jobs))[0]).read_text()
    assert "ioengine=windowsaio" in text and "thread" in text.split()
    assert "filename=C\\:\\iobw.tst" in text  # fio reads ':' as a separator of file names unless escaped

    db = tmp_path / "runs.db"
    run = fiometer(
        "run",
        str(VMWARE),
        "--map",
        f"C:={tmp_path / 'iobw.tst'}",
        "--run-time",
        "1",
        "--test-file-size",
        "16M",
        "--fio",
        str(windows_fio),
        "--db",
        str(db),
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "4 of 4 steps ran (4 complete)" in run.stdout
    steps = _steps(db)
    assert len(steps) == 4 and {s for _, s in steps} == {"complete"}, steps

    # the stored run's reports and exports, written by Windows Python (the PDF through Qt's QPdfWriter)
    out = {k: tmp_path / f"r.{k}" for k in ("html", "pdf", "xlsx", "csv")}
    report = fiometer(
        "report", "1", "--db", str(db), *[a for k, f in out.items() for a in (f"--{k}", str(f))]
    )
    assert report.returncode == 0, report.stderr[-3000:]
    assert out["pdf"].read_bytes().startswith(b"%PDF") and out["xlsx"].read_bytes().startswith(b"PK")
    assert "Max Throughput-100%Read" in out["html"].read_text(encoding="utf-8")
    export = fiometer(
        "export",
        "1",
        "--db",
        str(db),
        "--iometer-csv",
        str(tmp_path / "i.csv"),
        "--samples",
        str(tmp_path / "s.csv"),
    )
    assert export.returncode == 0, export.stderr[-3000:]
    iometer = (tmp_path / "i.csv").read_text()
    assert iometer.startswith("'Test Type") and "Max Throughput-100%Read" in iometer


ICF_TARGETS = """'Target assignments
'Target
PHYSICALDRIVE:1
'Target type
DISK
'End target
'Target
C: "Windows"
'Target type
DISK
'End target
'End target assignments
"""


def _icf_with_two_targets(tmp_path: Path) -> Path:
    text = VMWARE.read_text()
    text = re.sub(r"'Target assignments.*?'End target assignments\s*\n", ICF_TARGETS, text, flags=re.S)
    path = tmp_path / "two-targets.icf"
    path.write_text(text)
    return path


def test_an_imported_physical_drive_and_labelled_drive_give_windows_job_text(
    windows_fio: Path, tmp_path: Path
) -> None:
    icf = _icf_with_two_targets(tmp_path)
    jobs = tmp_path / "jobs"
    shown = fiometer("plan", str(icf), "--jobs", str(jobs))
    assert shown.returncode == 0, shown.stderr
    text = (jobs / sorted(os.listdir(jobs))[0]).read_text()
    assert "filename=\\\\.\\PhysicalDrive1" in text
    assert "filename=C\\:\\iobw.tst" in text

    # the raw disk is written by the mixed specs: refused until armed, and the message says how
    run = fiometer(
        "run", str(icf), "--run-time", "1", "--fio", str(windows_fio), "--db", str(tmp_path / "r.db")
    )
    assert run.returncode != 0
    said = run.stdout + run.stderr
    assert "PhysicalDrive1" in said and "--allow-write" in said, said[-3000:]
    assert "Traceback" not in said


def test_settings_database_and_log_land_in_appdata(windows_fio: Path, tmp_path: Path) -> None:
    roaming, local = tmp_path / "Roaming", tmp_path / "Local"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIOMETER_")}
    env.update(APPDATA=str(roaming), LOCALAPPDATA=str(local))
    doctor = fiometer("doctor", env=env)
    assert doctor.returncode == 0, doctor.stderr
    out = doctor.stdout
    assert f"Settings file: {roaming}\\Fiometer\\settings.json" in out
    assert f"Results database: {local}\\Fiometer\\fiometer.db" in out
    assert f"Log file: {local}\\Fiometer\\" in out
    assert "found" in out and "fio.exe" in out

    run = fiometer(
        "run",
        str(VMWARE),
        "--map",
        f"C:={tmp_path / 'iobw.tst'}",
        "--run-time",
        "1",
        "--test-file-size",
        "8M",
        "--fio",
        str(windows_fio),
        env=env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert (local / "Fiometer" / "fiometer.db").is_file()
    assert not roaming.exists() or not any(p.suffix == ".db" for p in roaming.rglob("*"))


def test_windows_fiometer_drives_a_linux_fio_server(windows_fio: Path, tmp_path: Path) -> None:
    where = os.environ.get(ENV_LINUX_SERVER)
    if not where:
        pytest.skip(f"no Linux fio --server given ({ENV_LINUX_SERVER}); test-windows starts one")
    probe = fiometer("probe", where)
    assert probe.returncode == 0, probe.stderr
    assert "Linux" in probe.stdout
    db = tmp_path / "r.db"
    name = f"fiometer-from-windows-{uuid.uuid4().hex[:8]}.tst"  # new each time: a file left before is foreign
    try:
        run = fiometer(
            "run",
            str(VMWARE),
            "--manager",
            f"PB-W2K3-04={where}",
            "--map",
            f"C:=/tmp/{name}",
            "--run-time",
            "1",
            "--test-file-size",
            "8M",
            "--db",
            str(db),
            "--allow-unverified-writes",  # a plain fio --server's files cannot be examined: armed, as a user must
            "PB-W2K3-04",
        )
    finally:
        Path(f"Z:/tmp/{name}").unlink(missing_ok=True)  # the Linux server's /tmp, through Wine's Z: drive
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "4 of 4 steps ran (4 complete)" in run.stdout
    assert {s for _, s in _steps(db)} == {"complete"}


def test_smoke_check_finds_windows_fonts_as_a_user_starts_it(windows_fio: Path, tmp_path: Path) -> None:
    """`fiometer-cli --smoke` as a user starts it (no QT_QPA_* set): Qt's offscreen platform reads the fonts
    of Windows, not a `fonts` folder beside Qt ("Cannot find font directory" in every installed --smoke)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("QT_QPA_")}
    env["PATH"] = f"{windows_fio.parent};{env.get('PATH', '')}"
    env["FIOMETER_SETTINGS_DIR"] = str(tmp_path / "settings")
    smoke = fiometer("--smoke", env=env)
    assert smoke.returncode == 0, smoke.stdout[-2000:] + smoke.stderr[-2000:]
    assert "fiometer smoke ok" in smoke.stdout
    assert "Cannot find font directory" not in smoke.stderr, smoke.stderr[-2000:]


def _one_step_plan(tmp_path: Path) -> Path:
    from app.model import planfile
    from app.model.plan import SpecLine, Target
    from tests.helpers import grid

    plan = grid(1, 1, 1)
    plan.specs[0].lines = [SpecLine(4096, 100, 0, 100, 0, 1, 4096, 0)]
    plan.managers[0].workers[0].targets = [Target("T1")]
    path = tmp_path / "plan.json"
    planfile.save(plan, path)
    return path


def _run_on(tmp_path: Path, windows_fio: Path, target: str) -> object:
    return fiometer(
        "run",
        str(_one_step_plan(tmp_path)),
        "--map",
        f"T1={target}",
        "--run-time",
        "1",
        "--test-file-size",
        "1M",
        "--fio",
        str(windows_fio),
        "--db",
        str(tmp_path / "r.db"),
    )


def test_a_non_ascii_test_file_folder_is_the_folder_fio_writes(windows_fio: Path, tmp_path: Path) -> None:
    """Issue 36.5: fio.exe reads its job file in the ANSI code page; written so, 'Prüfung 1' is the folder
    fio writes into (not 'PrÃ¼fung 1', the UTF-8 bytes read as code page 1252)."""
    folder = tmp_path / "Prüfung 1"
    folder.mkdir()
    run = _run_on(tmp_path, windows_fio, str(folder / "iobw.tst"))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert (folder / "iobw.tst").stat().st_size >= 1 << 20
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["Prüfung 1"]


def test_a_path_longer_than_max_path_is_refused_with_a_message(windows_fio: Path, tmp_path: Path) -> None:
    """Issue 36.5: a 316-character test file path: a clear refusal, not an internal error."""
    target = str(tmp_path) + "\\" + "d" * (316 - len(str(tmp_path)) - 10) + "\\iobw.tst"
    assert len(target) == 316
    run = _run_on(tmp_path, windows_fio, target)
    assert run.returncode != 0
    assert "316 characters" in run.stderr and "MAX_PATH" in run.stderr, run.stderr[-3000:]
    assert "internal error" not in run.stderr
