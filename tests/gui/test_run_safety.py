"""The window's side of data safety: one record of created test files shared with the CLI, missing folders
offered for creation, and arming that follows the engine's rule."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from app.engine.run.runner import RunOptions
from app.model.plan import Target
from app.ui.main_window import MainWindow
from tests.gui.conftest import local_plan, plan_file

pytestmark = pytest.mark.fio
REPO = Path(__file__).resolve().parents[2]


def cli_run(plan: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # FIOMETER_DB: the window's database (conftest)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "run",
            str(plan),
            "--run-time",
            "1",
            "--test-file-size",
            "1M",
            *extra,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )


def run_in_window(window: MainWindow, qtbot) -> str:
    window.run_control.run_options = RunOptions(run_time=1, file_size=1 << 20)
    assert window.run_control.start_run()
    with qtbot.waitSignal(window.controller.finished, timeout=30000) as finished:
        pass
    return finished.args[0]


def test_test_files_created_by_the_cli_and_the_window_are_reused_by_both_without_arming(
    window: MainWindow, dialogs, tmp_path: Path, qtbot
) -> None:
    plan = local_plan(tmp_path, workers=1)
    target = Path(plan.managers[0].workers[0].targets[0].name)
    path = plan_file(tmp_path, plan)
    out = cli_run(path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert target.stat().st_size == 1 << 20
    window.doc.replace(plan)
    assert run_in_window(window, qtbot) == "complete"
    assert dialogs.questions == []  # the CLI's test file: nothing to arm
    out = cli_run(path)  # and the window's run left it Fiometer's for the CLI too
    assert out.returncode == 0, out.stdout + out.stderr
    # a file someone put in its place is foreign again, for both
    target.unlink()
    target.write_bytes(b"precious" * (1 << 17))
    out = cli_run(path)
    assert out.returncode == 2 and "did not create it" in out.stderr
    dialogs.answer = False
    window.run_control.run_options = RunOptions(run_time=1, file_size=1 << 20)
    assert not window.run_control.start_run()
    assert "Targets would be written" in dialogs.questions[-1][0]
    assert target.read_bytes().startswith(b"precious")


def test_a_missing_folder_is_offered_for_creation_never_made_silently(
    window: MainWindow, dialogs, tmp_path: Path, qtbot
) -> None:
    plan = local_plan(tmp_path, workers=1)
    folder = tmp_path / "new" / "folder"
    plan.managers[0].workers[0].targets = [Target(str(folder / "iobw.tst"))]
    window.doc.replace(plan)
    window.run_control.run_options = RunOptions(run_time=1, file_size=1 << 20)
    dialogs.answer = False
    assert not window.run_control.start_run()
    title, text = dialogs.questions[-1]
    assert title == "Folders do not exist" and str(folder) in text
    assert not folder.exists()
    dialogs.answer = True
    assert run_in_window(window, qtbot) == "complete"
    assert (folder / "iobw.tst").is_file()


def test_the_window_arms_exactly_what_the_engine_refused(window: MainWindow, dialogs, tmp_path: Path) -> None:
    """A second question for a device in use; the answers arm those targets only."""
    plan = local_plan(tmp_path, workers=1)
    (tmp_path / "chr").symlink_to("/dev/null")  # a character device: its use cannot be seen, so in use
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "chr"))]
    window.doc.replace(plan)
    window.run_control.run_options = RunOptions(run_time=1, file_size=1 << 20)
    asked: list[list] = []
    window.run_control.arm_writes = lambda risks: asked.append(risks) or True  # type: ignore[method-assign]
    prepared = window.controller.prepare(
        window.doc.plan, window.run_control.run_options, None, window.run_control.arm_writes
    )
    assert prepared is not None
    runner, options = prepared
    (risk,) = asked[0]
    assert risk.in_use and risk.path == "/dev/null"
    assert options.allow_write == {"/dev/null"} and options.allow_write_in_use == {"/dev/null"}
    assert "allow_mounted_write=1" in runner.jobfiles[0]["M1"].text


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: makes a device node")
def test_a_confirmation_arms_the_file_shown_not_the_device_its_name_leads_to_at_start(
    window: MainWindow, tmp_path: Path
) -> None:
    """The user confirms overwriting a file; while the question is open the name becomes a device node: the
    confirmation does not carry over to the device — the user is asked about the device itself."""
    plan = local_plan(tmp_path, workers=1)
    target = tmp_path / "precious.bin"
    target.write_bytes(b"precious" * (1 << 17))
    plan.managers[0].workers[0].targets = [Target(str(target))]
    window.doc.replace(plan)
    asked: list[list] = []

    def confirm_while_it_changes(risks) -> bool:
        asked.append(risks)
        if len(asked) == 1:
            target.unlink()
            os.mknod(target, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # the null device's numbers
            return True
        return False  # the question about the device: no

    prepared = window.controller.prepare(
        window.doc.plan, RunOptions(run_time=1, file_size=1 << 20), None, confirm_while_it_changes
    )
    assert prepared is None
    (file_risk,), (device_risk,) = asked
    assert file_risk.obj[0] == "file" and "did not create it" in file_risk.reason
    assert device_risk.obj == ("char", 1, 3) and "raw device" in device_risk.reason
