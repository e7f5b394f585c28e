"""Reading real and hand-written .icf files: what each version's files say ends up in the document."""

from __future__ import annotations

import pytest

from icf_import import (
    AccessSpec,
    BarChart,
    Cycling,
    QueueDepthCycling,
    SpecLine,
    Target,
    load,
    parse,
    version_number,
)
from tests.unit.icf_corpus import (
    ACCESS_SPECS,
    CORPUS_FILES,
    DISK_WORKER,
    RESULTS_DISPLAY,
    TEST_SETUP,
    corpus,
    full,
    icf,
    line_of,
    manager_list,
)

# ---------------------------------------------------------------- the corpus


def test_corpus_is_there():
    names = {p.name for p in CORPUS_FILES}
    assert "fourmix_2004.icf" in names
    assert "eilerjc_iometer_icf_compat_oldformat_specs.icf" in names
    assert len(CORPUS_FILES) >= 16


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_every_corpus_file_loads_with_line_numbers_inside_the_file(path):
    doc = load(path)
    n = len(path.read_bytes().splitlines())
    assert doc.source == str(path)
    for d in doc.diagnostics:
        assert 1 <= d.line <= n, d
        assert str(d).startswith(f"{path}:{d.line}: {d.severity}: ")
    expected_errors = 1 if path.name == "eilerjc_iometer_icf_compat_nospec_error.icf" else 0
    assert len(doc.errors) == expected_errors, doc.diagnostics


def test_2004_template_with_four_specs():
    doc = load(corpus("fourmix_2004.icf"))
    assert doc.diagnostics == []
    assert doc.version == "2004.07.30"
    assert version_number(doc.version) == 20040730
    ts = doc.test_setup
    assert ts.description == "Four-mix"
    assert ts.run_time == (0, 2, 30) and ts.run_seconds == 150
    assert ts.disk_workers_to_spawn == -1
    assert ts.worker_cycling == Cycling(1, 3, "LINEAR")
    assert ts.queue_depth_cycling == QueueDepthCycling(4, 64, 2, "EXPONENTIAL")
    rd = doc.results_display
    assert rd.record_last_update is None  # the pre-1.1.0-final key
    assert (rd.update_frequency, rd.update_type) == (2, "WHOLE_TEST")
    assert [c.statistic for c in rd.bar_charts][1] == "Total MBs per Second"
    assert [s.name for s in doc.access_specs] == [
        "Seq-64k-Read",
        "Mixed-8k-50%Rand-75%Read",
        "Seq-64k-Write",
        "Random-4k-60%Read",
    ]
    assert doc.access_specs[0].lines == [SpecLine(65536, 100, 100, 0, 0, 1, 0, 0)]
    assert doc.access_specs[1].lines == [SpecLine(8192, 100, 75, 50, 0, 1, 0, 0)]
    assert doc.access_specs[2].lines == [SpecLine(65536, 100, 0, 0, 0, 1, 0, 0)]
    assert doc.access_specs[3].lines == [SpecLine(4096, 100, 60, 100, 0, 1, 0, 0)]
    assert {s.default_assignment for s in doc.access_specs} == {"ALL"}
    [mgr] = doc.managers
    assert (mgr.id, mgr.name, mgr.address) == (1, "LAB-STOR-07", "192.0.2.17")
    [w] = mgr.workers
    assert (w.name, w.type, w.queue_depth) == ("Worker 1", "DISK", 32)
    assert (w.test_connection_rate, w.transactions_per_connection) == (True, 250)
    assert w.use_fixed_seed is None and w.data_pattern is None  # 3- and 2-value keys
    assert (w.disk_max_size, w.disk_start_sector) == (4000000, 0)
    assert w.assigned_specs == []  # block present, empty
    assert w.targets == [Target("D:", "DISK")]


