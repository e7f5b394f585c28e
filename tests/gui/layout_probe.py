"""Issue 38: what a laptop screen shows of each view, measured. Used in-process by
tests/gui/test_readable_layout.py (1366x768) and run in a child process with QT_SCALE_FACTOR=1.5
(1920x1080 at 150 %: ``python -m tests.gui.layout_probe 1280x657 OUT_DIR`` prints the figures as JSON).

The window is put in the state the issue found cut off: Messages open with a warning, the first start's
banner, three validity notes, and a run of 1,000,000 IOPS, 10,000 MB/s and 1,000 ms responses in the
Results Display. For every chart shown: the height of its plot area that is inside the view, and whether
its x-axis is inside the view, at the page's top and once the page is scrolled to it; for the statistics
table, each cell's text width against its column's."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication, QScrollArea, QStyle, QWidget

NOTES = [
    "Cache (step 1, on M1): buffered reads (direct=0) at 1,200 MB/s, above what the device delivers; "
    "What to do: use direct I/O or a test file larger than the host's memory.",
    "Never-written data (step 1): the target was read before it was written; What to do: fill it first "
    "(Test Setup > Preconditioning).",
    "Generator bottleneck (step 2, on M1): fio used 95 % of a CPU; What to do: add workers or managers.",
]

Wait = Callable[[int], None]
WaitUntil = Callable[[Callable[[], bool]], None]


def visible_rect(w: QWidget) -> QRect:
    """The part of ``w`` (in its own coordinates) inside every widget around it: what the screen shows."""
    r = QRect(QPoint(0, 0), w.size())
    off = QPoint(0, 0)
    p = w
    while p.parentWidget() is not None:
        off += p.pos()
        p = p.parentWidget()
        r = r.intersected(QRect(-off, p.size()))
    return r


def chart_figures(pw: pg.PlotWidget) -> dict:
    vis = visible_rect(pw)
    item = pw.getPlotItem()
    vb = item.getViewBox()
    plot = pw.mapFromScene(vb.mapRectToScene(vb.boundingRect())).boundingRect()
    axis = item.getAxis("bottom")
    ax = pw.mapFromScene(axis.mapRectToScene(axis.boundingRect())).boundingRect()
    title = axis.label
    shown_title = title.isVisible() and bool(axis.labelText)
    t = pw.mapFromScene(title.mapRectToScene(title.boundingRect())).boundingRect()
    head = item.titleLabel
    h = pw.mapFromScene(head.mapRectToScene(head.boundingRect())).boundingRect()
    return {
        "chart": item.getAxis("left").label.toPlainText().strip() or item.titleLabel.text,
        "plot_px": plot.height(),
        "plot_shown_px": plot.intersected(vis).height() if vis.isValid() else 0,
        "x_axis_in_view": vis.isValid() and ax.top() >= vis.top() and ax.bottom() <= vis.bottom() + 1,
        # the time axis' title whole inside its chart (not cut off at either side)
        "x_title_whole": not shown_title or (t.left() >= -1 and t.right() <= pw.width() + 1),
        "x_title": axis.labelText,
        "x_title_shown": shown_title,  # (charts in rows share one: see ChartGrid.share_axes)
        # the chart's own title (a sweep's) and its plot inside the chart: a title wider than the chart widened
        # the plot past the chart's right edge
        "title_whole": not head.isVisible()
        or not head.text
        or (h.left() >= -1 and h.right() <= pw.width() + 1),
        "plot_inside": plot.right() <= pw.width() + 1,
    }


def charts_of(view: QWidget) -> list[pg.PlotWidget]:
    return [pw for pw in view.findChildren(pg.PlotWidget) if pw.isVisibleTo(view.window()) and pw.isVisible()]


def measure_view(view: QWidget, wait: Wait) -> list[dict]:
    """Each chart at the page's top, then scrolled to (``scrolled``)."""
    out = []
    for pw in charts_of(view):
        page = next((p for p in _ancestors(pw) if isinstance(p, QScrollArea)), None)
        if page is not None:
            page.verticalScrollBar().setValue(0)
    wait(50)
    for pw in charts_of(view):
        out.append(chart_figures(pw))
    for pw, fig in zip(charts_of(view), out, strict=True):
        page = next((p for p in _ancestors(pw) if isinstance(p, QScrollArea)), None)
        if page is not None:
            scroll_to(page, pw)
            wait(30)
        fig["scrolled"] = chart_figures(pw)
        if page is not None:
            page.verticalScrollBar().setValue(0)
    return out


def scroll_to(page: QScrollArea, w: QWidget) -> None:
    """Scroll ``page`` so that ``w`` is whole in view, or its bottom (the x-axis) where it is taller.
    (QScrollArea.ensureWidgetVisible goes by a QGraphicsView's cursor rectangle, not by the widget.)"""
    bar = page.verticalScrollBar()
    top = w.mapTo(page.widget(), QPoint(0, 0)).y()
    bottom = top + w.height()
    height = page.viewport().height()
    value = bar.value()
    if bottom > value + height:
        value = bottom - height
    if top < value and bottom - top <= height:
        value = top
    bar.setValue(value)


def _ancestors(w: QWidget) -> list[QWidget]:
    out = []
    p = w.parentWidget()
    while p is not None:
        out.append(p)
        p = p.parentWidget()
    return out


