"""The executive summary says in words what the numbers say: every sentence checked against the stored
numbers (worked out here from the run specs, not from the comparison), labels from tags, names or the user."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from app.report.document import ReportMeta, build_report
from app.report.tables import fmt_sig
from app.store.database import open_store
from tests.stored_runs import AFTER, BEFORE, RunSpec, StepSpec, record

FIELDS = {"iops": "iops", "mbps": "mbps", "lat_mean_ms": "avg_ms", "lat_max_ms": "max_ms", "p99_ms": "p99_ms"}


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "s.db") as s:
        yield s


def expected_finding(before: StepSpec, after: StepSpec, metric: str, load: str = "QD 64") -> str:
    """The finding for a one-load workload, worked out from the run specs."""
    field = {"iops": "iops", "mbps": "mbps"}[metric]
    b, c = getattr(before, field), getattr(after, field)
    pct = (c - b) / b * 100
    sign = "+" if pct > 0 else "\u2212"
    label = "IOPS" if metric == "iops" else "MB/s"
    return f"{before.spec}: {label} {sign}{abs(pct):,.1f} % at {load} ({fmt_sig(b)} \u2192 {fmt_sig(c)}"


def test_findings_ranked_by_size_with_load_point_and_confidence(store):
    record(store, RunSpec(BEFORE, name="EVA 4400, 32 disks Vraid5", tags=["before"]))
    record(store, RunSpec(AFTER, name="EVA 4400, 36 disks Vraid1", tags=["after"]))
    report = build_report(store, [1], [[2]])
    assert report.labels == ["before", "after"]  # the runs' tags
    (block,) = report.summary
    assert block.heading == "after (run 2) compared with before (run 1)"
    assert block.what_changed[0].startswith(
        "nothing Fiometer records"
    )  # the tags are the labels: not a change
    # Max Throughput-50%Read: IOPS 1,530 -> 5,113 (+234 %) is the largest change: first
    assert block.sentences[0].startswith(expected_finding(BEFORE[2], AFTER[2], "iops"))
    # one run each side and no per-second samples stored: never "high" from a single pair
    assert block.sentences[0].endswith(
        "; p99 \u221277.8 %); confidence medium (one run each side; too few per-second samples)."
    )
    sizes = [
        float(re.search(r" ([+\u2212][\d,.]+) %", s).group(1).replace(",", "").replace("\u2212", "-"))
        for s in block.sentences
    ]
    assert [abs(x) for x in sizes] == sorted((abs(x) for x in sizes), reverse=True)
    assert len(block.sentences) == 4 and all(" at QD 64 " in s for s in block.sentences)
    assert "5 %" in block.noise


def test_a_sweep_that_changed_the_same_way_everywhere_says_at_every_queue_depth(store):
    lines = "1048576,100,0,0,0,1,0,0"  # sequential 1 MiB write: judged by MB/s
    before = [StepSpec("Seq 1M write", 500, 500 * q, 1, 5, 2, qd=q, lines=lines) for q in (1, 4, 32)]
    after = [StepSpec("Seq 1M write", 20, 20 * q, 1, 5, 2, qd=q, lines=lines) for q in (1, 4, 32)]
    record(store, RunSpec(before, tags=["before"]))
    record(store, RunSpec(after, tags=["after"]))
    (block,) = build_report(store, [1], [[2]]).summary
    assert block.sentences[0].startswith("Seq 1M write: MB/s \u221296.0 % at every queue depth (QD 1 to 32)")


def test_what_changed_leads_and_within_noise_is_one_line(store):
    same = [StepSpec(s.spec, s.iops * 1.01, s.mbps * 1.01, s.avg_ms, s.max_ms, s.p99_ms) for s in BEFORE]
    record(store, RunSpec(BEFORE, name="old", tags=["before"]))
    record(
        store,
        RunSpec(
            same,
            name="new",
            tags=["after"],
            fio_version="3.41",
            hostname="lab2",
            target_path="/mnt/other/iobw.tst",
        ),
    )
    (block,) = build_report(store, [1], [[2]]).summary
    assert block.sentences == ["Nothing changed beyond noise."]
    assert block.unchanged.startswith("Within noise: ")
    assert all(s.spec in block.unchanged for s in BEFORE)
    assert block.what_changed[:3] == [
        "measured with fio 3.33 \u2192 fio 3.41",
        "hosts lab1 \u2192 lab2",
        "targets /mnt/data/iobw.tst \u2192 /mnt/other/iobw.tst",
    ]
    assert "Measured with: before: fio 3.33; after: fio 3.41" in block.warning
    assert not any(w.startswith("Run time") for w in block.warning)  # both 10 s: not a difference


def test_a_stopped_step_is_left_out_of_the_findings_and_said_so(store):
    record(store, RunSpec(BEFORE, tags=["before"]))
    record(
        store, RunSpec([AFTER[0], AFTER[1], replace(AFTER[2], status="stopped"), AFTER[3]], tags=["after"])
    )
    report = build_report(store, [1], [[2]])
    (block,) = report.summary
    assert not any(s.startswith("Max Throughput-50%Read") for s in block.sentences)
    assert block.left_out == [
        "Max Throughput-50%Read at QD 64: stopped in after - shown in the tables, left out of the findings"
    ]
    verdicts = [
        r.cells[-1].text
        for r in report.comparison_tables[0].rows
        if r.cells[0].text.startswith("Max Throughput-50")
    ]
    assert verdicts and set(verdicts) == {"stopped in after, not judged"}
    (included,) = build_report(store, [1], [[2]], include_incomplete=True).summary
    assert included.sentences[0].startswith("Max Throughput-50%Read") and included.left_out == []


def test_a_comparison_of_stopped_steps_judges_nothing_and_says_so(store):
    """A stopped transfer against a complete one: neither "Nothing changed beyond noise" nor a largest change
    in "At a glance" (the issue's "+374 %" with 0/0/0 counts)."""
    record(store, RunSpec([BEFORE[2]], tags=["before"]))
    record(store, RunSpec([replace(AFTER[2], mbps=AFTER[2].mbps * 4, status="stopped")], tags=["after"]))
    report = build_report(store, [1], [[2]])
    (block,) = report.summary
    assert block.sentences == [
        "Nothing was judged: the paired step did not run to its end on a side (stopped or partial; see "
        "\u201cLeft out\u201d), so no change is claimed either way."
    ]
    assert block.left_out and report.glance is not None and report.glance.rows == []


def test_a_stopped_transfer_is_not_compared_with_a_complete_one_in_the_headlines(store):
    """The issue's "7.21 s -> 4.32 s, -40 %": a stopped 360 MiB transfer against a complete 1 GiB one."""
    import json

    record(store, RunSpec([BEFORE[2]], tags=["before"]))
    record(store, RunSpec([replace(AFTER[2], status="stopped")], tags=["after"]))
    for run_id, text in store.conn.execute("SELECT id, plan_json FROM runs").fetchall():
        doc = json.loads(text)
        doc["plan"]["setup"]["transfer_bytes"] = 1 << 30  # a timed transfer: each step moves 1 GiB
        store.conn.execute("UPDATE runs SET plan_json = ? WHERE id = ?", (json.dumps(doc), run_id))
    (block,) = build_report(store, [1], [[2]]).summary
    (said,) = [h for h in block.headlines if " transfer of " in h]
    assert said.endswith("not compared, stopped in after.") and "\u2192" not in said, said


def test_labels_given_by_the_user_win_and_names_serve_without_tags(store):
    record(store, RunSpec(BEFORE, name="Vraid5"))
    record(store, RunSpec(AFTER, name="Vraid1"))
    assert build_report(store, [1], [[2]]).labels == ["Vraid5", "Vraid1"]
    report = build_report(store, [1], [[2]], ReportMeta(labels=["BEFORE", "AFTER"]))
    assert report.labels == ["BEFORE", "AFTER"]
    assert report.summary[0].heading == "AFTER (run 2) compared with BEFORE (run 1)"
    assert [c.title for c in report.comparison_tables[0].columns][2:4] == ["BEFORE", "AFTER"]
    assert report.percentiles.rows[0].cells[0].text == "BEFORE"
    assert build_report(store, [1], [[2]], ReportMeta(labels=["", "AFTER"])).labels == ["Vraid5", "AFTER"]
    with pytest.raises(ValueError, match="3 labels for 2 sides"):
        build_report(store, [1], [[2]], ReportMeta(labels=["a", "b", "c"]))


def test_groups_of_repeats_are_labelled_by_their_shared_tag_and_the_noise_is_theirs(store):
    for k in (1.0, 1.02, 0.98):
        record(
            store,
            RunSpec(
                [StepSpec(s.spec, s.iops * k, s.mbps * k, s.avg_ms, s.max_ms, s.p99_ms) for s in BEFORE],
                name=f"b{k}",
                tags=["before", "lab"],
            ),
        )
    for k in (1.0, 1.01, 0.99):
        record(
            store,
            RunSpec(
                [StepSpec(s.spec, s.iops * k, s.mbps * k, s.avg_ms, s.max_ms, s.p99_ms) for s in AFTER],
                name=f"a{k}",
                tags=["after", "lab"],
            ),
        )
    report = build_report(store, [1, 2, 3], [[4, 5, 6]])
    assert report.labels == ["before, lab", "after, lab"]
    (block,) = report.summary
    assert block.heading == "after, lab (runs 4, 5, 6) compared with before, lab (runs 1, 2, 3)"
    assert re.search(
        r"twice the larger run-to-run variation of the repeated runs \(\d+\.\d to \d+\.\d %", block.noise
    )
    iops = next(s for s in block.sentences if s.startswith("Max Throughput-50%Read"))
    mean_b = sum(BEFORE[2].iops * k for k in (1.0, 1.02, 0.98)) / 3
    mean_a = sum(AFTER[2].iops * k for k in (1.0, 1.01, 0.99)) / 3
    assert (
        f"IOPS +{(mean_a - mean_b) / mean_b * 100:.1f} % at QD 64 ({fmt_sig(mean_b)} \u2192 {fmt_sig(mean_a)}"
        in iops
    )
    assert iops.endswith("confidence high.")


def test_large_changes_are_written_with_thousands_separators(store):
    before = [StepSpec(s.spec, s.iops, s.mbps, s.avg_ms, s.max_ms, s.p99_ms) for s in BEFORE[:1]]
    after = [
        StepSpec(s.spec, s.iops * 96.529, s.mbps * 96.529, s.avg_ms, s.max_ms, s.p99_ms) for s in BEFORE[:1]
    ]
    record(store, RunSpec(before, name="old", tags=["before"]))
    record(store, RunSpec(after, name="new", tags=["after"]))
    (block,) = build_report(store, [1], [[2]]).summary
    assert "+9,552.9 %" in block.sentences[0]
