"""Bad content becomes diagnostics with the file and line, saying what was found and what was expected."""

from __future__ import annotations

import pytest

from icf_import import IcfError, load, load_strict, parse
from tests.unit.icf_corpus import (
    ACCESS_SPECS,
    DISK_WORKER,
    RESULTS_DISPLAY,
    TEST_SETUP,
    full,
    icf,
    line_of,
    manager_list,
)


def only_error(doc):
    assert len(doc.errors) == 1, doc.diagnostics
    return doc.errors[0]


def test_missing_target_type_reads_like_the_brief_example():
    text = full().replace("'Target type\n\tDISK\n", "")
    doc = parse(text, "x.icf")
    error = only_error(doc)
    assert error.line == line_of(text, "'End target")
    assert (
        str(error) == f"x.icf:{error.line}: error: expected 'Target type' inside a target, found 'End target'"
    )


def test_an_error_aborts_only_its_section():
    text = full().replace("'Test Type\n\tNORMAL\n", "'Test Typo\n\tNORMAL\n'Test Type\n\tCYCLE_TARGETS\n")
    doc = parse(text)
    error = only_error(doc)
    assert error.line == line_of(text, "'Test Typo")
    assert error.message == "expected a TEST SETUP key or 'END test setup', found 'Test Typo'"
    assert doc.test_setup.ramp_up == 5  # read before the error
    assert doc.test_setup.test_type == "NORMAL"  # after the error: not read
    assert doc.results_display.bar_charts and doc.access_specs and doc.managers[0].workers


def test_placeholder_where_a_number_is_expected():
    """Quarch's IometerTemplate.dat has placeholders a script replaces before Iometer sees it."""
    template = full().replace("\t0          1          30", "\t0          0          [*TIME_SECS*]")
    template = template.replace(
        "'END access specifications", "[*ACCESS_SPEC_DEFINE*]\n'END access specifications"
    )
    template = template.replace(
        "'Target\n\tC: \"SYSTEM\"\n'Target type\n\tDISK\n'End target\n", "[*TARGET_1*]\n"
    )
    doc = parse(template, "IometerTemplate.dat")
    assert [(d.line, d.message) for d in doc.errors] == [
        (
            line_of(template, "\t0          0          [*TIME_SECS*]"),
            "expected 3 integers (hours, minutes, seconds) for Run Time, found '0          0          [*TIME_SECS*]' "
            "where seconds should be",
        ),
        (
            line_of(template, "[*ACCESS_SPEC_DEFINE*]"),
            "expected 8 comma-separated values (size,% of size,% reads,% random,delay,burst,align,reply), "
            "found 1: '[*ACCESS_SPEC_DEFINE*]'",
        ),
        (
            line_of(template, "[*TARGET_1*]"),
            "expected 'Target' or 'End target assignments', found '[*TARGET_1*]'",
        ),
    ]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "\t4,DISABLED,1,DISABLED,0",
            "\t4,MAYBE,1,DISABLED,0",
            "expected ENABLED or DISABLED for test connection rate, found 'MAYBE'",
        ),
        (
            "\tNUMBER_OF_CPUS",
            "\t[*WORKERS*]",
            "expected NUMBER_OF_CPUS or an integer for Default Disk Workers to Spawn",
        ),
        ("\tNORMAL", "\tFAST", "expected NORMAL | CYCLE_TARGETS"),
        ("\tNORMAL", "\t9", "expected Test Type 0..7"),
        ("\tALL\n'Worker", "\tSOME\n'Worker", "expected ALL | NO_TARGETS | NO_WORKERS | NO_MANAGERS | NONE"),
        (
            "\t1          1          LINEAR\n'Disk",
            "\t1          1          SIDEWAYS\n'Disk",
            "expected LINEAR or EXPONENTIAL (or 0/1) for the Worker Cycling step type, found 'SIDEWAYS'",
        ),
        ("\tDISABLED,0,WHOLE_TEST", "\tDISABLED,0,SOMETIMES", "expected LAST_UPDATE or WHOLE_TEST"),
        ("\t4096,100,100,100,0,1,4096,0", "\t4096,100,100,100,0,1,4096", "expected 8 comma-separated values"),
        (
            "\t4096,100,100,100,0,1,4096,0",
            "\t4k,100,100,100,0,1,4096,0",
            "expected an integer for 'size', found '4k'",
        ),
        (
            "\tDISK\n'Default",
            "\tTAPE\n'Default",
            "expected DISK, NETWORK,TCP or NETWORK,VI for the type of worker",
        ),
        ("\tDISK\n'Default", "\tNETWORK,IPX\n'Default", "expected NETWORK,TCP or NETWORK,VI"),
        ("\t0,0,0", "\t-5,0,0", "expected a non-negative integer for Disk maximum size, found -5"),
        ("\t1,HOST", "\tHOST", "expected an integer for the manager ID, found 'HOST'"),
        (
            "'Manager network address\n",
            "'Manager address\n",
            "expected 'Manager network address' after the manager ID",
        ),
        (
            '\tC: "SYSTEM"\n\'Target type\n\tDISK',
            '\tC: "SYSTEM"\n\'Target type\n\tNETWORK,TCP',
            "target 'C: \"SYSTEM\"' is NETWORK,TCP, but worker 'Worker 1' is DISK",
        ),
        ("'End target\n", "'End targets\n", "expected 'End target', found 'End targets'"),
        (
            "'End default target settings for worker\n",
            "'Local network interface\n\teth0\n'End default target settings for worker\n",
            "'Local network interface' is only allowed for NETWORK workers",
        ),
    ],
)
def test_value_errors_name_the_line_and_what_was_expected(old, new, message):
    text = full().replace(old, new, 1)
    assert text != full()
    error = only_error(parse(text))
    assert message in error.message
    lines = text.splitlines()
    changed = next(i for i, (a, b) in enumerate(zip(lines, full().splitlines(), strict=False)) if a != b) + 1
    assert error.line in (changed, changed + 1), (error, changed)


