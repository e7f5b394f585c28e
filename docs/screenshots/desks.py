"""Screenshots of the whole screen as a user sees it on a real desk: each tab, a run in progress, a manager
lost mid-run and the confirmation dialogs, at the screen size the X server has (and QT_SCALE_FACTOR).

Run both desks with: bash docs/screenshots/desks.sh   (needs Xvfb and fio; writes desk-<NAME>-*.png)
One desk: xvfb-run -s "-screen 0 1366x768x24" python docs/screenshots/desks.py 1366x768
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from PySide6.QtWidgets import QApplication  # noqa: E402
from shot_kit import settle  # noqa: E402

from app.engine.run.runner import RunOptions  # noqa: E402
from app.model.plan import LOCAL, AccessSpec, Manager, Plan, SpecLine, Target, Worker  # noqa: E402
from app.ui import settings as prefs  # noqa: E402
from app.ui import theme  # noqa: E402
from app.ui.confirm import confirm_box  # noqa: E402
from app.ui.launch import HeadlessWindow, application  # noqa: E402
from app.ui.main_window import TAB_NAMES  # noqa: E402


def screen_shot(name: str) -> None:
    """The whole screen: what is off-screen is missing from the picture."""
    settle()
    path = HERE / f"desk-{DESK}-{name}.png"
    QApplication.primaryScreen().grabWindow(0).save(str(path))
    print(path)


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def two_manager_plan(folder: Path, remote: str) -> Plan:
    spec = AccessSpec("4 KiB random 70% read", lines=[SpecLine(4096, 100, 70, 100, 0, 1, 4096, 0)])
    managers = [
        Manager(
            "this-pc",
            LOCAL,
            workers=[
                Worker(
                    "Worker 1", queue_depth=4, specs=[spec.name], targets=[Target(str(folder / "local.tst"))]
                )
            ],
        ),
        Manager(
            "lab-server",
            remote,
            workers=[
                Worker(
                    "Worker 1", queue_depth=4, specs=[spec.name], targets=[Target(str(folder / "remote.tst"))]
                )
            ],
        ),
    ]
    plan = Plan(name="Two managers", managers=managers, specs=[spec])
    plan.setup.run_time = 60
    plan.setup.update_frequency = 1
    return plan


def dialog_shot(win, name: str, make) -> None:
    """Show a question (built, not executed) next to the window, grab the screen, close it."""
    box = make()
    box.setModal(False)
    box.show()
    settle(0.4)
    screen_shot(name)
    box.close()


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="fiometer-desk-"))
    prefs.use_settings_dir(str(tmp))
    prefs.app_settings().setValue("firstRun/seen", False)  # the first start, welcome line included
    app = application()
    theme.apply_theme(app, theme.LIGHT)
    win = HeadlessWindow(prefs.app_settings(), persist=False, db_path=tmp / "runs.db")
    win.files.open_example("crystal")
    win.messages_dock.show()
    win.show()
    settle(2.0)  # fio's version arrives, the welcome line shows
    for i, name in enumerate(TAB_NAMES + ("History",)):
        win.tabs.setCurrentIndex(i)
        screen_shot(f"{i + 1}-{name.lower().replace(' ', '-')}")

    # a run with a local and a remote manager; the remote fio server is killed mid-run
    host = "127.0.0.3"
    port = free_port(host)
    server = subprocess.Popen(
        ["fio", f"--server={host},{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    time.sleep(1.0)
    win.doc.replace(two_manager_plan(tmp, f"{host}:{port}"))
    win.run_control.run_options = RunOptions(engine="null", run_time=40, ramp_up=0, file_size=1 << 20)
    if not win.run_control.start_run():
        print("the run did not start", file=sys.stderr)
        return 1
    win.results_tab.scope.setCurrentIndex(win.results_tab.scope.findText("Each manager"))  # a column each
    settle(6.0)
    screen_shot("run-in-progress")
    os.killpg(server.pid, signal.SIGKILL)
    for _ in range(100):  # the lost connection is noticed within seconds
        settle(0.1)
        if win.run_control.lost:
            break
    settle(1.0)
    print("lost:", win.run_control.lost, file=sys.stderr)
    screen_shot("lost-manager")
    win.doc.touch("setup")  # unsaved changes too: the one question covers both
    dialog_shot(win, "close-during-run", lambda: win.close_box()[0])
    win.controller.stop()
    while win.controller.running:
        settle(0.1)
    settle(1.0)
    screen_shot("after-lost-manager")
    dialog_shot(
        win,
        "arm-writes",
        lambda: confirm_box(
            win,
            "Targets would be written",
            win.run_control.arm_text([example_risk(tmp)]),
            "Overwrite and start",
        )[0],
    )
    server.wait()
    win.doc.touch("setup")
    dialog_shot(win, "unsaved-changes", lambda: win.unsaved_question())
    return 0


def example_risk(folder: Path):
    from app.engine.guards.safety import WriteRisk

    f = folder / "data.bin"
    f.write_bytes(b"x" * (3 << 20))
    return WriteRisk("this-pc", "data.bin", str(f), "an existing file Fiometer did not create")


if __name__ == "__main__":
    DESK = sys.argv[1] if len(sys.argv) > 1 else "screen"
    sys.exit(main())
