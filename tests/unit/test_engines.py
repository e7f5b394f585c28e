"""fio's I/O engine as a plan choice: every OS x every choice x local/remote x io_uring allowed or not, the
io_uring options in the job text and through the job policy, and the plan file and its checks."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from app.engine.jobs.engines import BY_OS, EngineRefused, choose
from app.engine.jobs.job_policy import check_job_text
from app.engine.jobs.jobfile import JobSettings, step_jobfile
from app.engine.jobs.sequence import expand
from app.model import plan as plan_model
from app.model import planfile
from app.model.plan import AUTO_ENGINE, ENGINES, URING_OPTIONS
from app.model.validation import validate
from tests.helpers import grid

OSES = ("Linux", "Windows", "Darwin")
REFUSED = "the kernel does not allow io_uring here"


def setup(engine: str, options: tuple[str, ...] = ()) -> plan_model.TestSetup:
    return plan_model.TestSetup(engine=engine, engine_options=list(options))


@pytest.mark.parametrize("os_name", OSES)
@pytest.mark.parametrize("local", (True, False))
@pytest.mark.parametrize("allowed", (True, False))
@pytest.mark.parametrize("engine", ENGINES)
def test_every_choice_on_every_os_runs_what_that_manager_has_or_is_refused_by_name(
    os_name, local, allowed, engine
):
    asked = []

    def refusal():
        asked.append(1)
        return None if allowed else REFUSED

    have = BY_OS[{"Linux": "linux", "Windows": "windows", "Darwin": "darwin"}[os_name]]
    uring_here = os_name == "Linux" and local
    try:
        use = choose(setup(engine, ("fixedbufs",)), "M1", os_name, local=local, uring_refusal=refusal)
    except EngineRefused as e:
        assert engine != AUTO_ENGINE  # auto always finds one
        assert "'M1'" in str(e) and ("Test Setup's I/O engine" in str(e))
        assert engine not in have or (engine == "io_uring" and uring_here and not allowed)
        return
    if engine == AUTO_ENGINE:
        expected = "io_uring" if uring_here and allowed else have[0]
    else:
        assert engine in have
        expected = engine
    assert use.name == expected
    # io_uring's options go with io_uring only, and say so when dropped
    assert use.options == (("fixedbufs",) if expected == "io_uring" else ())
    if expected != "io_uring":
        assert use.note.startswith(f"I/O engine {expected}, without the io_uring options fixedbufs (")
    # the kernel is asked only where it can matter: a local Linux manager, for io_uring
    assert bool(asked) == (uring_here and engine in (AUTO_ENGINE, "io_uring"))


def test_auto_on_a_remote_linux_manager_says_why_libaio():
    use = choose(setup(AUTO_ENGINE), "db", "Linux", local=False, uring_refusal=lambda: None)
    assert use.name == "libaio" and use.note == ""  # nothing asked for is left out
    with_options = plan_model.TestSetup(engine_options=["fixedbufs"])
    use = choose(with_options, "db", "Linux", local=False, uring_refusal=lambda: None)
    assert "a remote host's kernel is not known: choose io_uring there" in use.note


def test_explicit_io_uring_where_the_kernel_refuses_it_names_the_reason():
    with pytest.raises(EngineRefused, match=f"io_uring cannot run here: {REFUSED}; choose libaio"):
        choose(setup("io_uring"), "local", "Linux", local=True, uring_refusal=lambda: REFUSED)


def plan_with(engine: str, options: tuple[str, ...] = ()):
    plan = grid(1, 1, 1)
    plan.setup.engine, plan.setup.engine_options = engine, list(options)
    return plan


@pytest.mark.parametrize("engine", ("io_uring", "libaio", "psync", "null"))
def test_the_job_text_carries_the_engine_and_io_urings_options_only_with_io_uring(engine):
    plan = plan_with(engine)
    jf = step_jobfile(
        plan, expand(plan)[0], 0, "Linux", JobSettings(engine=engine, engine_options=URING_OPTIONS)
    )
    lines = jf.text.splitlines()
    head = lines[: lines.index("[global]") + 1 + len(URING_OPTIONS) + 1]
    assert f"ioengine={engine}" in head
    assert all((o in lines) == (engine == "io_uring") for o in URING_OPTIONS)
    check_job_text(jf.text)  # the policy lets io_uring's options through


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")
def test_fio_parses_io_urings_options_as_written(tmp_path):
    plan = plan_with("io_uring", URING_OPTIONS)
    jf = step_jobfile(
        plan, expand(plan)[0], 0, "Linux", JobSettings(engine="io_uring", engine_options=URING_OPTIONS)
    )
    (tmp_path / "j.fio").write_text(jf.text)
    res = subprocess.run(["fio", "--parse-only", str(tmp_path / "j.fio")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr + res.stdout


def test_the_plan_file_keeps_the_choice_and_an_old_file_loads_as_auto():
    plan = plan_with("io_uring", ("fixedbufs", "hipri"))
    again, _ = planfile.from_dict(planfile.to_dict(plan))
    assert (again.setup.engine, again.setup.engine_options) == ("io_uring", ["fixedbufs", "hipri"])
    old = planfile.to_dict(grid(1, 1, 1))
    del old["plan"]["setup"]["engine"], old["plan"]["setup"]["engine_options"]
    loaded, _ = planfile.from_dict(old)
    assert (loaded.setup.engine, loaded.setup.engine_options) == (AUTO_ENGINE, [])


@pytest.mark.parametrize(
    ("engine", "options", "field", "words"),
    [
        ("spdk", (), "I/O engine", "must be one of auto, io_uring"),
        ("io_uring", ("iopoll",), "io_uring options", "must be one of fixedbufs"),
        ("libaio", ("fixedbufs",), "io_uring options", "the engine is libaio: choose io_uring"),
    ],
)
def test_a_wrong_engine_or_option_is_named_with_its_field_and_value(engine, options, field, words):
    problems = validate(plan_with(engine, options))
    said = [str(p) for p in problems if p.severity == "error"]
    assert any(field in s and words in s for s in said), said