def test_blank_line_where_a_key_is_expected():
    text = full().replace("'Ramp Up Time (s)", "\n'Ramp Up Time (s)")
    error = only_error(parse(text))
    assert error.line == line_of(text, "'Ramp Up Time") - 1
    assert error.message.endswith("found a blank line")


def test_end_of_file_inside_a_section():
    text = icf(ACCESS_SPECS.replace("'END access specifications\n", ""))
    text = text[: text.rindex("Version")]
    error = only_error(parse(text))
    assert error.line == len(text.splitlines())
    assert error.message.endswith("found the end of the file")


def test_empty_and_blank_first_line():
    assert [(d.line, d.severity) for d in parse("").diagnostics] == [(0, "error")]
    doc = parse("\n" + ACCESS_SPECS)
    assert [d.line for d in doc.errors] == [1]
    assert doc.spec("4K random read") is not None


def test_spec_percentages_not_adding_up_are_kept_with_a_warning():
    text = icf(ACCESS_SPECS.replace("\t4096,100,", "\t4096,60,"), manager_list(DISK_WORKER))
    doc = parse(text)
    assert doc.errors == []
    [w] = doc.warnings
    assert w.line == line_of(text, "'Access specification name")
    assert "adds up to 60, not 100; Iometer refuses such a specification" in w.message
    assert doc.spec("4K random read").lines[0].of_size == 60


def test_percent_values_out_of_range_are_kept_with_a_warning():
    text = icf(ACCESS_SPECS.replace("\t4096,100,100,100,", "\t4096,100,130,-1,"))
    doc = parse(text)
    assert doc.errors == []
    assert [(w.line, w.message[:11]) for w in doc.warnings] == [
        (line_of(text, "\t4096"), "'% reads' i"),
        (line_of(text, "\t4096"), "'% random' "),
    ]
    assert (doc.access_specs[0].lines[0].reads, doc.access_specs[0].lines[0].random) == (130, -1)


