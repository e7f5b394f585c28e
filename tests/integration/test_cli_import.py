"""`fiometer import` and `fiometer plan` over the real .icf corpus, job files checked by real fio."""

import shutil
import subprocess
import sys

import pytest

import icf_import
from app.engine.jobs.jobfile import JobSettings, step_jobfile
from app.engine.jobs.sequence import expand
from app.model.from_icf import plan_from_icf
from tests.helpers import shared_dir

ICF = shared_dir() / "icf"
CORPUS = sorted(ICF.glob("*.icf")) + sorted((ICF / "synthetic").glob("*.icf"))
ERROR_FILES = {"eilerjc_iometer_icf_compat_nospec_error.icf"}


def fiometer(*args):
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True)


def test_2004_template_gives_four_steps_at_qd32_for_150s():
    plan = plan_from_icf(icf_import.load(ICF / "fourmix_2004.icf"))
    steps = expand(plan)
    assert [s.spec_label for s in steps] == [
        "Seq-64k-Read",
        "Mixed-8k-50%Rand-75%Read",
        "Seq-64k-Write",
        "Random-4k-60%Read",
    ]
    assert [s.queue_depths for s in steps] == [[32]] * 4
    assert plan.setup.run_time == 150
    specs = [plan.spec(s.spec_label).lines[0] for s in steps]
    assert [(ln.size, ln.reads, ln.random) for ln in specs] == [
        (65536, 100, 0),
        (8192, 75, 50),
        (65536, 0, 0),
        (4096, 60, 100),
    ]
    assert plan.managers[0].host == "local" and plan.managers[0].address_in_file == "192.0.2.17"


def test_second_manager_needs_a_host_and_network_workers_run():
    plan = plan_from_icf(
        icf_import.load(ICF / "synthetic" / "eilerjc_iometer_icf_compat_two_managers_run.icf")
    )
    assert [m.host for m in plan.managers] == ["local", None]
    net = plan_from_icf(icf_import.load(ICF / "synthetic" / "eilerjc_iometer_network_worker.icf"))
    (step,) = expand(net)  # the TCP worker runs on fio's net engine, its client on the same manager
    assert net.managers[0].workers[0].kind == "network_tcp" and step.managers() == [0]


def test_old_format_specs_are_named_like_iometer_and_assigned():
    plan = plan_from_icf(
        icf_import.load(ICF / "synthetic" / "eilerjc_iometer_icf_compat_oldformat_specs.icf")
    )
    assert plan.managers[0].workers[0].specs == ["2 KiB random 67% reads"]
    assert plan.spec("2 KiB random 67% reads").lines[0].size == 2048


def test_import_prints_summary_and_notes():
    out = fiometer("import", ICF / "fourmix_2004.icf")
    assert out.returncode == 0, out.stderr
    assert "Steps (4):" in out.stdout and "never contacted" in out.stdout
    assert "Fidelity notes" in out.stdout and "test connection rate" in out.stdout


def test_malformed_real_file_imports_with_a_located_warning():
    out = fiometer("import", ICF / "autotest_tp-qemu_iometer_multi_3disks.icf")
    assert out.returncode == 0
    assert "autotest_tp-qemu_iometer_multi_3disks.icf:266: warning: duplicated 'End target'" in out.stdout


def test_unreadable_file_exits_2_with_location_and_no_traceback(tmp_path):
    out = fiometer("import", ICF / "synthetic" / "eilerjc_iometer_icf_compat_nospec_error.icf")
    assert out.returncode == 2
    assert "eilerjc_iometer_icf_compat_nospec_error.icf:33: error:" in out.stderr
    assert "Traceback" not in out.stderr
    bad = tmp_path / "bad.icf"
    bad.write_bytes(
        b"Version 1.1.0 \r\n'TEST SETUP ==\r\n'Run Time\r\n'\thours\r\n\t[*TIME*]\r\n'END test setup\r\n"
    )
    out = fiometer("import", bad)
    assert out.returncode == 2 and "bad.icf:5:" in out.stderr and "Traceback" not in out.stderr
    out = fiometer("import", tmp_path / "missing.icf")
    assert out.returncode == 2 and "no such file" in out.stderr


