"""Writing: Iometer's own layout, the key variant each document asks for, and lossless round trips."""

from __future__ import annotations

import pytest

from icf_import import (
    AccessSpec,
    BarChart,
    IcfDocument,
    Manager,
    ResultsDisplay,
    SpecLine,
    Target,
    Worker,
    load,
    parse,
    save,
    write,
)
from icf_import import (
    TestSetup as SetupSection,  # aliased: pytest would try to collect a class named Test*
)
from tests.unit.icf_corpus import CORPUS_FILES, corpus, full


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("newline", ["\r\n", "\n"])
def test_round_trip_every_corpus_file(path, newline):
    doc = load(path)
    again = parse(write(doc, newline))
    assert again == doc
    assert [(d.severity, d.message) for d in again.diagnostics] == [
        (d.severity, d.message) for d in doc.diagnostics if "duplicated 'End target'" not in d.message
    ]


def test_file_in_iometer_1_1_0_saved_layout_is_reproduced_byte_for_byte(tmp_path):
    path = corpus("iometer-1.1.0-saved.icf")
    out = tmp_path / "out.icf"
    save(load(path), out)
    assert out.read_bytes() == path.read_bytes()


def test_2008_access_specs_file_is_reproduced_byte_for_byte():
    path = corpus("specs_only_2008.icf")
    assert write(load(path), "\n").encode() == path.read_bytes()


def test_tp_qemu_differs_only_where_a_hook_stripped_trailing_whitespace():
    path = corpus("autotest_tp-qemu_iometer.icf")
    original = path.read_text().splitlines()
    written = write(load(path), "\n").splitlines()
    assert len(written) == len(original)
    diffs = [(i, a, b) for i, (a, b) in enumerate(zip(original, written, strict=True)) if a != b]
    assert diffs == [
        (0, "Version 2006.07.27", "Version 2006.07.27 "),
        (3, "", "\t"),
        (len(original) - 1, "Version 2006.07.27", "Version 2006.07.27 "),
    ]


def test_2004_template_keeps_its_pre_1_1_0_keys():
    text = write(load(corpus("fourmix_2004.icf")), "\n")
    assert "'Update Frequency,Update Type\n\t2,WHOLE_TEST\n" in text
    assert (
        "'Number of outstanding IOs,test connection rate,transactions per connection\n\t32,ENABLED,250\n"
        in text
    )
    assert "'Disk maximum size,starting sector\n\t4000000,0\n" in text
    assert "'Assigned access specs\n'End assigned access specs\n" in text
    assert "Record Last Update" not in text and "fixed seed" not in text and "Data pattern" not in text


def test_layout_of_a_document_built_in_code():
    doc = IcfDocument(
        version="1.1.0",
        test_setup=SetupSection(description="built", run_time=(1, 2, 3), disk_workers_to_spawn=2),
        results_display=ResultsDisplay(
            True, 1, "LAST_UPDATE", [BarChart(1, "Total I/Os per Second", (1, "H"), (2, "W"))]
        ),
        access_specs=[AccessSpec("a", "ALL", [SpecLine(), SpecLine(512, 0, 0, 0, 5, 2, 512, 1024)])],
        managers=[
            Manager(
                1,
                "H",
                "",
                [
                    Worker(
                        "W",
                        use_fixed_seed=True,
                        fixed_seed=7,
                        data_pattern=2,
                        assigned_specs=["a"],
                        targets=[Target("sdb")],
                    ),
                    Worker(
                        "N",
                        "NETWORK,VI",
                        disk_max_size=None,
                        disk_start_sector=None,
                        local_interface="nic0",
                        vi_outstanding=16,
                        assigned_specs=None,
                        targets=[Target("nic1", "NETWORK,VI", (1, "H"))],
                    ),
                ],
            )
        ],
    )
    text = write(doc, "\n")
    lines = text.split("\n")
    assert lines[0] == lines[-2] == "Version 1.1.0 " and lines[-1] == ""
    banners = [x for x in lines if x.startswith("'") and x.endswith("=")]
    assert [len(b) for b in banners] == [80, 80, 80, 80]
    assert banners[0] == "'TEST SETUP " + "=" * 68
    assert "'Run Time\n'\thours      minutes    seconds\n\t1          2          3\n" in text
    assert "'Default Disk Workers to Spawn\n\t2\n'Default Network Workers to Spawn\n\t0\n" in text
    assert (
        "'Queue Depth Cycling\n'\tstart      end        step       step type\n"
        "\t1          32         2          EXPONENTIAL\n" in text
    )
    assert "'Record Last Update Results,Update Frequency,Update Type\n\tENABLED,1,LAST_UPDATE\n" in text
    assert (
        "'Bar chart 1 manager ID, manager name\n\t1,H\n'Bar chart 1 worker ID, worker name\n\t2,W\n" in text
    )
    assert (
        "\ta,ALL\n'size,% of size,% reads,% random,delay,burst,align,reply\n"
        "\t2048,100,67,100,0,1,0,0\n\t512,0,0,0,5,2,512,1024\n" in text
    )
    assert "\t1,DISABLED,1,ENABLED,7\n'Disk maximum size,starting sector,Data pattern\n\t0,0,2\n" in text
    assert "\tNETWORK,VI\n'Default target settings for worker\n" in text
    assert "'Local network interface\n\tnic0\n'VI outstanding IOs\n\t16\n" in text
    assert "'Target type\n\tNETWORK,VI\n'Target manager ID, manager name\n\t1,H\n'End target\n" in text
    assert text.count("'Assigned access specs") == 1
    assert parse(text) == doc