def test_assigned_spec_the_file_does_not_define_is_a_warning():
    text = full().replace(
        "\t4K random read\n'End assigned", "\t4K random read\n\tNo such spec\n'End assigned"
    )
    doc = parse(text)
    assert doc.errors == []
    [w] = doc.warnings
    assert w.line == line_of(text, "\tNo such spec")
    assert "'No such spec'" in w.message
    assert doc.managers[0].workers[0].assigned_specs == ["4K random read", "No such spec"]


def test_a_spec_defined_twice_replaces_the_first():
    twice = ACCESS_SPECS.replace(
        "'END access specifications\n",
        (
            "'Access specification name,default assignment\n\t4k RANDOM read,ALL\n'size\n\t512,100,0,0,0,1,0,0\n"
            "'END access specifications\n"
        ),
    )
    text = icf(twice)
    doc = parse(text)
    assert [s.name for s in doc.access_specs] == ["4k RANDOM read"]
    assert doc.access_specs[0].lines[0].size == 512
    [w] = doc.warnings
    assert w.line == line_of(text, "'Access specification name", 2)


def test_warnings_for_odd_results_display_values():
    rd = RESULTS_DISPLAY.replace("DISABLED,0,", "DISABLED,7,").replace(
        "'END results display",
        "'Bar chart 9 statistic\n\tx\n'Bar chart 2 colour\n\tred\n'END results display",
    )
    text = icf(rd)
    doc = parse(text)
    assert doc.errors == []
    assert [w.line for w in doc.warnings] == [
        line_of(text, "\tDISABLED,7"),
        line_of(text, "'Bar chart 9"),
        line_of(text, "'Bar chart 2 colour"),
    ]
    assert doc.results_display.update_frequency == 7
    assert [c.index for c in doc.results_display.bar_charts] == [1]


def test_data_pattern_out_of_range_and_long_lines_warn():
    text = full().replace("\t0,0,0", "\t0,0,5").replace("hand-written", "x" * 250)
    doc = parse(text)
    assert doc.errors == []
    assert [w.line for w in doc.warnings] == [line_of(text, "\txxx"), line_of(text, "\t0,0,5")]


def test_old_format_spec_with_commas_is_an_error_that_mentions_the_format():
    text = icf(
        "'ACCESS SPECIFICATIONS ===\n'size\n2048,100,67,100,0,1\n'END access specifications\n",
        version="1998.02.01",
    )
    error = only_error(parse(text))
    assert error.line == 4 and "older than 1998.05.21" in error.message


def test_network_worker_without_target_manager_line():
    worker = (
        "'Worker\n\tnet\n'Worker type\n\tNETWORK,TCP\n'Target assignments\n'Target\n\t10.0.0.2\n"
        "'Target type\n\tNETWORK,TCP\n'End target\n'End target assignments\n'End worker\n"
    )
    text = icf(ACCESS_SPECS.replace(",NONE", ",NET"), manager_list(worker))
    error = only_error(parse(text))
    assert error.line == line_of(text, "'End target")
    assert error.message == (
        "expected 'Target manager ID, manager name' after a network target's type, found 'End target'"
    )


def test_unknown_line_inside_a_worker():
    text = full().replace("'Assigned access specs\n", "'Assigned specs\n")
    error = only_error(parse(text))
    assert error.line == line_of(text, "'Assigned specs")
    assert "found 'Assigned specs'" in error.message and "'End worker'" in error.message


def test_load_errors(tmp_path):
    missing = tmp_path / "missing.icf"
    with pytest.raises(IcfError) as info:
        load(missing)
    [d] = info.value.diagnostics
    assert (d.source, d.line, d.severity) == (str(missing), 0, "error")
    assert "cannot read the file" in d.message and str(missing) in str(info.value)

    bad = tmp_path / "bad.icf"
    bad.write_text(full().replace("\tNORMAL", "\tFAST"))
    assert load(bad).errors
    with pytest.raises(IcfError) as info:
        load_strict(bad)
    assert info.value.diagnostics == load(bad).errors
    assert str(info.value).startswith(f"{bad}:")

    good = tmp_path / "good.icf"
    good.write_text(icf(TEST_SETUP))
    assert load_strict(good).test_setup.description == "hand-written"