def test_saved_by_1_1_0_final():
    doc = load(corpus("iometer-1.1.0-saved.icf"))
    assert doc.diagnostics == []
    assert doc.version == "1.1.0" and version_number("Version 1.1.0 ") == 10000100000
    assert doc.test_setup.description == "8k Random Mixed"
    assert doc.test_setup.run_time == (0, 0, 20)
    rd = doc.results_display
    assert (rd.record_last_update, rd.update_frequency, rd.update_type) == (True, 2, "LAST_UPDATE")
    assert [c.index for c in rd.bar_charts] == [1, 2, 3, 4, 5, 6]
    assert rd.bar_charts[5] == BarChart(6, "Total Error Count")
    assert len(doc.access_specs) == 11
    assert doc.access_specs[0] == AccessSpec("Default", "NONE", [SpecLine(2048, 100, 67, 100, 0, 1, 2048, 0)])
    mixed = doc.spec("mixed sizes")
    assert len(mixed.lines) == 15 and sum(x.of_size for x in mixed.lines) == 100
    assert mixed.lines[0] == SpecLine(512, 6, 100, 100, 0, 1, 512, 0)
    [mgr] = doc.managers
    assert (mgr.name, mgr.address) == ("BENCH-01", "")  # TAB-only value
    assert [w.name for w in mgr.workers] == ["Worker 1", "Worker 2", "Worker 3"]
    w1 = mgr.workers[0]
    assert (w1.use_fixed_seed, w1.fixed_seed, w1.data_pattern) == (False, 0, 0)  # 5- and 3-value keys
    assert w1.assigned_specs == ["8 KiB; 70% Read; 100% random"]
    assert w1.targets == [Target('E: "SCRATCH"', "DISK")]
    assert [w.targets for w in mgr.workers[1:]] == [[], []]  # empty target blocks


def test_tp_qemu_2006():
    doc = load(corpus("autotest_tp-qemu_iometer.icf"))
    assert doc.diagnostics == []
    assert doc.version == "2006.07.27"
    ts = doc.test_setup
    assert ts.description == ""  # a truly empty line
    assert ts.test_type == "CYCLE_OUTSTANDING_IOS_AND_TARGETS"
    assert ts.queue_depth_cycling == QueueDepthCycling(1, 128, 2, "EXPONENTIAL")
    assert len(doc.access_specs) == 38
    assert len(doc.spec("All in one").lines) == 20
    workers = doc.managers[0].workers
    assert [len(w.assigned_specs) for w in workers] == [16, 16]
    assert [t.name for w in workers for t in w.targets] == ["I:local", "I:local"]


def test_tp_qemu_duplicated_end_target_is_a_warning_naming_its_line():
    path = corpus("autotest_tp-qemu_iometer_multi_3disks.icf")
    doc = load(path)
    assert doc.errors == []
    [warning] = doc.warnings
    text = path.read_text()
    assert text.splitlines()[warning.line - 1] == "'End target"
    assert text.splitlines()[warning.line - 2] == "'End target"  # the second of two
    assert warning.line == 266
    assert "duplicated 'End target'" in warning.message
    assert [t.name for t in doc.managers[0].workers[0].targets] == ["I:local", "J:local", "K:local"]
    assert [t.name for t in doc.managers[0].workers[1].targets] == ["I:local", "J:local", "K:local"]


