"""Plan -> .icf -> plan keeps what Iometer can hold."""

from pathlib import Path

import icf_import
from app.model.from_icf import plan_from_icf
from app.model.opening import open_plan
from app.model.plan import LOCAL, SpecLine, Target
from app.model.to_icf import plan_to_icf
from app.paths import example_plan
from tests.helpers import grid


def test_round_trip_through_the_icf_writer_and_reader(tmp_path: Path) -> None:
    plan = grid(2, 2, 2, specs=("A", "B"), qd=8)
    plan.specs[1].lines = [SpecLine(65536, 40, 100, 0, 0, 1, 0, 0), SpecLine(512, 60, 0, 100, 5, 4, 512, 0)]
    plan.specs[1].default_assignment = "ALL"
    plan.setup.run_time, plan.setup.ramp_up, plan.setup.test_type = 3725, 15, "CYCLE_OUTSTANDING_IOS"
    plan.setup.description = "before/after"
    plan.managers[0].host = LOCAL
    w = plan.managers[1].workers[0]
    w.max_size, w.start_sector, w.data_pattern, w.fixed_seed = 2048, 64, 2, 42
    w.specs = ["B", "Idle", "A"]
    w.targets[0] = Target("sdb", "/dev/sdb")
    doc, notes = plan_to_icf(plan)
    path = tmp_path / "out.icf"
    icf_import.save(doc, path)
    back = icf_import.load(path)
    assert not back.errors, back.errors
    again = plan_from_icf(back)
    assert again.setup.run_time == 3725 and again.setup.ramp_up == 15
    assert again.setup.test_type == "CYCLE_OUTSTANDING_IOS" and again.setup.description == "before/after"
    assert [(s.name, [ln.as_csv() for ln in s.lines], s.default_assignment) for s in again.specs] == [
        (s.name, [ln.as_csv() for ln in s.lines], s.default_assignment) for s in plan.specs
    ]
    w2 = again.managers[1].workers[0]
    assert (w2.max_size, w2.start_sector, w2.data_pattern, w2.fixed_seed, w2.queue_depth) == (
        2048,
        64,
        2,
        42,
        8,
    )
    assert w2.specs == ["B", "Idle", "A"]
    assert [t.name for t in w2.targets] == ["sdb", "/t/m2w1t2"]
    assert [m.name for m in again.managers] == ["M1", "M2"]
    assert any("/dev/sdb" in n for n in notes)


def test_the_bundled_example_survives_export(tmp_path: Path) -> None:
    opened = open_plan(example_plan())
    doc, _notes = plan_to_icf(opened.plan)
    path = tmp_path / "example.icf"
    icf_import.save(doc, path)
    again = open_plan(path).plan
    assert [s.name for s in again.specs] == [s.name for s in opened.plan.specs]
    assert again.managers[0].address_in_file == opened.plan.managers[0].address_in_file
    assert again.managers[0].workers[0].specs == opened.plan.managers[0].workers[0].specs
