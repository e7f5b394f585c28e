"""Issue 28 point 8: Iometer parity of the .icf import and export, on Iometer's saved files (tests/fixtures/icf,
see PROVENANCE.md) and small edits of them."""

from __future__ import annotations

from pathlib import Path

import icf_import
from app.cli.entry import main
from app.model import planfile
from app.model.from_icf import plan_from_icf
from app.model.opening import open_plan
from app.model.to_icf import plan_to_icf

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "icf"
SAVED = FIXTURES / "iometer-1.1.0-saved.icf"  # Iometer 1.1.0's layout: ENABLED, the six bar charts


def text_of(path: Path) -> str:
    return path.read_bytes().decode("cp1252")


def plan_of(text: str):
    return plan_from_icf(icf_import.parse(text))


def notes_of(plan) -> str:
    return "\n".join(f"{n.where}: {n.message}" for n in plan.notes)


def exported(plan) -> str:
    doc, _notes = plan_to_icf(plan)
    return icf_import.write(doc, "\n")


def test_an_old_format_line_is_aligned_as_iometer_1_1_0_aligns_it() -> None:
    doc = icf_import.load(FIXTURES / "synthetic" / "eilerjc_iometer_icf_compat_oldformat_specs.icf")
    plan = plan_from_icf(doc)
    assert [ln.align for s in plan.specs for ln in s.lines] == [2048]  # InitAccessSpecLine, not sector (0)


def test_commas_in_the_description_become_dashes() -> None:
    text = text_of(SAVED).replace("\t8k Random Mixed", "\t8k Random, Mixed, 70/30")
    plan = plan_of(text)
    assert plan.setup.description == "8k Random- Mixed- 70/30"
    assert "commas are dashes" in notes_of(plan)


def test_without_a_results_display_section_the_results_are_the_last_updates() -> None:
    text = text_of(SAVED)
    start, end = (
        text.index("'RESULTS DISPLAY"),
        text.index("'END results display") + len("'END results display\r\n"),
    )
    plan = plan_of(text[:start] + text[end:])
    assert plan.setup.update_type == "LAST_UPDATE"
    assert "no RESULTS DISPLAY section" in notes_of(plan)


def test_record_last_update_results_is_noted_and_kept_on_export() -> None:
    plan = plan_of(text_of(SAVED))
    assert plan.setup.iometer.record_last_update
    assert "Record Last Update Results is ENABLED" in notes_of(plan)
    out = exported(plan)
    assert "'Record Last Update Results,Update Frequency,Update Type\n\tENABLED,2,LAST_UPDATE\n" in out
    again = planfile.from_dict(planfile.to_dict(plan))[0]  # kept in Fiometer's plan file too
    assert again.setup.iometer.record_last_update
    disabled = plan_of(text_of(SAVED).replace("\tENABLED,2,LAST_UPDATE", "\tDISABLED,2,LAST_UPDATE"))
    assert not disabled.setup.iometer.record_last_update and "Record Last" not in notes_of(disabled)
    assert "\tDISABLED,2,LAST_UPDATE" in exported(disabled)


def test_workers_to_spawn_and_bar_charts_survive_an_export() -> None:
    for disk in ("0", "1", "2", "NUMBER_OF_CPUS"):
        text = text_of(SAVED).replace(
            "'Default Disk Workers to Spawn\r\n\tNUMBER_OF_CPUS",
            f"'Default Disk Workers to Spawn\r\n\t{disk}",
        )
        text = text.replace(
            "'Default Network Workers to Spawn\r\n\t0", "'Default Network Workers to Spawn\r\n\t2"
        )
        text = text.replace("\t% CPU Utilization (total)", "\tRead I/Os per Second")
        out = exported(plan_of(text))
        assert f"'Default Disk Workers to Spawn\n\t{disk}\n" in out
        assert "'Default Network Workers to Spawn\n\t2\n" in out
        assert "'Bar chart 5 statistic\n\tRead I/Os per Second\n" in out
        assert "'Bar chart 1 statistic\n\tTotal I/Os per Second\n" in out


def test_a_file_with_nothing_to_run_says_so() -> None:
    opened = open_plan(FIXTURES / "specs_only_2008.icf")
    assert [w for w in opened.warnings if "nothing to run: the file has no managers or workers" in w]
    assert not [w for w in open_plan(SAVED).warnings if "nothing to run" in w]


def test_the_2006_results_display_key_is_read_and_noted() -> None:
    plan = plan_from_icf(icf_import.load(FIXTURES / "autotest_tp-qemu_iometer.icf"))
    notes = notes_of(plan)
    assert "'Update Frequency,Update Type" in notes and "Iometer 1.1.0 refuses it" in notes


def test_export_icf_on_the_command_line(tmp_path: Path, capsys) -> None:
    out = tmp_path / "again.icf"
    assert main(["export-icf", str(SAVED), "-o", str(out)]) == 0
    assert "written to" in capsys.readouterr().out
    data = out.read_bytes()
    assert data.startswith(b"Version 1.1.0") and b"\r\n" in data
    again = plan_from_icf(icf_import.load(out))
    first = plan_from_icf(icf_import.load(SAVED))
    assert [s.name for s in again.specs] == [s.name for s in first.specs]
    assert again.setup.iometer == first.setup.iometer
    # a plan file works too; a missing folder is a message, not a traceback
    plan_json = tmp_path / "plan.json"
    planfile.save(first, plan_json)
    assert main(["export-icf", str(plan_json), "-o", str(tmp_path / "from-json.icf")]) == 0
    assert main(["export-icf", str(plan_json), "-o", str(tmp_path / "no such folder" / "x.icf")]) != 0
    assert "does not exist" in capsys.readouterr().err
