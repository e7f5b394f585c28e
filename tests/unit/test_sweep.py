"""Sweep summaries: which steps form a sweep, its maxima, and the knee rule."""

from app.analysis.sweep import Sweep, SweepPoint, find_sweeps
from app.model.metrics import Metrics
from app.store.records import ResultRow, Run, StepInfo


def _metrics(ios: int, bs: int, lat_ms: float, seconds: float = 1.0) -> Metrics:
    return Metrics(
        seconds=seconds,
        read_ios=ios,
        read_bytes=ios * bs,
        read_iops=ios / seconds,
        read_bps=ios * bs / seconds,
        read_lat_sum_ns=ios * lat_ms * 1e6,
        read_lat_n=ios,
        read_lat_max_ns=lat_ms * 2e6,
    )


def _step(
    index: int,
    spec_text: str,
    qd: int,
    ios: int,
    lat_ms: float,
    workers: int = 1,
    name: str = "S",
    status: str = "complete",
) -> StepInfo:
    bs = int(spec_text.split(",")[0])
    return StepInfo(
        index,
        1,
        index,
        name,
        spec_text,
        qd,
        [["m", f"w{i}"] for i in range(workers)],
        [["m", f"t{i}"] for i in range(workers)],
        0,
        1,
        "",
        "",
        status,
        results=[ResultRow(None, "all", "ALL", _metrics(ios, bs, lat_ms))],
    )


def _run(steps: list[StepInfo]) -> Run:
    return Run(1, "u", "r", "", "complete", "", "", "p", "", "", [], len(steps), steps=steps)


RND8K = "8192,100,100,100,0,1,8192,0"


def test_queue_depth_sweep_gives_maxima_with_their_load_point():
    steps = [
        _step(i, RND8K, qd, ios, lat)
        for i, (qd, ios, lat) in enumerate([(1, 1000, 1.0), (2, 1900, 1.05), (4, 3500, 1.1), (8, 3600, 2.2)])
    ]
    (sweep,) = find_sweeps(_run(steps))
    assert sweep.dimension == "queue_depth" and [p.load for p in sweep.points] == [1, 2, 4, 8]
    assert sweep.max_iops.load == 8 and round(sweep.max_iops.iops) == 3600
    assert sweep.max_mbps.load == 8
    assert sweep.knee is not None and sweep.knee.load == 4  # 4 -> 8: +2.9 % IOPS for +100 % latency
    text = sweep.summary()
    assert text[0] == "S: maximum IOPS 3,600 at QD 8 (average response 2.2 ms)"
    assert text[1] == f"S: maximum MB/s {3600 * 8192 / 1e6:,.1f} at QD 8"
    assert text[2].startswith("S: knee at QD 4")


def test_no_knee_while_load_still_pays():
    pts = [SweepPoint(i, qd, qd, 1000.0 * qd, 8.0 * qd, 1.0 + i, None) for i, qd in enumerate((1, 2, 4))]
    assert Sweep("S", "queue_depth", pts).knee is None


def test_block_size_sweep_and_separate_specs():
    sizes = [2048, 4096, 8192]
    steps = [
        _step(i, f"{s},100,100,100,0,1,{s},0", 16, 1000, 1.0, name=f"{s} read") for i, s in enumerate(sizes)
    ]
    steps.append(_step(3, "1048576,100,100,0,0,1,0,0", 16, 50, 5.0, name="seq"))  # another shape: no sweep
    (sweep,) = find_sweeps(_run(steps))
    assert sweep.dimension == "transfer_size" and [p.load for p in sweep.points] == sizes
    assert sweep.max_mbps.load == 8192 and sweep.label == "2048 read … 8192 read"
    assert sweep.max_mbps.at("transfer_size") == "8 KiB"


def test_worker_sweep_and_failed_steps_left_out():
    steps = [_step(i, RND8K, 4, 1000 * w, 1.0, workers=w) for i, w in enumerate((1, 2, 4))]
    steps.append(_step(3, RND8K, 4, 0, 0.0, workers=8, status="failed"))
    (sweep,) = find_sweeps(_run(steps))
    assert sweep.dimension == "workers" and [p.load for p in sweep.points] == [1, 2, 4]
    assert sweep.max_iops.at("workers") == "4 workers"


def test_fixed_steps_make_no_sweep():
    assert (
        find_sweeps(_run([_step(0, RND8K, 4, 1000, 1.0), _step(1, "4096,100,0,0,0,1,0,0", 4, 10, 1.0)])) == []
    )
