import copy
import math

import pytest

from app.engine.sampling.telemetry import JobTracker, StepTelemetry, completed_ios
from app.model.metrics import hist_percentile
from tests.fio_fixtures import documents, snapshots

TWO = {"plain": ("m", "w1", "t1"), "ramped": ("m", "w1", "t2")}


def run(name, job_map, **kw):
    tel = StepTelemetry(job_map)
    out = [tel.update(s) for s in snapshots(name, **kw)]
    return tel, out


def job(doc, name, idx=0):
    return [j for j in doc["jobs"] if j["jobname"] == name][idx]


def of(samples, level, key):
    return next(s for s in samples if s.level == level and s.key == key)


def rel(a, b):
    return abs(a - b) / abs(b) if b else abs(a)


# --- whole step equals fio's own final numbers ------------------------------------------------------
@pytest.mark.parametrize("name,target", [("plain", "t1"), ("ramped", "t2")])
def test_whole_step_equals_fio_final_numbers(name, target):
    tel, out = run("two_jobs_ramp", TWO)
    final = job(documents("two_jobs_ramp")[-1], name)
    whole = of(out[-1], "target", target).whole
    for dd in ("read", "write"):
        d = final[dd]
        assert getattr(whole, f"{dd}_ios") == d["total_ios"]
        assert rel(getattr(whole, f"{dd}_iops"), d["iops"]) < 1e-9
        assert rel(getattr(whole, f"{dd}_bps"), d["bw_bytes"]) < 1e-3  # fio floors bw_bytes
        mean = getattr(whole, f"{dd}_lat_mean_ms") * 1e6
        assert rel(mean, d["lat_ns"]["mean"]) < 1e-9
        assert getattr(whole, f"{dd}_lat_max_ns") == d["lat_ns"]["max"]
    assert whole.seconds == final["read"]["runtime"] / 1000


def test_interval_counts_add_up_to_fio_totals():
    tel, out = run("two_jobs_ramp", TWO)
    last = documents("two_jobs_ramp")[-1]
    for name, target in (("plain", "t1"), ("ramped", "t2")):
        ivs = [of(b, "target", target).interval for b in out if any(s.key == target for s in b)]
        for dd in ("read", "write"):
            assert sum(getattr(m, f"{dd}_ios") for m in ivs) == job(last, name)[dd]["total_ios"]
            assert sum(getattr(m, f"{dd}_bytes") for m in ivs) == job(last, name)[dd]["io_bytes"]
            assert sum(getattr(m, f"{dd}_lat_n") for m in ivs) == job(last, name)[dd]["lat_ns"]["N"]


def test_interval_rates_and_means_are_differences():
    docs = documents("two_jobs_ramp")
    tel, out = run("two_jobs_ramp", TWO)
    a, b = job(docs[0], "plain")["read"], job(docs[1], "plain")["read"]
    iv = of(out[1], "target", "t1").interval
    d_ios, d_rt = b["total_ios"] - a["total_ios"], b["runtime"] - a["runtime"]
    assert iv.read_ios == d_ios
    assert iv.seconds == d_rt / 1000
    assert iv.read_iops == pytest.approx(d_ios * 1000 / d_rt)
    assert iv.read_bps == pytest.approx((b["io_bytes"] - a["io_bytes"]) * 1000 / d_rt)
    la, lb = a["lat_ns"], b["lat_ns"]
    expect = (lb["mean"] * lb["N"] - la["mean"] * la["N"]) / (lb["N"] - la["N"])
    assert iv.read_lat_mean_ms * 1e6 == pytest.approx(expect, rel=1e-9)
    # the interval is not the cumulative view
    assert iv.read_iops != pytest.approx(b["iops"], rel=1e-6)


def test_interval_percentiles_come_from_delta_of_total_latency_bins():
    docs = documents("two_jobs_ramp")
    tel, out = run("two_jobs_ramp", TWO)
    a, b = job(docs[0], "plain")["read"], job(docs[1], "plain")["read"]
    delta = {int(k): v - a["lat_ns"]["bins"].get(k, 0) for k, v in b["lat_ns"]["bins"].items()}
    delta = {k: v for k, v in delta.items() if v}
    iv = of(out[1], "target", "t1").interval
    assert iv.read_hist == delta
    assert b["clat_ns"]["bins"] != b["lat_ns"]["bins"]  # the choice matters on real output
    for p in (50, 99, 99.9):
        assert iv.percentile_ms(p, "read") == hist_percentile(delta, p) / 1e6
    assert tel.hist_sources == {"lat_ns"}
    # whole-step histogram = fio's cumulative lat_ns bins, and its percentiles are fio's
    whole = of(out[-1], "target", "t1").whole
    fin = job(docs[-1], "plain")["read"]["lat_ns"]
    assert whole.read_hist == {int(k): v for k, v in fin["bins"].items()}
    assert whole.percentile_ms(99, "read") * 1e6 == fin["percentile"]["99.000000"]


