"""Screenshots of a stored run's response time distribution (History > a run > Response time distribution),
from a real fio run: two workers on small test files, a 4 KiB random mixed step and a 64 KiB sequential read
step, recorded by the command line into a temporary results database.
Run: QT_QPA_PLATFORM=offscreen python docs/screenshots/latency_shots.py"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))


from shot_kit import settle, start_app, two_spec_plan  # noqa: E402

from app.model import planfile  # noqa: E402
from app.ui import settings as prefs  # noqa: E402
from app.ui import theme  # noqa: E402
from app.ui.launch import HeadlessWindow  # noqa: E402


def record_run(tmp: Path, db: Path) -> None:
    plan = two_spec_plan(tmp, "Latency example")
    path = tmp / "plan.fiometer.json"
    planfile.save(plan, path)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(db),
            "run",
            str(path),
            "--run-time",
            "8",
            "--test-file-size",
            "64M",
        ],
        check=True,
        cwd=ROOT,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="fiometer-latency-shots-"))
    db = tmp / "results.db"
    record_run(tmp, db)
    app = start_app(tmp)
    for mode in (theme.LIGHT, theme.DARK):
        theme.apply_theme(app, mode)  # before the window opens, as at start
        shots(db, mode == theme.DARK)
    return 0


def shots(db: Path, dark: bool) -> None:
    win = HeadlessWindow(prefs.app_settings(), persist=False, db_path=db)
    win.resize(1366, 768)
    win.show()
    settle()
    ui = win.history
    ui.show_history()
    view = ui.open_run(1)
    while view.data is None or ui.tasks.busy:
        settle(0.1)
    view.splitter.setSizes([520, 160])
    view.views.setCurrentWidget(view.latency)

    def shot(name: str) -> None:
        while ui.tasks.busy:
            settle(0.1)
        settle(0.5)
        path = HERE / f"latency-{name}.png"
        win.grab().save(str(path))
        print(path)

    if dark:
        view.step.setCurrentIndex(2)
        shot("dark")
    else:
        view.step.setCurrentIndex(1)
        shot("step")
        view.step.setCurrentIndex(0)
        shot("all-steps")
        titles = [view.scope.itemText(i) for i in range(view.scope.count())]
        view.scope.setCurrentIndex(titles.index(next(t for t in titles if t.startswith("    "))))
        view.step.setCurrentIndex(2)
        shot("worker")
    win.close()


if __name__ == "__main__":
    sys.exit(main())
