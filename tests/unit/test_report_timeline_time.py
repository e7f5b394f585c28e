"""Honest time on the report's per-second charts: lines start at the step's first I/O (test-file layout before
it is not measured time) and the axis ends where the step really ended, not at its run-time limit."""

from __future__ import annotations

from app.model.metrics import Metrics
from app.report.timeline import io_start


def window(seconds: float) -> Metrics:
    return Metrics(seconds=seconds, read_ios=100)


def test_layout_before_the_first_io_is_taken_off():
    # first interval ends 4.6 s after the step started and covers 1 s: 3.6 s went to laying out the file
    assert io_start([(4.6, window(1.0)), (5.6, window(1.0))]) == 4.6 - 1.0


def test_a_step_that_starts_at_once_is_left_as_it_is():
    assert io_start([(1.2, window(1.0)), (2.2, window(1.0))]) == 0.0


def test_the_axis_ends_at_the_steps_real_length(tmp_path):
    from app.analysis.run_groups import load_side
    from app.report.timeline import timeline_charts
    from app.store.database import open_store
    from app.store.recorder import Recorder
    from tests.stored_runs import BEFORE, RunSpec, record

    with open_store(tmp_path / "t.db") as store:
        run_id = record(store, RunSpec(BEFORE[:1], run_s=600))  # a 600 s limit ...
        step_id = store.conn.execute("SELECT id FROM steps WHERE run_id = ?", (run_id,)).fetchone()[0]
        rec = Recorder(store)
        for k in range(5):  # ... but 5 s measured, after 3 s of layout
            rec.add_samples(step_id, [(None, "all", "ALL", 3.0 + k + 1, window(1.0), window(1.0 + k))])
        side = load_side(store, [run_id])
        (chart, _lat) = timeline_charts(
            store, [("S", [(side, side.steps[0])])], {id(side): "before"}, {"before": "#000"}
        )
        assert chart.x_max == 5.0 and chart.series[0].points[0][0] == 1.0  # 5 s, from the first I/O


def test_layout_time_is_reported_apart_in_the_disclosure(tmp_path):
    from app.report.document import build_report
    from app.store.database import open_store
    from app.store.recorder import Recorder
    from tests.stored_runs import AFTER, BEFORE, RunSpec, record

    with open_store(tmp_path / "t.db") as store:
        ids = [
            record(store, RunSpec(BEFORE[:1], tags=["before"])),
            record(store, RunSpec(AFTER[:1], tags=["after"])),
        ]
        for run_id, layout in zip(ids, (3.0, 0.0), strict=True):
            step_id = store.conn.execute("SELECT id FROM steps WHERE run_id = ?", (run_id,)).fetchone()[0]
            for k in range(3):
                Recorder(store).add_samples(
                    step_id, [(None, "all", "ALL", layout + k + 1, window(1.0), window(1.0 + k))]
                )
        d = build_report(store, [ids[0]], [[ids[1]]]).disclosure
    assert any(
        x.startswith("Run 1 (before), step 1: 3.0 s of test-file layout before the first I/O") for x in d
    )
    assert not any(x.startswith("Run 2 (after), step 1:") for x in d)