def test_completion_latency_bins_when_total_latency_has_none():
    snaps = snapshots("two_jobs_ramp")
    for s in snaps:
        for j in s.jobs:
            for dd in ("read", "write"):
                j[dd] = copy.deepcopy(j[dd])
                j[dd]["lat_ns"].pop("bins", None)
    tel = StepTelemetry(TWO)
    out = [tel.update(s) for s in snaps]
    fin = job(documents("two_jobs_ramp")[-1], "plain")["read"]
    assert of(out[-1], "target", "t1").whole.read_hist == {
        int(k): v for k, v in fin["clat_ns"]["bins"].items()
    }
    assert tel.hist_sources == {"clat_ns"}


def test_interval_max_exact_when_it_grew_else_estimated_from_the_histogram():
    docs = documents("two_jobs_ramp")
    tel, out = run("two_jobs_ramp", TWO)
    for i in range(1, len(docs)):
        prev, cur = job(docs[i - 1], "plain")["read"], job(docs[i], "plain")["read"]
        iv = of(out[i], "target", "t1").interval
        if cur["total_ios"] == prev["total_ios"]:
            assert iv.read_lat_max_ns == 0
        elif cur["lat_ns"]["max"] > prev["lat_ns"]["max"]:
            assert iv.read_lat_max_ns == cur["lat_ns"]["max"]
        else:
            assert iv.read_lat_max_ns == min(max(iv.read_hist), cur["lat_ns"]["max"])
            assert iv.read_lat_max_ns <= cur["lat_ns"]["max"]
    # the first interval's max is always exact
    assert (
        of(out[0], "target", "t1").interval.read_lat_max_ns == job(docs[0], "plain")["read"]["lat_ns"]["max"]
    )


# --- ramp, layout, resets ----------------------------------------------------------------------------
def test_no_samples_while_ramping_then_counting_restarts():
    docs = documents("two_jobs_ramp")
    tel, out = run("two_jobs_ramp", TWO)
    ramping = [i for i, d in enumerate(docs) if job(d, "ramped")["read"]["lat_ns"]["N"] == 0]
    assert ramping == [0, 1]  # the recording: 2 s of ramp
    for i in ramping:
        assert [s.key for s in out[i] if s.level == "target"] == ["t1"]
    first = of(out[2], "target", "t2").interval
    assert job(docs[2], "ramped")["read"]["total_ios"] < job(docs[1], "ramped")["read"]["total_ios"]
    assert first.read_ios == job(docs[2], "ramped")["read"]["total_ios"]  # from zero, not a difference


def test_ramp_end_without_counters_going_down():
    docs = documents("null_ramp")
    a, b = docs[0]["jobs"][0]["read"], docs[1]["jobs"][0]["read"]
    assert a["lat_ns"]["N"] == 0 and b["total_ios"] > a["total_ios"] and b["runtime"] > a["runtime"]
    tel, out = run("null_ramp", {"ramped": ("m", "w", "t")})
    assert out[0] == []
    first = of(out[1], "target", "t").interval
    assert first.read_ios == completed_ios(b) == b["lat_ns"]["N"]  # the I/Os fio completed, not submitted
    assert first.read_iops == pytest.approx(b["iops"], rel=0.01)
    total = sum(of(batch, "target", "t").interval.read_ios for batch in out[1:])
    assert total == completed_ios(docs[-1]["jobs"][0]["read"]) == docs[-1]["jobs"][0]["read"]["total_ios"]


def test_counter_going_down_resets_the_baseline():
    docs = documents("two_jobs_ramp")
    later, earlier = job(docs[3], "ramped"), job(docs[2], "ramped")
    tr = JobTracker()
    tr.update(later)
    iv, whole = tr.update(earlier)
    assert tr.resets == 1
    assert iv.read_ios == earlier["read"]["total_ios"]
    assert iv.write_bytes == earlier["write"]["io_bytes"]
    assert iv.read_hist == {int(k): v for k, v in earlier["read"]["lat_ns"]["bins"].items()}
    assert whole.read_ios == earlier["read"]["total_ios"]


