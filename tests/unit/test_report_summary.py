"""The executive summary says in words what the numbers say: every sentence checked against the stored
numbers (worked out here from the run specs, not from the comparison), labels from tags, names or the user."""

from __future__ import annotations

import re

import pytest

from app.analysis.compare import METRICS
from app.report.document import ReportMeta, build_report
from app.report.tables import fmt_sig
from app.store.database import open_store
from tests.stored_runs import AFTER, BEFORE, RunSpec, StepSpec, record

FIELDS = {"iops": "iops", "mbps": "mbps", "lat_mean_ms": "avg_ms", "lat_max_ms": "max_ms", "p99_ms": "p99_ms"}


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "s.db") as s:
        yield s


def expected_phrases(before: StepSpec, after: StepSpec, threshold: float = 5.0) -> list[str]:
    out = []
    for d in METRICS:
        b, c = getattr(before, FIELDS[d.key]), getattr(after, FIELDS[d.key])
        pct = (c - b) / b * 100
        if abs(pct) <= threshold:
            continue
        unit = "" if d.unit in ("IOPS", "MB/s") else f" {d.unit}"
        label = d.label if not out or d.label in ("IOPS", "MB/s") else d.label[0].lower() + d.label[1:]
        out.append(f"{label} {'up' if c > b else 'down'} {abs(pct):,.1f} % "
                   f"({fmt_sig(b)}{unit} \u2192 {fmt_sig(c)}{unit})")
    return out


def test_one_sentence_per_changed_spec_with_both_values_and_the_change(store):
    record(store, RunSpec(BEFORE, name="EVA 4400, 32 disks Vraid5", tags=["before"]))
    record(store, RunSpec(AFTER, name="EVA 4400, 36 disks Vraid1", tags=["after"]))
    report = build_report(store, [1], [[2]])
    assert report.labels == ["before", "after"]  # the runs' tags
    (block,) = report.summary
    assert block.heading == "after (run 2) compared with before (run 1)"
    want = [f"{b.spec}: " + ", ".join(p) + "." for b, a in zip(BEFORE, AFTER, strict=True)
            if (p := expected_phrases(b, a))]
    assert block.sentences == want
    # e.g. the seed example's Max Throughput-50%Read: IOPS 1,530 -> 5,113
    assert "Max Throughput-50%Read: IOPS up 234.2 % (1,530 \u2192 5,113)" in block.sentences[2]
    assert "average response time down 80.5 % (34.0 ms \u2192 6.63 ms)" in block.sentences[2]
    assert block.warning == []  # same host, fio and targets
    assert "5 %" in block.noise


def test_a_line_for_what_did_not_change_and_a_warning_for_other_differences(store):
    same = [StepSpec(s.spec, s.iops * 1.01, s.mbps * 1.01, s.avg_ms, s.max_ms, s.p99_ms) for s in BEFORE]
    record(store, RunSpec(BEFORE, name="old", tags=["before"]))
    record(store, RunSpec(same, name="new", tags=["after"], fio_version="3.41", hostname="lab2",
                          target_path="/mnt/other/iobw.tst"))
    (block,) = build_report(store, [1], [[2]]).summary
    assert block.sentences == []
    assert block.unchanged.startswith("Nothing changed beyond noise.")
    assert all(s.spec in block.unchanged for s in BEFORE)
    assert "Measured with: before: fio 3.33; after: fio 3.41" in block.warning
    assert "Hosts: before: lab1; after: lab2" in block.warning
    assert any(w.startswith("Targets: before: /mnt/data/iobw.tst; after: /mnt/other/iobw.tst") for w in block.warning)
    assert any(w.startswith("Run time") for w in block.warning) is False  # both 10 s: not a difference


def test_labels_given_by_the_user_win_and_names_serve_without_tags(store):
    record(store, RunSpec(BEFORE, name="Vraid5"))
    record(store, RunSpec(AFTER, name="Vraid1"))
    assert build_report(store, [1], [[2]]).labels == ["Vraid5", "Vraid1"]
    report = build_report(store, [1], [[2]], ReportMeta(labels=["BEFORE", "AFTER"]))
    assert report.labels == ["BEFORE", "AFTER"]
    assert report.summary[0].heading == "AFTER (run 2) compared with BEFORE (run 1)"
    assert [c.title for c in report.comparison_tables[0].columns][1:3] == ["BEFORE", "AFTER"]
    assert report.percentiles.rows[0].cells[0].text == "BEFORE"
    assert build_report(store, [1], [[2]], ReportMeta(labels=["", "AFTER"])).labels == ["Vraid5", "AFTER"]
    with pytest.raises(ValueError, match="3 labels for 2 sides"):
        build_report(store, [1], [[2]], ReportMeta(labels=["a", "b", "c"]))


def test_groups_of_repeats_are_labelled_by_their_shared_tag_and_the_noise_is_theirs(store):
    for k in (1.0, 1.02, 0.98):
        record(store, RunSpec([StepSpec(s.spec, s.iops * k, s.mbps * k, s.avg_ms, s.max_ms, s.p99_ms)
                               for s in BEFORE], name=f"b{k}", tags=["before", "lab"]))
    for k in (1.0, 1.01, 0.99):
        record(store, RunSpec([StepSpec(s.spec, s.iops * k, s.mbps * k, s.avg_ms, s.max_ms, s.p99_ms)
                               for s in AFTER], name=f"a{k}", tags=["after", "lab"]))
    report = build_report(store, [1, 2, 3], [[4, 5, 6]])
    assert report.labels == ["before, lab", "after, lab"]
    (block,) = report.summary
    assert block.heading == "after, lab (runs 4, 5, 6) compared with before, lab (runs 1, 2, 3)"
    assert re.search(r"twice the larger run-to-run variation of the repeated runs \(\d+\.\d to \d+\.\d %",
                     block.noise)
    iops = next(s for s in block.sentences if s.startswith("Max Throughput-50%Read"))
    mean_b = sum(BEFORE[2].iops * k for k in (1.0, 1.02, 0.98)) / 3
    mean_a = sum(AFTER[2].iops * k for k in (1.0, 1.01, 0.99)) / 3
    assert f"IOPS up {(mean_a - mean_b) / mean_b * 100:.1f} % ({fmt_sig(mean_b)} \u2192 {fmt_sig(mean_a)})" in iops


def test_large_changes_are_written_with_thousands_separators(store):
    before = [StepSpec(s.spec, s.iops, s.mbps, s.avg_ms, s.max_ms, s.p99_ms) for s in BEFORE[:1]]
    after = [StepSpec(s.spec, s.iops * 96.529, s.mbps * 96.529, s.avg_ms, s.max_ms, s.p99_ms) for s in BEFORE[:1]]
    record(store, RunSpec(before, name="old", tags=["before"]))
    record(store, RunSpec(after, name="new", tags=["after"]))
    (block,) = build_report(store, [1], [[2]]).summary
    assert "IOPS up 9,552.9 %" in block.sentences[0]
