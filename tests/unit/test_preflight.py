"""The runner's checks stand apart (engine.run.preflight): building a Runner contacts no manager; its
``prepare()`` runs the checks, which do, and a refused check leaves nothing to run."""

from __future__ import annotations

import functools

import pytest

from app.engine.jobs.jobfile import target_key, target_paths
from app.engine.run.curve_runner import CurveRunner
from app.engine.run.preflight import PreparedRun, prepare
from app.engine.run.runner import ManagerEndpoint, Runner, RunOptions, RunRefused
from app.engine.transports.transport import TransportError
from app.model.plan import SpecLine
from tests.helpers import grid, spec

WRITES = SpecLine(4096, 100, 0, 100, 0, 1, 0, 0)


def unreachable_server(calls: list[str]) -> ManagerEndpoint:
    """A plain fio server that cannot be reached; every attempt is counted in ``calls``."""

    def transport():
        calls.append("transport")
        raise TransportError("connection refused")

    return ManagerEndpoint("M1", "Linux", transport, "10.0.0.9:8765", server=("10.0.0.9", 8765))


@pytest.mark.parametrize(
    "make", [Runner, functools.partial(CurveRunner, p99_max_ms=5.0)], ids=["Runner", "CurveRunner"]
)
def test_building_a_runner_contacts_no_manager_and_prepare_does(make):
    plan = grid(1, 1, 1)
    plan.specs = [spec("S", WRITES)]
    calls: list[str] = []
    runner = make(plan, {"M1": unreachable_server(calls)}, None, RunOptions(run_time=1))
    assert calls == [] and runner.prepared is None and runner.jobfiles == []
    with pytest.raises(RunRefused, match="could not check its test files through fio"):
        runner.prepare()
    assert calls, "the checks ask the fio server what is at its test files' paths"
    assert runner.prepared is None


def test_a_prepared_run_carries_the_job_files_and_the_target_paths_they_give():
    """What the Runner executes is the prepared run; the store's target paths come from its job files."""
    plan = grid(2, 2, 2)
    endpoints = {m.name: ManagerEndpoint(m.name, "Linux", lambda: None) for m in plan.managers}
    mapping = {"/t/m1w1t1": "/elsewhere/a.tst"}
    prepared = prepare(plan, endpoints, RunOptions(run_time=1, engine="null", mapping=mapping))
    assert isinstance(prepared, PreparedRun) and len(prepared.jobfiles) == len(prepared.steps) == 1
    runner = Runner(plan, endpoints, None, RunOptions(run_time=1, engine="null", mapping=mapping))
    runner.prepare()
    paths = target_paths(runner.jobfiles)
    assert paths[("M1", target_key(0, 0))] == "/elsewhere/a.tst"  # the run's mapping, once, in the job files
    assert paths[("M2", target_key(1, 1))] == "/t/m2w2t2"
    assert len(paths) == 8


def test_prepare_again_with_other_options_checks_again_and_a_refusal_leaves_nothing_to_run(tmp_path):
    plan = grid(1, 1, 1)
    plan.managers[0].workers[0].targets[0].name = str(tmp_path / "missing" / "t.tst")
    endpoints = {"M1": ManagerEndpoint("M1", "Linux", lambda: None)}
    runner = Runner(plan, endpoints, None, RunOptions(run_time=1, engine="null"))
    first = runner.prepare()
    assert runner.prepared is first
    with pytest.raises(RunRefused) as refused:
        runner.prepare(RunOptions(run_time=1))  # fio would create the folder: asked about
    assert refused.value.only_asks and refused.value.missing_folders == [str(tmp_path / "missing")]
    assert runner.prepared is None
