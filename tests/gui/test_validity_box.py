"""Validity notes in the window: History's run view shows a stored run's notes in a box above its results (a
buffered read of a small file made with the real CLI: the cache note), and a quiet line for a run with none."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.model import planfile
from app.model.plan import SpecLine
from app.ui.main_window import MainWindow
from tests.helpers import grid, spec

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")]


def cli_run(tmp: Path, db: Path, *, direct: bool, engine: str | None = None) -> None:
    plan = grid(1, 1, 1)
    plan.specs = [spec("S", SpecLine(4096, 100, 100, 100, 0, 1, 0, 0))]
    plan.managers[0].workers[0].targets[0].name = "T"
    plan.managers[0].workers[0].data_pattern = 2
    plan.setup.run_time = 1
    plan.setup.direct_io = direct
    path = tmp / f"plan-{direct}.json"
    planfile.save(plan, path)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(db),
            "run",
            str(path),
            "--map",
            f"T={tmp / 'small.dat'}",
            "--test-file-size",
            "16M",
            *(("--engine", engine) if engine else ()),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert out.returncode == 0, out.stdout + out.stderr


def open_run(window: MainWindow, qtbot, run_id: int):
    ui = window.history
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.show_history()
    view = ui.open_run(run_id)
    qtbot.waitUntil(lambda: view.data is not None and view.validity.isVisible(), timeout=15000)
    return view


def test_history_shows_a_runs_validity_notes(window: MainWindow, qtbot, tmp_path) -> None:
    db = Path(os.environ["FIOMETER_DB"])
    db.parent.mkdir(parents=True, exist_ok=True)
    cli_run(tmp_path, db, direct=False)  # run 1: buffered reads of 16 MiB
    view = open_run(window, qtbot, 1)
    assert any(
        line.startswith("Cache (step 1, on M1): buffered reads (direct=0)") for line in view.validity.lines
    )
    assert "Validity notes" in view.validity.label.text() and "What to do" in view.validity.label.text()
    shot = tmp_path / "history-validity.png"
    assert window.grab().save(str(shot))
    print(f"screenshot: {shot}")


def test_history_says_when_a_run_carries_no_note(window: MainWindow, qtbot, tmp_path) -> None:
    db = Path(os.environ["FIOMETER_DB"])
    db.parent.mkdir(parents=True, exist_ok=True)
    cli_run(tmp_path, db, direct=True, engine="null")  # nothing is read at all: no cache, no disk
    view = open_run(window, qtbot, 1)
    notes = [line for line in view.validity.lines if not line.startswith("Generator bottleneck")]
    assert notes == []  # (a busy machine may blame the generator: the null engine is all CPU)
    if not view.validity.lines:
        assert view.validity.label.text().startswith("Validity: no notes")


def test_results_tab_shows_the_notes_when_a_run_from_the_window_ends(
    window: MainWindow, qtbot, tmp_path
) -> None:
    from app.engine.run.runner import RunOptions
    from app.model.plan import Target
    from tests.gui.conftest import local_plan

    plan = local_plan(tmp_path, workers=1)
    plan.managers[0].workers[0].targets = [Target("T")]
    plan.managers[0].workers[0].data_pattern = 0  # Iometer's repeating bytes: compressible writes
    plan.specs[0].lines = [SpecLine(4096, 100, 0, 100, 0, 1, 0, 0)]
    plan.managers[0].workers[0].specs = [plan.specs[0].name]
    window.doc.replace(plan)
    window.run_control.run_options = RunOptions(
        run_time=1, file_size=8 << 20, mapping={"T": str(tmp_path / "w.dat")}
    )
    assert not window.results_tab.validity.isVisible()  # nothing to say before a run
    assert window.run_control.start_run()
    with qtbot.waitSignal(window.controller.finished, timeout=60000):
        pass
    box = window.results_tab.validity
    assert box.isVisible() and any(line.startswith("Compressible data (step 1") for line in box.lines), (
        box.lines
    )
    shot = tmp_path / "results-validity.png"
    assert window.grab().save(str(shot))
    print(f"screenshot: {shot}")


def test_test_setup_starts_a_load_search_and_history_shows_its_answer(
    window: MainWindow, qtbot, tmp_path
) -> None:
    """The curve from the window, on the null engine (p99 well under 1 ms): every load keeps a 50 ms limit, so
    the search climbs to the highest load allowed and confirms it."""
    from app.engine.run.runner import RunOptions
    from app.model.plan import Target
    from app.store import get_run, open_store
    from tests.gui.conftest import local_plan

    plan = local_plan(tmp_path, workers=1)
    plan.managers[0].workers[0].targets = [Target("T")]
    window.doc.replace(plan)
    window.run_control.run_options = RunOptions(
        run_time=1, engine="null", file_size=8 << 20, mapping={"T": str(tmp_path / "n.dat")}
    )
    box = window.setup_tab.curve_box
    box.p99.setValue(50.0)
    box.max_load.setValue(16)
    with qtbot.waitSignal(window.controller.finished, timeout=120000) as finished:
        box.start.click()
    assert finished.args == ["complete"]
    rec = window.controller.run_end
    with open_store(Path(os.environ["FIOMETER_DB"])) as store:
        run = get_run(store, rec.run_id)
    from app.analysis.curve import curve_of

    (result,) = curve_of(run)
    assert result.answer_load == 16 and result.steps_measured <= 8 and result.confirmation is not None
    assert "at QD 16 with p99" in result.sentence()
    shot = tmp_path / "setup-curve.png"
    qtbot.wait(300)  # the run's last signals land before the window is painted
    window.tabs.setCurrentIndex(3)  # Test Setup, where the search was started
    qtbot.wait(100)
    assert window.grab().save(str(shot))
    print(f"screenshot: {shot}")
