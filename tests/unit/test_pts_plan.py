"""The PTS plan (app.model.pts): each test's stimuli and tracking stimulus, the client and enterprise settings,
and the purge's refusals that need no device (app.engine.guards.purge)."""

from __future__ import annotations

import pytest

from app.engine.guards.purge import NOT_PURGED, PurgeRefused, check_purge, purge
from app.model.pts import FULL_RANDOM, TEST, PtsSetup, build_plan

GiB = 1 << 30


def threads_of(plan):
    return plan.managers[0].workers[1:]


@pytest.mark.parametrize(
    "variant, threads, qd, sectors",
    [("enterprise", 4, 32, GiB // 512), ("client", 2, 16, GiB * 3 // 4 // 512)],
)
def test_variant_settings(variant, threads, qd, sectors):
    plan = build_plan(PtsSetup("/dev/x", "iops", variant), GiB, 512)
    ws = threads_of(plan)
    assert len(ws) == threads and {w.queue_depth for w in ws} == {qd}
    assert {w.max_size for w in ws} == {sectors}  # the active range
    assert all(w.data_pattern == FULL_RANDOM for w in plan.managers[0].workers)
    fill = plan.managers[0].workers[0]
    assert fill.max_size == GiB // 512 and plan.setup.precondition.fill_passes == 2  # twice the capacity


def test_the_iops_test_is_7_mixes_by_8_sizes_tracking_4k_random_write():
    d = TEST["iops"]
    assert len(d.stimuli) == 56
    assert sorted({s.reads for s in d.stimuli}) == [0, 5, 35, 50, 65, 95, 100]
    assert sorted({s.size for s in d.stimuli}) == [512, 4096, 8192, 16384, 32768, 65536, 131072, 1 << 20]
    t = d.stimuli[d.tracking]
    assert (t.reads, t.size, t.random) == (0, 4096, True) and d.variable == "iops"


def test_tests_track_their_variable_and_latency_runs_at_qd1_one_thread():
    assert TEST["throughput"].stimuli[TEST["throughput"].tracking].size == 1 << 20
    assert not TEST["throughput"].stimuli[0].random and TEST["throughput"].variable == "mbps"
    assert TEST["latency"].variable == "lat_ms" and len(TEST["latency"].stimuli) == 9
    plan = build_plan(PtsSetup("/dev/x", "latency", "enterprise"), GiB, 4096)
    assert [w.queue_depth for w in threads_of(plan)] == [1]
    wsat = build_plan(PtsSetup("/dev/x", "wsat", "client"), GiB, 512)
    assert wsat.setup.precondition.fill_passes == 0 and not TEST["wsat"].stops_when_steady


def test_scaled_preconditioning_and_the_tracking_stimulus_alone():
    s = PtsSetup("/dev/x", "iops", "client", stimulus_set="tracking", precondition_scale=0.25, round_time=2)
    plan = build_plan(s, 64 << 20, 512)
    assert plan.managers[0].workers[0].max_size == (16 << 20) // 512 and plan.setup.run_time == 2
    assert [sp.name for sp in plan.specs] == ["PTS 4 KiB random R/W 0/100"] and s.tracking_index() == 0


def test_purge_refuses_files_and_unknown_methods_and_none_is_recorded(tmp_path):
    f = tmp_path / "file.img"
    f.write_bytes(b"x" * 4096)
    with pytest.raises(PurgeRefused, match="not a raw block device"):
        check_purge(str(f), "blkdiscard", {str(f)})
    with pytest.raises(PurgeRefused, match="choose one of none, blkdiscard, blkdiscard-secure"):
        check_purge(str(f), "shred", {str(f)})
    check_purge(str(f), "none", set())
    done = purge(str(f), "none")
    assert done.ok and done.outcome == NOT_PURGED and "none: not purged" in done.sentence()
    assert f.read_bytes() == b"x" * 4096
