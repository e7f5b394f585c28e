"""The JSON plan file round-trips, and bad files get field-level messages."""

import json

import pytest

from app.model import planfile
from app.model.plan import SpecLine
from app.model.validation import validate
from tests.helpers import grid


def test_round_trip(tmp_path):
    plan = grid(2, 2, 2, specs=("A", "B"), qd=16)
    plan.managers[1].host = "10.0.0.5:8765"
    plan.managers[0].workers[0].fixed_seed = 42
    plan.specs[1].lines = [SpecLine(512, 40, 0, 0), SpecLine(65536, 60, 100, 100, 5, 2, 4096, 0)]
    path = tmp_path / "p.fiometer.json"
    planfile.save(plan, path)
    loaded, warnings = planfile.load(path)
    assert warnings == []
    loaded.source = plan.source
    assert loaded == plan


def test_field_errors_name_the_path(tmp_path):
    data = planfile.to_dict(grid(1, 1, 1))
    data["plan"]["managers"][0]["workers"][0]["queue_depth"] = "deep"
    data["plan"]["specs"][0]["lines"][0]["extra"] = 1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(planfile.PlanFileError) as e:
        planfile.load(path)
    assert "managers[0].workers[0].queue_depth: must be a whole number, got 'deep'" in str(e.value)


def test_unknown_field_is_a_warning_and_newer_version_is_refused(tmp_path):
    data = planfile.to_dict(grid(1, 1, 1))
    data["plan"]["specs"][0]["colour"] = "red"
    _, warnings = planfile.from_dict(data)
    assert [str(w) for w in warnings] == ["specs[0].colour: unknown field, ignored"]
    data["version"] = 99
    with pytest.raises(planfile.PlanFileError, match="newer than this Fiometer"):
        planfile.from_dict(data, "x.json")


def test_broken_json_reports_the_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "format": "fiometer-plan",\n  oops\n}')
    with pytest.raises(planfile.PlanFileError, match=r"broken.json:3: the plan file is damaged"):
        planfile.load(path)
    other = tmp_path / "notes.json"
    other.write_text("hello, not JSON")
    with pytest.raises(
        planfile.PlanFileError, match=r"notes.json:1: not a plan: neither an Iometer configuration"
    ):
        planfile.load(other)


def test_validation_messages_give_the_allowed_range():
    plan = grid(1, 1, 1)
    plan.managers[0].workers[0].queue_depth = 0
    plan.specs[0].lines[0].reads = 101
    plan.managers[0].workers[0].specs.append("Nope")
    problems = validate(plan)
    msgs = [str(p) for p in problems]
    m, w, s = plan.managers[0].name, plan.managers[0].workers[0].name, plan.specs[0].name
    # in the user's words (names, lines counted from 1, Iometer's labels); the field path stays for code
    assert (
        f'manager "{m}", worker "{w}", # of outstanding I/Os: must be a whole number from 1 to 65535 '
        "outstanding I/Os, got 0" in msgs
    )
    assert (
        f'access specification "{s}", line 1, % read: must be a whole number from 0 to 100 %, got 101' in msgs
    )
    assert (
        f'manager "{m}", worker "{w}", assigned access specification 2: assigned spec \'Nope\' is not defined '
        "in the plan" in msgs
    )
    assert {p.path for p in problems} >= {"managers[0].workers[0].queue_depth", "specs[0].lines[0].reads"}


def test_percentages_not_adding_to_100_is_an_error_as_in_iometer():
    plan = grid(1, 1, 1)
    plan.specs[0].lines = [SpecLine(512, 40), SpecLine(4096, 40)]
    (p,) = validate(plan)
    assert p.severity == "error" and "adds up to 80, not 100; Iometer refuses" in p.message
