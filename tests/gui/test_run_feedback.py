"""Issue 38.5: the live view names the running step's access specification and load; a load search shows
each load it measured with its p99 against the limit, ends with a result panel, and History opens the run
at its answer. Real runs on the null engine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.analysis.curve import curve_of
from app.engine.run.curve_runner import QUEUE_DEPTH, WORKERS, load_words, probe_line
from app.engine.run.curve_search import Probe
from app.engine.run.runner import RunOptions
from app.model.plan import SpecLine, Target
from app.store import get_run, open_store
from app.ui.main_window import MainWindow
from app.ui.run.run_feedback import SEARCH_TAB
from tests.gui.conftest import local_plan


def test_probe_lines_say_the_load_its_p99_against_the_limit_and_what_comes_next() -> None:
    kept = probe_line("4K read", QUEUE_DEPTH, 5.0, Probe(16, 3.214, 12345.4, 48.2), 64)
    assert kept == (
        "4K read: QD 16, p99 3.21 ms ≤ 5 ms, within the limit (12,345 IOPS, 48.2 MB/s); next: QD 64"
    )
    broke = probe_line("4K read", QUEUE_DEPTH, 5.0, Probe(64, 7.9, 20000, 80), 32)
    assert "QD 64, p99 7.9 ms > 5 ms, over the limit" in broke and broke.endswith("next: QD 32")
    none = probe_line("4K read", WORKERS, 0.5, Probe(1, None, 0, 0), None)
    assert "1 worker, no p99 (no I/O completed), over the limit of 0.5 ms" in none
    assert none.endswith("the search of this specification is done")
    again = probe_line("4K read", QUEUE_DEPTH, 5, Probe(12, 4.0, 1, 1, confirm=True), None)
    assert again.startswith("4K read: QD 12 again, to confirm the answer, p99 4 ms ≤ 5 ms")
    assert load_words(WORKERS, 4) == "4 workers"


def two_spec_plan(tmp_path: Path):
    plan = local_plan(tmp_path, workers=1, specs=("Small reads", "Big writes"))
    plan.specs[1].lines = [SpecLine(65536, 100, 0, 0, 0, 1, 65536, 0)]
    plan.managers[0].workers[0].queue_depth = 8
    return plan


@pytest.mark.fio
def test_the_live_view_names_the_running_steps_spec_and_load(
    window: MainWindow, qtbot, tmp_path: Path
) -> None:
    window.doc.replace(two_spec_plan(tmp_path))
    window.resize(1366, 705)
    window.run_control.run_options = RunOptions(engine="null", run_time=2, ramp_up=0, file_size=8 << 20)
    now = window.results_tab.now
    assert not now.isVisible()  # nothing runs yet
    assert window.run_control.start_run()
    qtbot.waitUntil(
        lambda: now.text() == "Running: Step 1 of 2: Small reads — QD 8, 1 worker, 1 target", timeout=20000
    )
    assert now.isVisible() and now.toolTip() == now.text()
    qtbot.waitUntil(lambda: now.text().startswith("Running: Step 2 of 2: Big writes — QD 8"), timeout=20000)
    assert window.status_step.text() == "Step 2/2"  # the status bar says the same step at the same time
    window.grab().save(str(tmp_path / "now-line.png"))
    qtbot.waitUntil(lambda: not window.controller.running, timeout=30000)
    assert now.text() == "Run complete — last: Step 2 of 2: Big writes — QD 8, 1 worker, 1 target"


@pytest.mark.fio
def test_a_load_search_shows_each_load_against_the_limit_then_its_answer_here_and_in_history(
    window: MainWindow, qtbot, tmp_path: Path
) -> None:
    """The null engine's p99 is far under 50 ms: every load keeps it, the search climbs to the highest load
    allowed (16) and confirms it."""
    plan = local_plan(tmp_path, workers=1)
    plan.managers[0].workers[0].targets = [Target("T")]
    window.doc.replace(plan)
    window.resize(1366, 705)  # a laptop's maximised window: the panel beside the statistics
    window.run_control.run_options = RunOptions(
        run_time=1, engine="null", file_size=8 << 20, mapping={"T": str(tmp_path / "n.dat")}
    )
    box = window.results_tab.load_search
    setup = window.setup_tab.curve_box
    setup.p99.setValue(50.0)
    setup.max_load.setValue(16)
    with qtbot.waitSignal(window.controller.finished, timeout=120000) as finished:
        setup.start.click()
        qtbot.waitUntil(lambda: box.isVisible() and "measuring the first load" in box.summary.text())
        qtbot.waitUntil(lambda: window.results_tab.now.text().startswith("Running: Step 1 of at most "))
    assert finished.args == ["complete"]
    with open_store(Path(os.environ["FIOMETER_DB"])) as store:
        (result,) = curve_of(get_run(store, window.controller.run_end.run_id))
    loads = [p for p in result.points]
    # one line per measured load, in the order measured, each with its p99 against the limit
    assert len(box.lines) == len(loads) >= 2
    for line, p in zip(box.lines, loads, strict=True):
        assert line.startswith(f"S: QD {p.load}{' again, to confirm the answer' if p.confirm else ''}, p99 ")
        assert "ms ≤ 50 ms, within the limit" in line
    assert box.lines[-1].endswith("the search of this specification is done")
    said = [window.messages.item(i).text() for i in range(window.messages.count())]
    assert sum("Load search: S: QD" in t for t in said) == len(loads)
    # the result panel: open, the answer in words, the loads measured below it
    assert box.is_open and box.label.isVisible()
    assert box.summary.text() == f"Load search result: {result.sentence()}"
    assert result.sentence() in box.label.text() and "at QD 16 with p99" in result.sentence()
    assert box.label.text().count("✓") == len(loads)  # each load measured, against the limit
    window.grab().save(str(tmp_path / "load-search-result.png"))

    # History opens the run at its answer
    ui = window.history
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.show_history()
    view = ui.open_run(window.controller.run_end.run_id)
    qtbot.waitUntil(lambda: view.search_answer is not None, timeout=10000)
    assert view.views.tabText(view.views.currentIndex()) == SEARCH_TAB
    assert result.sentence() in view.search_answer.text()
    assert view.search_answer.text().count("<tr>") == 1 + len(loads)  # a row per load measured
    assert "Queue depth" in view.search_answer.text() and "≤ 50 ms" in view.search_answer.text()
    qtbot.wait(100)
    window.grab().save(str(tmp_path / "history-search-answer.png"))

    # an ordinary run afterwards: no load search panel
    window.run_control.run_options = RunOptions(
        run_time=1, engine="null", file_size=8 << 20, mapping={"T": str(tmp_path / "n.dat")}
    )
    with qtbot.waitSignal(window.controller.finished, timeout=60000):
        assert window.run_control.start_run()
        assert not window.results_tab.now.isVisible()  # the last run's step is not said for this one
    assert not box.isVisible() and window.results_tab.now.text().startswith(
        "Run complete — last: Step 1 of 1"
    )