def test_access_specs_only_2008():
    doc = load(corpus("specs_only_2008.icf"))
    assert doc.diagnostics == []
    assert doc.test_setup is None and doc.results_display is None and doc.managers is None
    assert len(doc.access_specs) == 7
    small = doc.spec("Small block mix")
    assert [x.size for x in small.lines] == [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
    assert [x.of_size for x in small.lines] == [10, 10, 10, 45, 10, 5, 5, 5]
    assert {(x.reads, x.random) for x in small.lines} == {(70, 100)}
    web = doc.spec("Read-only web mix")
    assert len(web.lines) == 10
    assert web.lines[7] == SpecLine(40960, 6, 100, 100, 0, 1, 0, 0)  # a size that is no power of two
    assert doc.spec("Big sequential read (1 MiB)").lines[0].size == 1048576


def test_oldformat_specs_get_smart_names_and_assignment_all():
    doc = load(corpus("eilerjc_iometer_icf_compat_oldformat_specs.icf"))
    assert doc.diagnostics == []
    assert doc.spec_format == "old"
    [spec] = doc.access_specs
    # align 2048: Iometer 1.1.0 fills the line's defaults (size 2048, align = size) before reading six fields
    assert spec == AccessSpec("2 KiB random 67% reads", "ALL", [SpecLine(2048, 100, 67, 100, 0, 1, 2048, 0)])
    assert doc.managers[0].workers[0].assigned_specs == [spec.name]


def test_network_worker_fixture():
    doc = load(corpus("eilerjc_iometer_network_worker.icf"))
    assert doc.diagnostics == []
    [w] = doc.managers[0].workers
    assert w.type == "NETWORK,TCP"
    assert (w.disk_max_size, w.disk_start_sector, w.data_pattern) == (None, None, None)
    assert w.targets == [Target("127.0.0.1", "NETWORK,TCP", (1, "TESTMGR"))]


def test_two_managers_fixture():
    doc = load(corpus("eilerjc_iometer_icf_compat_two_managers_run.icf"))
    assert [(m.id, m.name, [w.name for w in m.workers]) for m in doc.managers] == [
        (1, "M1", ["Worker A"]),
        (2, "M2", ["Worker B"]),
    ]
    assert doc.managers[1].workers[0].assigned_specs == ["4 KiB; 50% Read; 100% random"]


def test_workers_without_default_settings_block():
    doc = load(corpus("eilerjc_iometer_multi_target.icf"))
    [w] = doc.managers[0].workers
    assert w.has_default_settings is False
    assert (w.queue_depth, w.disk_max_size) == (1, 0)
    assert [t.name for t in w.targets] == ['C: "Vol0"', 'D: "Vol1"', 'E: "Vol2"']


def test_missing_results_display_section():
    doc = load(corpus("eilerjc_iometer_icf_compat_missing_sections.icf"))
    assert doc.results_display is None
    assert doc.test_setup is not None and doc.managers is not None


def test_rich_worker_settings():
    doc = load(corpus("eilerjc_iometer_icf_compat_multiline_allinone.icf"))
    [w] = doc.managers[0].workers
    assert (w.queue_depth, w.test_connection_rate, w.transactions_per_connection) == (8, True, 5)
    assert (w.use_fixed_seed, w.fixed_seed) == (True, 12345)
    assert (w.disk_max_size, w.disk_start_sector, w.data_pattern) == (1024, 64, 1)


def test_nospec_fixture_is_an_error_at_the_worker():
    path = corpus("eilerjc_iometer_icf_compat_nospec_error.icf")
    doc = load(path)
    [error] = doc.errors
    assert error.line == path.read_text().splitlines().index("'Worker") + 1
    assert "no worker has an access specification" in error.message


# ---------------------------------------------------------------- version rules


@pytest.mark.parametrize(
    ("line", "number"),
    [
        ("Version 1.1.0 ", 10000100000),
        ("Version 2003.12.16-post", 20031216),
        ("Version 2008.06.18-RC2", 20080618),
        ("Version 2008.06.18-RC2-2Kdev", 20080618),
        ("Version 1998.10.08 ", 19981008),
        ("Version 3.26.97", 30002600097),  # Iometer 1.1.0's 3.26.97 special case can never match
        ("Version 2006.07.27 DEBUG", 20060727),
        ("Version 1.1", None),
        ("'TEST SETUP", None),
    ],
)
def test_version_number(line, number):
    assert version_number(line) == number


def test_version_line_variants():
    assert parse(icf(ACCESS_SPECS, version="2008.06.18-RC2")).version == "2008.06.18-RC2"
    doc = parse(icf(ACCESS_SPECS, version="3.26.97"))
    assert doc.spec_format == "new" and doc.diagnostics == [] and doc.spec("4K random read")


def test_missing_version_line_is_an_error_but_sections_still_load():
    doc = parse(ACCESS_SPECS)
    assert [d.line for d in doc.errors] == [1]
    assert "expected 'Version <version>'" in doc.errors[0].message
    assert doc.spec("4K random read") is not None


def test_old_spec_format_multi_line_and_several_specs():
    text = icf(
        "'ACCESS SPECIFICATIONS ===\n'size, % of size, % reads, % random, delay, burst\n"
        "512 50 100 0 0 1\n4096 50 0 100 0 1\n"  # one two-line spec
        "1048576 100 100 0 0 1\n"
        "512 100 0 0 5 2\n"
        "512 100 0 0 0 1\n"  # same name as the previous one
        "65536 100 25 50 0 1\n"
        "8192 0 0 0 0 1\n"  # 0% lines are dropped
        "'END access specifications\n",
        version="1998.02.01",
    )
    doc = parse(text)
    assert [s.name for s in doc.access_specs] == [
        "Untitled 1",
        "1 MiB sequential reads",
        "512 B sequential writes",
        "512 B sequential writes 2",
        "64 KiB 50% random 25% reads",
    ]
    # align 2048 whatever the size (Iometer 1.1.0's line defaults, read before the six fields)
    assert doc.access_specs[0].lines == [
        SpecLine(512, 50, 100, 0, 0, 1, 2048, 0),
        SpecLine(4096, 50, 0, 100, 0, 1, 2048, 0),
    ]
    assert doc.access_specs[2].lines[0].delay == 5 and doc.access_specs[2].lines[0].burst == 2
    assert {s.default_assignment for s in doc.access_specs} == {"ALL"}
    [w] = doc.warnings
    assert w.line == line_of(text, "8192 0") and "0%" in w.message


def test_test_setup_legacy_integers():
    text = icf(
        "'TEST SETUP ===\n'Record Results\n\t3\n'Worker Cycling\n\t2 4 1\n'Disk Cycling\n\t1,1,0\n"
        "'Queue Depth Cycling\n\t1 64 2 1\n'Test Type\n\t7\n'END test setup\n"
    )
    ts = parse(text).test_setup
    assert ts.record_results == "NO_MANAGERS"
    assert ts.worker_cycling == Cycling(2, 4, "EXPONENTIAL")
    assert ts.disk_cycling == Cycling(1, 1, "LINEAR")
    assert ts.queue_depth_cycling == QueueDepthCycling(1, 64, 2, "EXPONENTIAL")
    assert ts.test_type == "CYCLE_OUTSTANDING_IOS_AND_TARGETS"


@pytest.mark.parametrize(("value", "expected"), [("0", -1), ("3", 3)])
def test_ancient_default_workers_to_spawn(value, expected):
    doc = parse(icf(f"'TEST SETUP ===\n'Default Workers to Spawn\n\t{value}\n'END test setup\n"))
    assert doc.diagnostics == []
    assert doc.test_setup.ancient_default_workers is True
    assert doc.test_setup.disk_workers_to_spawn == expected


def test_number_of_cpus_and_integers_for_workers_to_spawn():
    doc = parse(
        icf(
            "'TEST SETUP ===\n'Default Disk Workers to Spawn\n\t2\n"
            "'Default Network Workers to Spawn\n\tNUMBER_OF_CPUS\n'END test setup\n"
        )
    )
    assert (doc.test_setup.disk_workers_to_spawn, doc.test_setup.network_workers_to_spawn) == (2, -1)


def test_mixed_case_keys_values_and_ramp_up_prefix():
    text = icf(
        "'test setup ======\n'TEST DESCRIPTION\n\tmixed\n'run time\n'\thours minutes seconds\n\t0 0 3\n"
        "'ramp up time\n\t7\n'default DISK workers to spawn\n\tnumber_of_cpus\n'record results\n\tno_targets\n"
        "'test type\n\tcycle_workers\n'end TEST SETUP\n"
        "'Results Display\n'update frequency,update type\n\t5,last_update\n'end results display\n"
        "'access SPECIFICATIONS\n'ACCESS SPECIFICATION NAME,DEFAULT ASSIGNMENT\n\tx,disk\n'SIZE\n"
        "\t512,100,0,0,0,1,0,0\n'End Access Specifications\n"
    )
    doc = parse(text)
    assert doc.diagnostics == []
    ts = doc.test_setup
    assert (ts.description, ts.run_time, ts.ramp_up) == ("mixed", (0, 0, 3), 7)
    assert (ts.disk_workers_to_spawn, ts.record_results, ts.test_type) == (-1, "NO_TARGETS", "CYCLE_WORKERS")
    assert (doc.results_display.update_frequency, doc.results_display.update_type) == (5, "LAST_UPDATE")
    assert doc.access_specs[0].default_assignment == "DISK"


def test_sections_in_any_order_and_only_the_first_copy_counts():
    second_setup = TEST_SETUP.replace("hand-written", "second copy")
    text = icf(manager_list(DISK_WORKER), ACCESS_SPECS, TEST_SETUP, RESULTS_DISPLAY, second_setup)
    doc = parse(text)
    assert doc.test_setup.description == "hand-written"
    assert doc.managers[0].workers[0].assigned_specs == ["4K random read"]
    [w] = doc.diagnostics
    assert w.severity == "warning" and w.line == line_of(text, "'TEST SETUP", 2)


def test_line_endings_bom_and_cp1252_give_the_same_document():
    base = parse(full())
    assert base.diagnostics == []
    for variant in (full(newline="\r\n"), full(newline="\r")):
        assert parse(variant) == base
    assert parse(b"\xef\xbb\xbf" + full(newline="\r\n").encode()) == base
    assert parse("\ufeff" + full()) == base
    accented = full().replace("hand-written", "Café test µs")
    assert parse(accented.encode("cp1252")).test_setup.description == "Café test µs"
    assert parse(accented.encode("utf-8")).test_setup.description == "Café test µs"


def test_trailing_spaces_tab_only_and_blank_values_and_no_tabs():
    text = full().replace("\thand-written", "\t").replace("\t10.0.0.1", "")
    text = "\n".join(
        line.lstrip("\t") + "   " if not line.startswith("'") else line + " " for line in text.split("\n")
    )
    doc = parse(text)
    assert doc.errors == []
    assert doc.test_setup.description == ""
    assert doc.managers[0].address == ""
    assert doc.managers[0].workers[0].targets == [Target('C: "SYSTEM"', "DISK")]


def test_extra_apostrophe_lines_after_a_key_are_skipped():
    text = full().replace("'Ramp Up Time (s)\n", "'Ramp Up Time (s)\n'\tseconds\n'another note\n")
    doc = parse(text)
    assert doc.diagnostics == [] and doc.test_setup.ramp_up == 5


def test_integers_like_extract_first_int():
    text = (
        full()
        .replace("\t0          1          30", "\t0,1 , 30")
        .replace("\t4,DISABLED,1,", "\t4 DISABLED 1 ")
    )
    doc = parse(text)
    assert doc.diagnostics == []
    assert doc.test_setup.run_time == (0, 1, 30)
    assert doc.managers[0].workers[0].queue_depth == 4


def test_multi_line_spec_runs_until_the_next_apostrophe_line():
    text = icf(
        "'ACCESS SPECIFICATIONS ===\n'Access specification name,default assignment\n\tmix,ALL\n"
        "'size,% of size,% reads,% random,delay,burst,align,reply\n"
        "\t65536,30,100,0,0,1,0,0\n\t512,50,0,100,10,4,512,0\n\t1024,20,50,50,0,1,0,2048,\n"
        "'END access specifications\n"
    )
    doc = parse(text)
    assert doc.diagnostics == []
    assert doc.spec("MIX").lines == [
        SpecLine(65536, 30, 100, 0, 0, 1, 0, 0),
        SpecLine(512, 50, 0, 100, 10, 4, 512, 0),
        SpecLine(1024, 20, 50, 50, 0, 1, 0, 2048),  # a trailing comma (results-file style) is harmless
    ]


def test_legacy_integer_default_assignment_and_name_cut_at_a_pipe():
    text = icf(
        "'ACCESS SPECIFICATIONS ===\n'Access specification name,default assignment\n\ta|b,2\n'size\n"
        "\t512,100,0,0,0,1,0,0\n'END access specifications\n"
    )
    doc = parse(text)
    assert doc.access_specs[0].name == "a" and doc.access_specs[0].default_assignment == "DISK"
    [w] = doc.warnings
    assert w.line == 4 and "'|'" in w.message


def test_network_vi_worker_and_several_managers():
    vi = (
        "'Worker\n\tnet 1\n'Worker type\n\tNETWORK,VI\n'Default target settings for worker\n"
        "'Number of outstanding IOs,test connection rate,transactions per connection\n\t1,DISABLED,1\n"
        "'Local network interface\n\tnic0\n'VI outstanding IOs\n\t16\n"
        "'End default target settings for worker\n'Assigned access specs\n\t4K random read\n"
        "'End assigned access specs\n'Target assignments\n'Target\n\tnic1\n'Target type\n\tNETWORK,VI\n"
        "'Target manager ID, manager name\n\t2,HOST\n'End target\n'End target assignments\n'End worker\n"
    )
    two = manager_list(vi).replace("'END manager list\n", "") + (
        "'Manager ID, manager name\n\t2,HOST\n'Manager network address\n\t\n'End manager\n'END manager list\n"
    )
    doc = parse(icf(ACCESS_SPECS, two))
    assert doc.diagnostics == []
    assert [(m.id, m.name) for m in doc.managers] == [(1, "HOST"), (2, "HOST")]
    [w] = doc.managers[0].workers
    assert (w.type, w.local_interface, w.vi_outstanding, w.disk_max_size) == ("NETWORK,VI", "nic0", 16, None)
    assert w.targets == [Target("nic1", "NETWORK,VI", (2, "HOST"))]
    assert doc.managers[1].workers == []


def test_optional_worker_blocks_absent():
    worker = "'Worker\n\tW\n'Worker type\n\tDISK\n'End worker\n"
    doc = parse(icf(ACCESS_SPECS.replace(",NONE", ",ALL"), manager_list(worker)))
    assert doc.diagnostics == []
    [w] = doc.managers[0].workers
    assert (w.has_default_settings, w.assigned_specs, w.targets) == (False, None, None)


def test_bar_chart_manager_and_worker_lines_and_unknown_statistic():
    rd = RESULTS_DISPLAY.replace(
        "'END results display\n",
        (
            "'Bar chart 1 manager ID, manager name\n\t1,HOST\n'Bar chart 1 worker ID, worker name\n\t2,Worker 2\n"
            "'Bar chart 2 statistic\n\tNo Such Statistic\n'END results display\n"
        ),
    )
    doc = parse(icf(rd))
    assert doc.diagnostics == []
    assert doc.results_display.bar_charts == [
        BarChart(1, "Total I/Os per Second", (1, "HOST"), (2, "Worker 2")),
        BarChart(2, "No Such Statistic"),
    ]


def test_version_before_1999_02_17_lets_an_unknown_key_end_test_setup():
    text = icf(
        "'TEST SETUP ===\n'Test Description\n\told\n'Run Time\n\t0 0 9\n",
        RESULTS_DISPLAY,
        version="1998.10.08",
    )
    doc = parse(text)
    assert doc.errors == []
    assert doc.test_setup.run_time == (0, 0, 9)
    assert doc.results_display.update_type == "WHOLE_TEST"