def test_layout_documents_give_no_sample():
    docs = documents("layout")
    # runtime 0, yet fio 3.33 already counted a few I/Os: they land in the first interval
    assert docs[0]["jobs"][0]["read"]["runtime"] == 0
    tel, out = run("layout", {"layout": ("m", "w", "t")})
    assert out[0] == []
    assert of(out[1], "target", "t").interval.read_ios == docs[1]["jobs"][0]["read"]["total_ios"]
    assert of(out[-1], "manager", "m").whole.disk_util == max(d["util"] for d in docs[-1]["disk_util"])


def test_the_step_clock_starts_when_fio_s_io_begins_not_while_it_lays_out_files():
    """Reports 3 s apart: the first, written while fio laid out its file, is not step time."""
    docs = documents("layout")
    tel, out = run("layout", {"layout": ("m", "w", "t")}, step=3.0)
    # on fio's clock (its jobs' runtime), not the reports' arrival 3 s apart
    runtimes = [docs[i]["jobs"][0]["read"]["runtime"] / 1000.0 for i in (1, 2)]
    assert of(out[1], "target", "t").t == 0.0
    assert of(out[2], "target", "t").t == pytest.approx(runtimes[1] - runtimes[0])
    assert tel.layout_s["m"] == pytest.approx(3.0 - docs[1]["jobs"][0]["read"]["runtime"] / 1000.0)
    tel, out = run("two_jobs_ramp", TWO)  # no layout report: nothing to say
    assert of(out[0], "target", "t1").t == 0.0 and tel.layout_s == {}


# --- roll-up ----------------------------------------------------------------------------------------
def test_levels_order_and_manager_disk_util():
    tel, out = run("two_jobs_ramp", TWO)
    batch = out[3]
    assert [(s.level, s.key) for s in batch] == [
        ("target", "t1"),
        ("target", "t2"),
        ("worker", "w1"),
        ("manager", "m"),
        ("all", "ALL"),
    ]
    assert [s.worker for s in batch] == ["w1", "w1", "w1", None, None]
    assert [s.manager for s in batch] == ["m", "m", "m", "m", None]
    util = max(d["util"] for d in documents("two_jobs_ramp")[3]["disk_util"])
    manager = of(batch, "manager", "m")
    assert manager.whole.disk_util == util  # fio's own, over the step so far
    # the interval's is this window's (the busiest disk's), not the step's so far
    assert manager.interval.disk_util == max(d.interval.util_pct for d in manager.disks.disks)
    assert manager.interval.disk_util != pytest.approx(util, abs=0.5)
    assert of(batch, "target", "t1").interval.disk_util is None
    w = of(batch, "worker", "w1").whole
    t1, t2 = of(batch, "target", "t1").whole, of(batch, "target", "t2").whole
    assert w.iops == pytest.approx(t1.iops + t2.iops)
    assert w.ios == t1.ios + t2.ios
    assert w.lat_mean_ms == pytest.approx(
        (t1.read_lat_sum_ns + t2.read_lat_sum_ns + t2.write_lat_sum_ns)
        / (t1.read_lat_n + t2.read_lat_n + t2.write_lat_n)
        / 1e6
    )
    # fio's clock: the manager's slowest job's runtime less its first report's (0.863 s); the last report
    # (only the ramped job went on) gets a moment of its own, 1 ms on
    assert [b[0].t for b in out] == pytest.approx([0.0, 1.0, 2.136, 2.141, 2.142])
    assert [b[0].final for b in out] == [False] * 4 + [True]


def test_numjobs_clones_are_summed():
    docs = documents("numjobs")
    clones = [j for j in docs[-1]["jobs"] if j["jobname"] == "clones"]
    assert len(clones) == 2
    tel, out = run("numjobs", {"clones": ("m", "w", "t")})
    whole = of(out[-1], "target", "t").whole
    assert whole.ios == sum(c["read"]["total_ios"] + c["write"]["total_ios"] for c in clones)
    assert whole.iops == pytest.approx(sum(c["read"]["iops"] + c["write"]["iops"] for c in clones))
    summed = sum(of(b, "target", "t").interval.ios for b in out)
    assert summed == whole.ios


