"""The window's side of data safety: one record of created test files shared with the CLI, missing folders
offered for creation, and arming that follows the engine's rule."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from app.engine.run.runner import Runner, RunOptions
from app.model.plan import Target
from app.ui.main_window import MainWindow
from tests.gui.conftest import local_plan, plan_file
from tests.integration.test_ssh_manager import ssh_namespace  # noqa: F401 - the fixture

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


def test_arming_checks_again_on_the_same_runner(window: MainWindow, dialogs, tmp_path: Path) -> None:
    """The arm-and-retry loop reruns only the checks (Runner.prepare) with the user's answers: one Runner,
    built once, checked twice (unarmed, then armed)."""
    plan = local_plan(tmp_path, workers=1)
    (tmp_path / "chr").symlink_to("/dev/null")
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "chr"))]
    built: list[Runner] = []
    checked: list[RunOptions | None] = []

    class Counted(Runner):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            built.append(self)

        def prepare(self, options=None):
            checked.append(options)
            return super().prepare(options)

    prepared = window.controller.prepare(
        plan, RunOptions(run_time=1, file_size=1 << 20), None, lambda risks: True, make=Counted
    )
    assert prepared is not None
    runner, options = prepared
    assert built == [runner] and len(checked) == 2
    assert checked[0] is not None and checked[0].allow_write == set()
    assert checked[1] is options and options.allow_write == {"/dev/null"}
    assert runner.prepared is not None and runner.prepared.options is options
    runner.close_endpoints()


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


@pytest.fixture
def fio_server():
    from tests.fio_servers import fio_servers

    yield from fio_servers()


def test_a_plain_fio_server_is_written_only_on_its_ticked_checkbox(
    window: MainWindow, dialogs, tmp_path: Path, qtbot, fio_server, monkeypatch
) -> None:
    """Issue 36: at Start the window lists the plain fio servers the run writes on, one checkbox each and
    none ticked; cancelled, nothing is written (not even a test file laid out); ticked, the run goes."""
    from PySide6.QtWidgets import QDialog

    from app.ui.run import unverified_hosts

    host, port, _proc = fio_server("127.0.0.81")
    plan = local_plan(tmp_path, workers=1)
    plan.managers[0].host = f"{host}:{port}"
    target = Path(plan.managers[0].workers[0].targets[0].name)
    window.doc.replace(plan)
    seen: list[dict] = []
    tick = {"now": False}

    def exec_(self) -> int:
        seen.append({n: b.isChecked() for n, b in self.boxes.items()})
        self.adjustSize()
        self.grab().save(str(Path("/tmp") / "unverified-hosts-dialog.png"))
        assert not self.go.isEnabled()  # nothing ticked: the action cannot be chosen
        if not tick["now"]:
            return QDialog.DialogCode.Rejected
        self.boxes["M1"].setChecked(True)
        assert self.go.isEnabled()
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(unverified_hosts.UnverifiedHostsDialog, "exec", exec_)
    window.run_control.run_options = RunOptions(run_time=1, file_size=1 << 20)
    assert not window.run_control.start_run()
    assert seen == [{"M1": False}] and not target.exists()
    tick["now"] = True
    assert run_in_window(window, qtbot) == "complete"
    assert len(seen) == 2 and target.is_file()


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("losetup"), reason="needs root and losetup")
@pytest.mark.parametrize("to", ["a loop device", "another foreign file"])
def test_a_confirmation_binds_to_the_object_not_the_name(
    window: MainWindow, tmp_path: Path, qtbot, to
) -> None:
    """Issue 36.4: "Overwrite and start" confirmed for a 4 MiB file; while the question is open the path
    becomes a link to a loop device holding a pattern (or to another foreign file). The window asks again,
    describing the new object; answered No, nothing is written."""
    from tests.loop_disk import loop_maker

    makes = loop_maker(tmp_path)
    make = next(makes)
    try:
        disk = make(8 << 20)
        other = tmp_path / "other.bin"
        other.write_bytes(b"other" * (1 << 18))
        target = tmp_path / "precious.bin"
        target.write_bytes(b"precious" * (1 << 19))  # 4 MiB
        plan = local_plan(tmp_path, workers=1)
        plan.specs[0].lines[0].reads = 0
        plan.managers[0].workers[0].targets = [Target(str(target))]
        window.doc.replace(plan)
        asked: list[tuple[str, str]] = []
        new = disk.dev if to == "a loop device" else str(other)

        def ask(title: str, text: str, action: str = "Yes") -> bool:
            asked.append((title, text))
            if len(asked) == 1:  # while the first question is on screen
                target.unlink()
                target.symlink_to(new)
                return True
            return False

        window.ask = ask  # type: ignore[method-assign]
        window.run_control.run_options = RunOptions(run_time=1, file_size=1 << 20)
        assert not window.run_control.start_run()
        assert len(asked) == 2, asked
        assert "4 MiB file" in asked[0][1] and str(target) in asked[0][1]
        assert new in asked[1][1], asked[1][1]
        assert disk.intact()
        assert other.read_bytes() == b"other" * (1 << 18)
    finally:
        makes.close()


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("losetup"), reason="needs root and losetup")
def test_a_confirmed_loop_device_bound_again_to_another_file_is_asked_about_again(
    window: MainWindow, tmp_path: Path
) -> None:
    """Issue 36.4: "Overwrite and start" confirmed for /dev/loopN over a scratch image; while the question is
    open the loop device is bound again, same name and number, to another file. The window asks again,
    describing what it is over now; answered No, that file keeps every byte."""
    from tests.loop_disk import loop_maker, sh

    makes = loop_maker(tmp_path)
    make = next(makes)
    try:
        scratch = make(8 << 20)
        other = tmp_path / "other.img"
        other.write_bytes(b"other" * (1 << 18))
        plan = local_plan(tmp_path, workers=1)
        plan.specs[0].lines[0].reads = 0
        plan.managers[0].workers[0].targets = [Target(scratch.dev)]
        window.doc.replace(plan)
        asked: list[tuple[str, str]] = []

        def ask(title: str, text: str, action: str = "Yes") -> bool:
            asked.append((title, text))
            if len(asked) == 1:  # while the first question is on screen
                sh("losetup", "-d", scratch.dev)
                sh("losetup", scratch.dev, str(other))
                return True
            return False

        window.ask = ask  # type: ignore[method-assign]
        window.run_control.run_options = RunOptions(run_time=1, file_size=1 << 20)
        assert not window.run_control.start_run()
        assert len(asked) == 2, asked
        first, again = asked[0][1], asked[1][1]
        assert scratch.dev in first and "a loop device over a file" in first, first
        over = f"inode {other.stat().st_ino})"
        assert over in again and over not in first, again
        assert other.read_bytes() == b"other" * (1 << 18)
    finally:
        makes.close()


def test_a_confirmed_file_replaced_by_one_of_the_same_size_is_asked_about_again_and_told_apart(
    window: MainWindow, tmp_path: Path
) -> None:
    """Issue 36.4: while "Overwrite and start" is open for a foreign file, another file of the same size is
    renamed over it. The window asks again, and the question tells the new file from the first (its inode),
    so the same words twice cannot pass for a glitch; answered No, neither is written."""
    target = tmp_path / "precious.bin"
    target.write_bytes(b"precious" * (1 << 17))  # 1 MiB
    other = tmp_path / "other.bin"
    other.write_bytes(b"other!!!" * (1 << 17))  # the same size
    plan = local_plan(tmp_path, workers=1)
    plan.specs[0].lines[0].reads = 0
    plan.managers[0].workers[0].targets = [Target(str(target))]
    window.doc.replace(plan)
    asked: list[str] = []
    first_inode = target.stat().st_ino

    def ask(title: str, text: str, action: str = "Yes") -> bool:
        asked.append(text)
        if len(asked) == 1:
            os.replace(other, target)
            return True
        return False

    window.ask = ask  # type: ignore[method-assign]
    window.run_control.run_options = RunOptions(run_time=1, file_size=1 << 20)
    assert not window.run_control.start_run()
    assert len(asked) == 2, asked
    assert f"inode {first_inode})" in asked[0] and f"inode {target.stat().st_ino})" in asked[1], asked
    assert asked[0] != asked[1]
    assert target.read_bytes() == b"other!!!" * (1 << 17)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("losetup"), reason="needs root and losetup")
def test_a_file_backing_a_loop_device_gets_the_second_question_as_a_file_in_use(
    window: MainWindow, tmp_path: Path
) -> None:
    """A foreign file that backs a loop device: the second question calls it a file in use (not a disk) and
    says what uses it; answered No, the file keeps every byte."""
    from tests.loop_disk import detach, sh

    target = tmp_path / "image.bin"
    target.write_bytes(b"image" * (1 << 18))
    dev = sh("losetup", "--read-only", "--find", "--show", str(target))
    try:
        plan = local_plan(tmp_path, workers=1)
        plan.specs[0].lines[0].reads = 0
        plan.managers[0].workers[0].targets = [Target(str(target))]
        window.doc.replace(plan)
        asked: list[tuple[str, str]] = []
        window.ask = lambda title, text, action="Yes": asked.append((title, text)) or len(asked) == 1  # type: ignore[method-assign]
        window.run_control.run_options = RunOptions(run_time=1, file_size=1 << 20)
        assert not window.run_control.start_run()
        (_, first), (title, second) = asked
        assert title == "Targets in use" and "disks or files are in use" in second, second
        assert f"{target} — backing file of {dev}" in second, second
        assert target.read_bytes() == b"image" * (1 << 18)
    finally:
        detach(dev)


def _ssh_marked(test):
    from tests.integration.test_ssh_manager import pytestmark as ssh_marks

    for mark in ssh_marks:
        test = mark(test)
    return test


@_ssh_marked
def test_an_ssh_managers_confirmation_binds_to_the_object_there(
    window: MainWindow,
    tmp_path: Path,
    monkeypatch,
    ssh_namespace,  # noqa: F811
) -> None:
    """Issue 36.4 on an ssh:// manager: confirmed for a foreign file on that host, the file is replaced there
    by another of the same size while the question is open; the window asks again, naming the new object,
    and answered No nothing is written."""
    from app.engine.transports.ssh_manager import SSH_ENV

    config, _ns = ssh_namespace
    monkeypatch.setenv(SSH_ENV, f"ssh -F {config}")
    target = tmp_path / "remote-precious.bin"
    target.write_bytes(b"precious" * (1 << 17))
    other = tmp_path / "remote-other.bin"
    other.write_bytes(b"other!!!" * (1 << 17))
    first_inode = target.stat().st_ino
    plan = local_plan(tmp_path, workers=1)
    plan.specs[0].lines[0].reads = 0
    plan.managers[0].host = "ssh://fiometer-remote"
    plan.managers[0].workers[0].targets = [Target(str(target))]
    window.doc.replace(plan)
    asked: list[str] = []

    def ask(title: str, text: str, action: str = "Yes") -> bool:
        asked.append(text)
        if len(asked) == 1:
            os.replace(other, target)
            return True
        return False

    window.ask = ask  # type: ignore[method-assign]
    window.run_control.run_options = RunOptions(run_time=1, file_size=1 << 20)
    assert not window.run_control.start_run()
    assert len(asked) == 2, asked
    assert "on a remote manager" in asked[0] and f"inode {first_inode})" in asked[0], asked
    assert f"inode {target.stat().st_ino})" in asked[1], asked
    assert target.read_bytes() == b"other!!!" * (1 << 17)