def test_absent_sections_and_blocks_are_omitted():
    doc = IcfDocument(
        version="2006.07.27", managers=[Manager(1, "H", "", [Worker("W", has_default_settings=False)])]
    )
    text = write(doc, "\n")
    assert text == (
        "Version 2006.07.27 \n'MANAGER LIST " + "=" * 66 + "\n'Manager ID, manager name\n\t1,H\n"
        "'Manager network address\n\t\n'Worker\n\tW\n'Worker type\n\tDISK\n'End worker\n"
        "'End manager\n'END manager list\nVersion 2006.07.27 \n"
    )


def test_old_format_specs_are_written_as_six_fields_and_read_back_with_smart_names():
    doc = IcfDocument(
        version="1998.02.01",
        spec_format="old",
        access_specs=[
            AccessSpec("2 KiB random 67% reads", "ALL", [SpecLine(2048, 100, 67, 100, 0, 1, 2048)]),
            AccessSpec(
                "Untitled 1",
                "ALL",
                [SpecLine(512, 40, 0, 0, 0, 1, 2048), SpecLine(65536, 60, 100, 0, 10, 4, 2048)],
            ),
        ],
    )  # (the old format has no alignment: read back as Iometer 1.1.0's 2048)
    text = write(doc, "\n")
    assert (
        "'ACCESS SPECIFICATIONS " + "=" * 57 + "\n'size, % of size, % reads, % random, delay, burst\n"
        "2048 100 67 100 0 1\n512 40 0 0 0 1\n65536 60 100 0 10 4\n'END access specifications\n" in text
    )
    assert parse(text) == doc


def test_ancient_default_workers_key_is_kept():
    doc = parse(
        full().replace("'Default Disk Workers to Spawn\n\tNUMBER_OF_CPUS", "'Default Workers to Spawn\n\t0")
    )
    text = write(doc, "\n")
    assert "'Default Workers to Spawn\n\t0\n" in text and "Default Disk" not in text
    assert parse(text) == doc


def test_hand_written_file_round_trips_in_every_line_ending():
    doc = parse(full())
    for newline in ("\r\n", "\n", "\r"):
        assert parse(write(doc, newline)) == doc


def test_save_uses_cp1252_and_replaces_what_it_cannot_encode(tmp_path):
    doc = parse(full().replace("hand-written", "Café ✓"))
    out = tmp_path / "x.icf"
    save(doc, out, newline="\n")
    data = out.read_bytes()
    assert b"\tCaf\xe9 ?\n" in data
    assert data.startswith(b"Version 1.1.0 \n")
    assert load(out).test_setup.description == "Café ?"


def test_lines_only_iometer_writes_for_that_worker_type():
    """A network worker built in code keeps the dataclass default disk size, but no disk line is written."""
    worker = Worker(
        "N",
        "NETWORK,TCP",
        local_interface="eth0",
        vi_outstanding=8,
        targets=[Target("10.0.0.2", "NETWORK,TCP", (1, "H"))],
    )
    disk = Worker("D", local_interface="eth0", targets=[Target("sdb", "DISK", (1, "H"))])
    text = write(IcfDocument(managers=[Manager(1, "H", "", [worker, disk])]), "\n")
    assert "Disk maximum size" not in text.split("'Worker\n\tD")[0]
    assert text.count("'Local network interface") == 1 and "VI outstanding" not in text
    assert text.count("'Target manager ID, manager name") == 1
    doc = parse(text)
    assert [e.message[:9] for e in doc.errors] == ["no worker"]  # the document has no access specs
    assert doc.managers[0].workers[0].disk_max_size is None
