"""`fiometer gui PLAN --screenshot DIR` writes one PNG per tab and exits 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from app.ui.main_window import TAB_NAMES
from tests.gui.conftest import local_plan, plan_file

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, settings: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "FIOMETER_SETTINGS_DIR": str(settings)}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "gui", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_screenshot_writes_one_png_per_tab(tmp_path: Path) -> None:
    path = plan_file(tmp_path)
    out = tmp_path / "shots"
    done = run_cli(str(path), "--screenshot", str(out), settings=tmp_path / "settings")
    assert done.returncode == 0, done.stderr
    pngs = sorted(out.glob("*.png"))
    assert [p.name for p in pngs] == [
        "01-disk-targets.png",
        "02-network-targets.png",
        "03-access-specifications.png",
        "04-test-setup.png",
        "05-results-display.png",
    ]
    assert len(pngs) == len(TAB_NAMES)
    for p in pngs:
        img = QImage(str(p))
        assert (img.width(), img.height()) == (1280, 800)
    assert done.stdout.split() == [str(p) for p in pngs]
    assert not (tmp_path / "settings").exists() or not any((tmp_path / "settings").rglob("*.ini"))


def test_screenshot_of_a_broken_plan_fails_with_the_reason(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "fiometer-plan", "version": 99}')
    done = run_cli(str(bad), "--screenshot", str(tmp_path / "shots"), settings=tmp_path / "settings")
    assert done.returncode == 2
    assert "newer than this Fiometer reads" in done.stderr


@pytest.mark.fio
def test_screenshot_after_a_short_run_shows_numbers(tmp_path: Path) -> None:
    plan = local_plan(tmp_path, workers=1)
    path = plan_file(tmp_path, plan)
    out = tmp_path / "shots"
    done = run_cli(
        str(path), "--screenshot", str(out), "--run", "4", "--engine", "null", settings=tmp_path / "settings"
    )
    assert done.returncode == 0, done.stderr
    assert "fiometer: run complete" in done.stderr
    # the curves are drawn in the first series colour (#4e79a7); an empty chart has none of it
    img = QImage(str(out / "05-results-display.png"))
    blue = sum(
        1
        for x in range(0, img.width(), 2)
        for y in range(0, img.height(), 2)
        if abs(img.pixelColor(x, y).red() - 0x4E) < 12
        and abs(img.pixelColor(x, y).green() - 0x79) < 12
        and abs(img.pixelColor(x, y).blue() - 0xA7) < 12
    )
    assert blue > 60  # an empty Results Display has about 15 such pixels


def test_open_run_shows_a_stored_run_and_its_screenshot(tmp_path: Path) -> None:
    """`fiometer --db DB gui --open-run ID --screenshot DIR`: the stored run's view, as a PNG."""
    import shutil

    db = tmp_path / "results.db"
    shutil.copy(ROOT / "tests" / "fixtures" / "store" / "v2-two-runs.db", db)  # migrated on opening, too
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "FIOMETER_SETTINGS_DIR": str(tmp_path / "settings")}
    out = tmp_path / "shots"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(db),
            "gui",
            "--open-run",
            "1",
            "--screenshot",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(out / "run-1.png")]
    img = QImage(str(out / "run-1.png"))
    assert (img.width(), img.height()) == (1280, 800)
    missing = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(db),
            "gui",
            "--open-run",
            "99",
            "--screenshot",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert missing.returncode == 2 and "There is no run 99" in missing.stderr
    assert "Traceback" not in missing.stderr


@pytest.mark.fio
def test_screenshot_run_answers_no_to_arming_and_writes_nothing(tmp_path: Path) -> None:
    """A target that needs arming (an existing file that is not Fiometer's): the headless path answers
    the question 'no' (said on stderr), the run does not start, the file is unchanged, exit 0."""
    plan = local_plan(tmp_path, workers=1)
    foreign = Path(plan.managers[0].workers[0].targets[0].name)
    pattern = bytes(range(256)) * 4096  # 1 MiB someone else's
    foreign.write_bytes(pattern)
    path = plan_file(tmp_path, plan)
    out = tmp_path / "shots"
    done = run_cli(str(path), "--screenshot", str(out), "--run", "2", settings=tmp_path / "settings")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    assert "Targets would be written" in done.stderr and "-> no" in done.stderr
    assert "fiometer: run did not start" in done.stderr
    assert foreign.read_bytes() == pattern
    assert len(list(out.glob("*.png"))) == len(TAB_NAMES)


def test_screenshot_never_writes_through_a_link_planted_in_its_folder(tmp_path: Path) -> None:
    victim = tmp_path / "victim.bin"
    victim.write_bytes(b"keep me")
    out = tmp_path / "shots"
    out.mkdir()
    (out / "01-disk-targets.png").symlink_to(victim)
    done = run_cli(str(plan_file(tmp_path)), "--screenshot", str(out), settings=tmp_path / "settings")
    assert done.returncode == 2, done.stderr
    assert "symbolic link" in done.stderr and "Traceback" not in done.stderr
    assert "internal error" not in done.stderr and "choose another folder" in done.stderr
    assert victim.read_bytes() == b"keep me"


def test_screenshot_folder_that_is_a_file_is_refused_in_words(tmp_path: Path) -> None:
    out = tmp_path / "shots"
    out.write_bytes(b"a file, not a folder")
    done = run_cli(str(plan_file(tmp_path)), "--screenshot", str(out), settings=tmp_path / "settings")
    assert done.returncode == 2, done.stderr
    assert "cannot make the screenshot folder" in done.stderr and "internal error" not in done.stderr
    assert out.read_bytes() == b"a file, not a folder"
