"""Sweep curves: the knee rule, the load axis, and grouping two-dimension sweeps into one line per outer value."""

from app.analysis.sweep import Sweep, SweepPoint, find_sweeps
from app.analysis.sweep_curves import families, sweep_families
from app.report.charts import draw, to_svg
from app.report.sweep_charts import family_charts
from tests.unit.test_sweep import _run, _step


def _pts(rows: list[tuple[int, float, float]], bs: int = 8192) -> list[SweepPoint]:
    return [
        SweepPoint(i, load, load, iops, iops * bs / 1e6, lat, lat * 3)
        for i, (load, iops, lat) in enumerate(rows)
    ]


def test_knee_is_the_point_of_most_iops_per_ms():
    # IOPS per ms: 1000, 1810, 3182, 1636 -> QD 4
    sweep = Sweep("S", "queue_depth", _pts([(1, 1000, 1.0), (2, 1900, 1.05), (4, 3500, 1.1), (8, 3600, 2.2)]))
    assert sweep.knee is not None and sweep.knee.load == 4


def test_one_noisy_point_does_not_place_the_knee():
    # QD 2 is a dip (response time grew faster than IOPS from QD 1), yet load keeps paying up to QD 16
    rows = [(1, 1000, 1.0), (2, 900, 1.2), (4, 3000, 1.3), (8, 6000, 1.4), (16, 9000, 1.6), (32, 9500, 3.3)]
    assert Sweep("S", "queue_depth", _pts(rows)).knee.load == 16


def test_no_knee_while_the_last_point_is_still_the_best():
    assert Sweep("S", "queue_depth", _pts([(1, 1000, 1.0), (2, 2000, 1.0), (4, 4000, 1.1)])).knee is None


def test_a_transfer_size_sweep_judges_the_knee_on_mb_per_s():
    # IOPS fall as transfers grow (IOPS per ms falls from the first point); MB/s per ms peaks at 64 KiB
    pts = [
        SweepPoint(i, bs, 16, iops, iops * bs / 1e6, lat, None)
        for i, (bs, iops, lat) in enumerate(
            [(4096, 20000, 0.8), (16384, 19000, 0.84), (65536, 15000, 1.06), (262144, 4000, 4.0)]
        )
    ]
    sweep = Sweep("S", "transfer_size", pts)
    assert sweep.throughput == "mbps" and sweep.knee.load == 65536


def test_load_axis_is_log2_where_the_load_doubles_and_linear_otherwise():
    steps = [
        _step(i, "8192,100,100,100,0,1,8192,0", qd, 1000 * qd, 1.0) for i, qd in enumerate((1, 2, 4, 8, 64))
    ]
    (fam,) = sweep_families(_run(steps))
    assert fam.log2 and fam.ticks() == [(1.0, "1"), (2.0, "2"), (4.0, "4"), (8.0, "8"), (64.0, "64")]
    assert fam.x_title == "queue depth (outstanding I/Os per target), logarithmic"
    linear = [
        _step(i, "8192,100,100,100,0,1,8192,0", qd, 1000 * qd, 1.0) for i, qd in enumerate(range(1, 31))
    ]
    (fam,) = sweep_families(_run(linear))
    assert not fam.log2 and fam.x_title == "queue depth (outstanding I/Os per target)"
    ticks = [v for v, _ in fam.ticks()]
    assert len(ticks) <= 13 and ticks[0] == 1 and ticks[-1] == 30
    sizes = [
        _step(i, f"{s},100,100,100,0,1,{s},0", 16, 1000, 1.0, name=f"{s}")
        for i, s in enumerate((2048, 4096, 8192))
    ]
    (fam,) = sweep_families(_run(sizes))
    assert (
        fam.dimension == "transfer_size"
        and fam.log2
        and [t for _, t in fam.ticks()] == ["2 KiB", "4 KiB", "8 KiB"]
    )


def test_transfer_size_by_queue_depth_is_one_family_with_a_line_per_size():
    steps, i = [], 0
    for bs in (4096, 16384, 65536):
        for qd in (1, 2, 4):
            steps.append(
                _step(i, f"{bs},100,100,100,0,1,{bs},0", qd, 1000 * qd, 0.5 * qd, name=f"{bs // 1024}k read")
            )
            i += 1
    steps.append(_step(i, "1048576,100,0,100,0,1,0,0", 1, 100, 5.0, name="seq"))  # another shape
    steps.append(_step(i + 1, "1048576,100,0,100,0,1,0,0", 8, 300, 9.0, name="seq"))
    sweeps = find_sweeps(_run(steps))
    assert [s.dimension for s in sweeps] == ["queue_depth"] * 4
    fam, seq = families(sweeps)
    assert fam.dimension == "queue_depth" and fam.outer == "transfer_size"
    assert [ln.label for ln in fam.lines] == ["4 KiB", "16 KiB", "64 KiB"]
    assert fam.title == "4k read \u2026 64k read over queue depth, by transfer size"
    assert [ln.series("iops") for ln in fam.lines][1] == [
        (1.0, 1000.0),
        (2.0, 2000.0),
        (4.0, 3000.0 + 1000.0),
    ]
    assert (
        seq.outer is None and [ln.label for ln in seq.lines] == [""] and seq.title == "seq over queue depth"
    )


def test_worker_sweeps_at_two_queue_depths_are_one_family_by_queue_depth():
    steps = [
        _step(i, "8192,100,100,100,0,1,8192,0", qd, 1000 * w, 1.0, workers=w)
        for i, (qd, w) in enumerate([(1, 1), (1, 2), (1, 4), (8, 1), (8, 2), (8, 4)])
    ]
    (fam,) = sweep_families(_run(steps))
    assert (
        fam.dimension == "workers"
        and fam.outer == "queue_depth"
        and [ln.label for ln in fam.lines] == ["QD 1", "QD 8"]
    )


def test_report_charts_of_a_family_mark_the_knee_where_it_is():
    sweep = Sweep(
        "S",
        "queue_depth",
        _pts([(1, 1000, 1.0), (2, 1900, 1.05), (4, 3500, 1.1), (8, 3600, 2.2)]),
        {"transfer_size": 8192},
    )
    (fam,) = families([sweep])
    charts = family_charts(fam, "k")
    assert [c.key for c in charts] == ["k-iops", "k-mbps", "k-lat", "k-knee"]
    iops, mbps, lat, knee = charts
    assert iops.x_log2 and [m.caption for m in iops.marks] == ["knee: QD 4"] and not mbps.marks
    assert [s.label for s in lat.series] == ["average", "p99"] and lat.series[1].dash
    assert knee.series[0].points == [(1000, 1.0), (1900, 1.05), (3500, 1.1), (3600, 2.2)]
    assert (knee.marks[0].x, knee.marks[0].y) == (3500, 1.1)
    svg = to_svg(draw(knee, 640))
    assert "knee: QD 4" in svg and 'stroke-dasharray="4 3"' in svg