def table_figures(table) -> dict:
    """Every statistics cell: its text's width and its column's (less the cell's margins)."""
    margin = 2 * (table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table) + 1)
    fm = table.fontMetrics()
    cells = []
    for r in range(table.rowCount()):
        for c in range(table.columnCount()):
            it = table.item(r, c)
            if it is not None:
                cells.append(
                    (
                        table.verticalHeaderItem(r).text(),
                        it.text(),
                        fm.horizontalAdvance(it.text()) + margin,
                        table.columnWidth(c),
                    )
                )
    first_right = table.columnViewportPosition(0) + table.columnWidth(0)
    return {
        "cells": cells,
        "too_narrow": [c for c in cells if c[2] > c[3]],
        "first_column_in_view": first_right <= table.viewport().width(),
        "viewport_w": table.viewport().width(),
        "rows_in_view": sum(
            1
            for r in range(table.rowCount())
            if table.rowViewportPosition(r) + table.rowHeight(r) <= table.viewport().height()
        ),
        "labels_w": table.verticalHeader().width(),
    }


def big_run(live) -> None:
    """Ten seconds of a run at 1,000,000 IOPS, 10,000 MB/s and 1,000 ms average response time."""
    from app.model.metrics import Metrics
    from app.ui.history.stored_series import ReplaySample

    live.start_step(0.0, "1: 4K random 70% read")
    for t in range(1, 11):
        ios_r, ios_w = 700_000, 300_000
        m = Metrics(
            seconds=1.0,
            read_ios=ios_r * t,
            write_ios=ios_w * t,
            read_bytes=7_000_000_000 * t,
            write_bytes=3_000_000_000 * t,
            read_iops=float(ios_r),
            write_iops=float(ios_w),
            read_bps=7e9,
            write_bps=3e9,
            read_lat_sum_ns=ios_r * t * 1e9,
            write_lat_sum_ns=ios_w * t * 1e9,
            read_lat_n=ios_r * t,
            write_lat_n=ios_w * t,
            read_lat_max_ns=12_345e6,
            write_lat_max_ns=23_456e6,
            errors=1_234,
            usr_cpu=85.5,
            sys_cpu=14.5,
        )
        live.add(0.0, [ReplaySample("all", None, "ALL", float(t), m, m, final=t == 10)])


def measure_all(window, wait: Wait, wait_until: WaitUntil, size: tuple[int, int], shots: Path) -> dict:
    """Every view of the issue at ``size`` (the window's client area, logical pixels)."""
    from app.ui.history.compare_data import CompareRequest
    from tests.gui.history_support import before_after_store
    from tests.gui.test_sweep_view import sweep_run

    shots.mkdir(parents=True, exist_ok=True)
    ids = before_after_store(Path(os.environ["FIOMETER_DB"]))
    sweep = sweep_run()
    window.resize(*size)
    window.banner.show_text("Welcome to Fiometer (the first start's banner)")
    window.messages_dock.show()
    window.add_message("a warning that opened Messages", "warning")
    wait_until(lambda: window.width() == size[0])
    out: dict = {"size": list(size), "dpr": window.devicePixelRatioF()}

    def shown(view: QWidget, where: str) -> None:
        wait(150)
        window.grab().save(str(shots / f"{size[0]}x{size[1]}-{where}.png"))
        out[where] = measure_view(view, wait)

    rt = window.results_tab
    big_run(window.live)
    window.show_tab(rt)
    rt.scope.setCurrentIndex(0)  # All Managers
    rt.validity.set_lines(NOTES)
    rt.now.running("Step 1 of 4: 4K random 70% read — QD 16, 1 worker, 1 target")  # as while a run goes
    rt.redraw(force=True)
    shown(rt, "results")
    out["table"] = table_figures(rt.table)

    ui = window.history
    ui.show_history()
    wait_until(lambda: len(ui.list.model.rows) >= 3)

    def with_notes(view) -> None:
        wait_until(lambda: view.data is not None and view.validity.isVisible())
        wait_until(lambda: "computing" not in view.validity.summary.text())
        view.validity.set_lines(NOTES)

    run = ui.open_run(ids[0])
    with_notes(run)
    shown(run, "history-over-time")
    run.views.setCurrentWidget(run.latency)
    wait_until(lambda: run.latency.shown is not None)
    shown(run.latency, "history-distribution")

    swept = ui.open_run(sweep)
    with_notes(swept)
    swept.views.setCurrentWidget(swept.sweep)
    shown(swept.sweep, "history-sweep")

    compare = ui.compare(CompareRequest([ids[0]], [[ids[1]]]))
    wait_until(lambda: compare.data is not None)
    compare.inner_tabs.setCurrentIndex(compare.inner_tabs.count() - 1)  # over time
    shown(compare, "compare-over-time")
    return out


def _main(argv: list[str]) -> int:
    """A child process: ``SIZE OUT_DIR`` (e.g. 1280x657 /tmp/shots), with QT_SCALE_FACTOR set by the caller."""
    import tempfile

    size = tuple(int(v) for v in argv[0].split("x"))
    shots = Path(argv[1])
    tmp = Path(tempfile.mkdtemp(prefix="fiometer-layout-"))
    from app.ui.settings import ENV_DIR, use_settings_dir

    use_settings_dir(tmp)
    os.environ[ENV_DIR] = str(tmp)
    os.environ["FIOMETER_DB"] = str(tmp / "results.db")
    app = QApplication.instance() or QApplication([])
    from app.ui.main_window import MainWindow
    from app.ui.settings import app_settings

    win = MainWindow(app_settings())
    win.files.ask_unsaved = False
    win.close_question = lambda: "discard"  # type: ignore[method-assign]
    win.show()

    def wait(ms: int) -> None:
        end = time.monotonic() + ms / 1000
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.005)

    def wait_until(cond: Callable[[], bool], timeout: float = 15.0) -> None:
        end = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > end:
                raise TimeoutError("the view did not come")
            app.processEvents()
            time.sleep(0.005)

    figures = measure_all(win, wait, wait_until, size, shots)
    print(json.dumps(figures))
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
