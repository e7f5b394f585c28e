"""A stored run's response time distribution in History, on a run the real CLI made with real fio: read only
when its tab is shown, the histogram's total and percentiles are the stored results', the heat map has a column
per interval, and a worker (whose interval histograms are not kept) says so in place of the heat map."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from app.analysis.latency_distribution import MARKERS
from app.model.units import format_latency
from app.store import open_store, step_samples
from app.ui.history.latency_view import LatencyView
from app.ui.history.run_view import RunView
from app.ui.main_window import MainWindow
from tests.gui.conftest import local_plan, plan_file

pytestmark = pytest.mark.fio


@pytest.fixture(scope="module")
def fio_db(tmp_path_factory) -> Path:
    """Two steps of two workers on real test files (fio's psync engine), one sample a second, stored by the
    real CLI."""
    tmp = tmp_path_factory.mktemp("latency-run")
    plan = plan_file(tmp, local_plan(tmp, workers=2, specs=("Seq read", "Rand read")))
    db = tmp / "cli.db"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(db),
            "run",
            str(plan),
            "--run-time",
            "3",
            "--test-file-size",
            "4M",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert out.returncode == 0, out.stderr
    return db


def open_view(window: MainWindow, qtbot, db: Path) -> RunView:
    target = Path(os.environ["FIOMETER_DB"])
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(db, target)
    ui = window.history
    with qtbot.waitSignal(ui.list.loaded, timeout=10000):
        ui.show_history()
    view = ui.open_run(1)
    qtbot.waitUntil(lambda: view.data is not None, timeout=10000)
    return view


def show_tab(view: RunView, qtbot) -> LatencyView:
    with qtbot.waitSignal(view.latency.loaded, timeout=15000):
        view.views.setCurrentWidget(view.latency)
    return view.latency


def all_result(run, step):
    return next(r.metrics for r in step.results if r.level == "all")


def test_distribution_of_a_real_run(window: MainWindow, qtbot, fio_db: Path) -> None:
    view = open_view(window, qtbot, fio_db)
    # opening the run reads no histogram: the view waits for its tab
    qtbot.waitUntil(lambda: not view.tasks.busy, timeout=10000)
    assert view.views.currentIndex() == 0  # the charts over time
    assert view.latency.shown is None and view.latency._asked is None and view.latency.request is not None
    assert view.since_start.isEnabled()
    lat = show_tab(view, qtbot)
    run = view.data.run
    # Show and Step choose what it shows; Each interval / Since step start are the charts' alone
    assert view.scope.isEnabled() and view.step.isEnabled() and not view.since_start.isEnabled()
    # every step (the view opens on All steps): all I/Os of the run, both steps' results added up
    h = lat.shown.histogram
    ios = sum(
        sum(m.read_hist.values()) + sum(m.write_hist.values())
        for m in (all_result(run, s) for s in run.steps)
    )
    assert h is not None and h.total == ios > 0
    assert h.share_pct.sum() == pytest.approx(100.0)
    assert (
        lat.hist_stack.currentWidget() is lat.hist_widget
        and lat.heat_stack.currentWidget() is lat.heat_widget
    )
    bars = [i for i in lat.hist_plot.items if i.__class__.__name__ == "BarGraphItem"]
    assert len(bars) == 1 and list(bars[0].opts["height"]) == list(h.share_pct)

    # one step: p50, p99 and p99.9 are the results table's (fio's rule), named in the legend
    with qtbot.waitSignal(lat.loaded, timeout=15000):
        view.step.setCurrentIndex(1)
    first = run.steps[0]
    m = all_result(run, first)
    h = lat.shown.histogram
    assert h.total == sum(m.read_hist.values()) + sum(m.write_hist.values())
    for p in MARKERS:
        assert h.percentile_ms(p) == m.percentile_ms(p)
    legend = [label.text for _sample, label in lat.hist_legend.items]
    assert legend == [f"p{p:g} {format_latency(h.percentiles_ns[p])}" for p in MARKERS]
    assert f"{h.total:,} I/Os" in lat.hist_plot.titleLabel.text
    # the heat map: a column per interval kept (a sample a second), each column's shares adding up to 100 %
    heat = lat.shown.heat
    with open_store(os.environ["FIOMETER_DB"]) as store:
        samples = step_samples(store, first.id, "all", "ALL")
    with_io = [t for t, s in samples if s.ios > 0]
    columns = np.nansum(heat.share_pct, axis=1)
    assert heat.samples >= len(with_io) >= 2
    # fio's last report, a sliver after the last whole interval, shares that interval's column
    assert np.count_nonzero(columns > 99.9) >= len(with_io) - 1
    assert columns[columns > 0] == pytest.approx(np.full(np.count_nonzero(columns > 0), 100.0), abs=1e-3)
    img = lat.image.image
    assert img is not None and img.shape == heat.share_pct.shape
    assert lat.heat_plot.getAxis("bottom").labelText == "time since the step started (s)"

    # a worker: its step histogram, and in place of the heat map why there is none
    titles = [view.scope.itemText(i) for i in range(view.scope.count())]
    with qtbot.waitSignal(lat.loaded, timeout=15000):
        view.scope.setCurrentIndex(titles.index(next(t for t in titles if t.startswith("    "))))
    assert lat.shown.histogram is not None and lat.shown.heat is None
    assert lat.heat_stack.currentWidget() is lat.heat_missing
    assert "kept for All Managers and each manager" in lat.heat_missing.text()

    # View > Theme > Dark re-themes it, shown or not
    from app.ui import theme

    view.views.setCurrentIndex(0)
    window.set_theme(theme.DARK)
    assert lat.hist_widget.backgroundBrush().color().lightness() < 60
    window.set_theme(theme.LIGHT)
    assert lat.hist_widget.backgroundBrush().color().lightness() > 200
    view.views.setCurrentWidget(lat)

    # back on the charts, a change of step reads nothing until the tab is shown again
    view.views.setCurrentIndex(0)
    view.step.setCurrentIndex(2)
    qtbot.wait(200)
    assert lat.shown.request.step_id == first.id and not view.tasks.busy
    show_tab(view, qtbot)
    assert lat.shown.request.step_id == run.steps[1].id


def test_quick_changes_show_the_last_choice(window: MainWindow, qtbot, fio_db: Path) -> None:
    view = open_view(window, qtbot, fio_db)
    lat = show_tab(view, qtbot)
    # scope and step changed before the first answers arrive: only the last request is drawn
    view.step.setCurrentIndex(1)
    view.step.setCurrentIndex(2)
    qtbot.waitUntil(
        lambda: (
            lat.shown is not None
            and lat.shown.request.step_id == view.step.currentData()
            and not view.tasks.busy
        ),
        timeout=15000,
    )
    assert lat.shown.request.step_id == view.data.run.steps[1].id
    assert lat.notice.text().startswith("All Managers, this step")


def test_why_there_is_no_heat_map_names_the_right_cause() -> None:
    """A manager's level of a run that kept no interval histograms is not told to choose a manager."""
    from app.ui.history.latency_view import Request, heat_missing_text

    manager = Request((("manager", "M1", "M1"),), "Manager M1", None)
    worker = Request((("worker", "M1", "w1"),), "M1 / Worker 1", None)
    assert "kept no response times interval by interval for Manager M1" in heat_missing_text(
        manager, False, "every step"
    )
    assert "choose one of those in Show" not in heat_missing_text(manager, False, "every step")
    assert "kept for All Managers and each manager, not for M1 / Worker 1" in heat_missing_text(
        worker, False, "every step"
    )
    assert (
        heat_missing_text(manager, True, "this step")
        == "No I/O completed in any interval of Manager M1 in this step."
    )


def test_the_colour_bars_name_is_whole_and_in_the_texts_colour(
    window: MainWindow, qtbot, fio_db: Path
) -> None:
    """Issue 38: at 150 % of 1920x1080 (1280x657 logical) the colour bar's name was cut off and pyqtgraph's
    faint grey. Measured: the name's length against the bar's height, in both themes."""
    from PySide6.QtGui import QPalette

    from app.ui import theme
    from app.ui.history.latency_view import COLORBAR_LABEL

    window.resize(1280, 657)
    window.messages_dock.show()
    view = open_view(window, qtbot, fio_db)
    lat = show_tab(view, qtbot)
    titles = [view.scope.itemText(i) for i in range(view.scope.count())]
    with qtbot.waitSignal(lat.loaded, timeout=15000):
        view.scope.setCurrentIndex(titles.index("Manager M1"))
    assert lat.heat_stack.currentWidget() is lat.heat_widget
    qtbot.wait(100)
    name = lat.colorbar.getAxis("left")
    for mode in (theme.DARK, theme.LIGHT):
        window.set_theme(mode)
        qtbot.wait(50)
        assert name.label.toPlainText().strip() == COLORBAR_LABEL
        assert name.label.boundingRect().width() <= name.geometry().height(), (
            name.label.boundingRect().width(),
            name.geometry().height(),
        )
        text = window.palette().color(QPalette.ColorRole.Text)
        assert name.labelStyle["color"] == text.name() and text.name() in name.label.toHtml(), mode
