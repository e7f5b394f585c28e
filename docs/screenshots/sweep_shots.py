"""Screenshot of a stored sweep run's Sweep tab (History) and its report, from a real run of the bundled
Orion-style example: each queue depth for a few seconds on a small test file.
Run: QT_QPA_PLATFORM=offscreen python docs/screenshots/sweep_shots.py [RESULTS.db RUN_ID]
(with a database and run id, that run is shown instead of running the example)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from shot_kit import start_app  # noqa: E402

from app.ui import settings as prefs  # noqa: E402
from app.ui.launch import HeadlessWindow  # noqa: E402
from app.ui.screenshots import settle  # noqa: E402


def cli(*args: object) -> None:
    subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], check=True, cwd=HERE.parents[1])


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="fiometer-sweep-shots-"))
    if len(sys.argv) == 3:
        db, run_id = Path(sys.argv[1]), int(sys.argv[2])
    else:
        db, run_id = tmp / "results.db", 1
        cli("examples", "--save", tmp)
        cli(
            "--db",
            db,
            "run",
            tmp / "orion.json",
            "--map",
            f"TESTFILE={tmp / 'sweep.tst'}",
            "--run-time",
            "3",
            "--ramp-up",
            "1",
            "--test-file-size",
            "256M",
        )
    cli("--db", db, "report", run_id, "--html", tmp / "sweep.html", "--pdf", tmp / "sweep.pdf")
    start_app(tmp)
    win = HeadlessWindow(prefs.app_settings(), persist=False, db_path=db)
    win.show()
    win.resize(1280, 800)  # after the first show, which fits the window to the screen
    settle(0.3)
    ui = win.history
    ui.show_history()
    while ui.tasks.busy:
        settle(0.1)
    view = ui.open_run(run_id)
    while view.data is None:
        settle(0.1)
    view.views.setCurrentWidget(view.sweep)
    view.splitter.setSizes([560, 140])
    settle(0.5)
    win.grab().save(str(HERE / "sweep-curves.png"))
    print(HERE / "sweep-curves.png")
    print(f"also: {tmp}/sweep.html, sweep.pdf")
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