def test_all_is_the_sum_over_managers_and_final_only_when_every_manager_is():
    tel = StepTelemetry({"plain": ("A", "w", "t1"), "ramped": ("A", "w", "t2"), "b.clones": ("B", "w", "t")})
    a, b = snapshots("two_jobs_ramp", "A"), snapshots("numjobs", "B", rename="b.")
    batches = []
    for i in range(max(len(a), len(b))):
        for seq in (a, b):
            if i < len(seq):
                batches.append(tel.update(seq[i]))
    last = batches[-1]
    results = tel.final_results()
    ma = of(results, "manager", "A").whole
    mb = of(results, "manager", "B").whole
    al = of(last, "all", "ALL")
    assert al.whole.iops == pytest.approx(ma.iops + mb.iops)
    assert al.whole.bps == pytest.approx(ma.bps + mb.bps)
    assert al.whole.ios == ma.ios + mb.ios
    assert al.whole.lat_mean_ms == pytest.approx(
        (ma.read_lat_sum_ns + ma.write_lat_sum_ns + mb.read_lat_sum_ns + mb.write_lat_sum_ns)
        / (ma.read_lat_n + ma.write_lat_n + mb.read_lat_n + mb.write_lat_n)
        / 1e6
    )
    assert al.whole.percentile_ms(99) is not None
    assert al.final
    # B (3 reports) ends before A (5 reports): ALL is not final until A's final report
    b_final = next(
        batch for batch in batches if any(s.level == "manager" and s.key == "B" and s.final for s in batch)
    )
    b_all = [s for s in b_final if s.level == "all"]
    assert b_all and not any(s.final for s in b_all)


def test_final_results_lists_every_level_once():
    tel, out = run("two_jobs_ramp", TWO)
    res = tel.final_results()
    assert [(s.level, s.key) for s in res] == [
        ("target", "t1"),
        ("target", "t2"),
        ("worker", "w1"),
        ("manager", "m"),
        ("all", "ALL"),
    ]
    assert all(s.final for s in res)
    assert res[-1].whole.iops == pytest.approx(out[-1][-1].whole.iops)


def test_failed_target_shows_its_error():
    docs = documents("locked")
    assert job(docs[-1], "locked")["error"] == 1
    tel, out = run("locked", {"good": ("m", "w", "ok"), "locked": ("m", "w", "bad")})
    bad = of(out[0], "target", "bad")
    assert bad.whole.errors == 1 and bad.interval.errors == 1 and bad.whole.ios == 0
    assert of(out[1], "target", "bad").interval.errors == 0  # counted once
    assert of(out[-1], "manager", "m").whole.errors == 1


def test_unmapped_jobs_are_reported_not_counted():
    tel, out = run("two_jobs_ramp", {"plain": ("m", "w1", "t1")})
    assert ("m", "ramped") in tel.unmapped
    assert of(out[-1], "all", "ALL").whole.ios == of(out[-1], "target", "t1").whole.ios


def test_cpu_interval_is_a_percentage():
    tel, out = run("two_jobs_ramp", TWO)
    for batch in out[1:]:
        for s in batch:
            assert 0.0 <= s.interval.usr_cpu <= 100.0 and 0.0 <= s.interval.sys_cpu <= 100.0
    whole = of(out[-1], "target", "t1").whole
    assert whole.usr_cpu == job(documents("two_jobs_ramp")[-1], "plain")["usr_cpu"]


def test_repeated_final_document_gives_a_zero_length_interval():
    snaps = snapshots("sigint")
    repeat = copy.copy(snaps[-1])
    snaps[-1].final = False
    tel = StepTelemetry({"stopme": ("m", "w", "t")})
    for s in snaps:
        tel.update(s)
    out = tel.update(repeat)
    t = of(out, "target", "t")
    assert t.final and t.interval.ios == 0 and t.interval.seconds == 0
    assert t.whole.ios == documents("sigint")[-1]["jobs"][0]["read"]["total_ios"]
    assert not math.isnan(t.interval.iops)


# --- two managers -------------------------------------------------------------------------------------
def test_two_managers_reports_interleaved_each_give_their_own_samples():
    """(The runner's StepLoop feeds StepTelemetry like this, one manager's report after another's; that a
    transport breaking mid-step does not hang it: tests/integration/test_local_fio.py.)"""
    a, b = snapshots("two_jobs_ramp", "A"), snapshots("numjobs", "B", rename="b.")
    tel = StepTelemetry({"plain": ("A", "w", "t1"), "ramped": ("A", "w", "t2"), "b.clones": ("B", "w", "t")})
    batches: dict[str, list[list]] = {"A": [], "B": []}
    for i in range(max(len(a), len(b))):
        for snaps in (a, b):
            if i < len(snaps) and (out := tel.update(snaps[i])):
                batches[snaps[i].manager].append(out)
    assert (len(batches["A"]), len(batches["B"])) == (5, 3)
    assert of(batches["A"][-1], "manager", "A").final and of(batches["B"][-1], "manager", "B").final
    assert {s.manager for batch in batches["B"] for s in batch if s.level != "all"} == {"B"}