def test_plan_steps_and_save_round_trip(tmp_path):
    saved = tmp_path / "fourmix.json"
    assert fiometer("import", ICF / "fourmix_2004.icf", "-o", saved).returncode == 0
    a = fiometer("plan", ICF / "fourmix_2004.icf", "--steps")
    b = fiometer("plan", saved, "--steps")
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout and a.stdout.startswith("4 steps; run time 150 s")


def test_windows_targets_need_a_map_on_linux(tmp_path):
    out = fiometer("plan", ICF / "fourmix_2004.icf", "--jobs", tmp_path, "--os", "Linux")
    assert out.returncode == 2
    assert "'D:' is a Windows drive" in out.stderr and "--map" in out.stderr


@pytest.mark.fio
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
@pytest.mark.parametrize("path", [p for p in CORPUS if p.name not in ERROR_FILES], ids=lambda p: p.name)
def test_every_corpus_file_makes_job_files_fio_accepts(tmp_path, path):
    plan = plan_from_icf(icf_import.load(path))
    names = list({t.name: t for m in plan.managers for w in m.workers for t in w.targets})
    steps = expand(plan)[:12]  # the tp-qemu plans have 128 steps; the first 12 cover every shape
    for os_name in ("Linux", "Windows"):
        folder = str(tmp_path) + "/" if os_name == "Linux" else "C:\\fiometer\\"  # a full path on that OS
        mapping = {name: f"{folder}t{i}.tst" for i, name in enumerate(names)}
        files = []
        for step in steps:
            for mi in step.managers():
                job = tmp_path / f"{os_name}-{step.index}-{mi}.fio"
                job.write_text(step_jobfile(plan, step, mi, os_name, JobSettings(mapping=mapping)).text)
                files.append(str(job))
        res = subprocess.run(
            ["fio", "--parse-only", *files], capture_output=True, text=True
        )  # one fio for all
        assert res.returncode == 0, res.stderr


def test_plan_jobs_cli_writes_a_file_per_step_and_manager(tmp_path):
    out = fiometer(
        "plan", ICF / "fourmix_2004.icf", "--jobs", tmp_path / "jobs", "--map", f"D:={tmp_path / 'iobw.tst'}"
    )
    assert out.returncode == 0, out.stderr
    names = sorted(p.name for p in (tmp_path / "jobs").iterdir())
    assert names == [f"step-00{i}-LAB-STOR-07.fio" for i in range(1, 5)]


def test_plan_jobs_writes_what_run_gives_fio_with_the_same_overrides(tmp_path):
    """`plan --jobs` takes run's --run-time, --ramp-up and --test-file-size, so its job files hold the
    run time, ramp-up and size that `run` with the same options stored as given to fio."""
    target = tmp_path / "iobw.tst"
    overrides = ["--run-time", "1", "--ramp-up", "0", "--test-file-size", "8M", "--map", f"D:={target}"]
    plan = ICF / "fourmix_2004.icf"
    done = fiometer("run", plan, *overrides, "--db", tmp_path / "r.db")
    assert done.returncode == 0, done.stderr
    from app.store import get_run, open_store

    with open_store(tmp_path / "r.db") as store:
        stored = [s.outputs for s in get_run(store, 1).steps]
    out = fiometer("plan", plan, "--jobs", tmp_path / "jobs", *overrides)
    assert out.returncode == 0, out.stderr
    assert "run time 1 s, ramp-up 0 s each" in fiometer("plan", plan, *overrides[:4]).stdout

    def facts(text: str) -> list[str]:
        keys = ("runtime=", "ramp_time=", "size=")
        return sorted(line for line in text.splitlines() if line.startswith(keys))

    written = sorted((tmp_path / "jobs").iterdir())
    assert len(written) == len(stored) == 4
    for path, outputs in zip(written, stored, strict=True):
        ran = facts(next(iter(outputs.values())).job_text)
        assert facts(path.read_text()) == ran, path.name
        assert "runtime=1" in ran and any(line.startswith("size=") for line in ran), ran
