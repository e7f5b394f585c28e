"""Job files per step and manager: content, and real `fio --parse-only` on Linux and Windows text."""

import os
import shutil
import subprocess
import sys

import pytest

from app.engine.jobs.jobfile import JobSettings, step_jobfile
from app.engine.jobs.sequence import expand
from app.engine.transports.fio_binary import platform_candidates
from app.model.plan import AccessSpec, SpecLine, Target
from tests.helpers import grid

fio = shutil.which("fio")
if fio is None and sys.platform == "win32":  # Windows: fio.exe where its installer puts it
    fio = next((str(p) for p in platform_candidates("Windows", os.environ) if p.is_file()), None)


def parse_only(tmp_path, text):
    path = tmp_path / "job.fio"
    path.write_text(text)
    return subprocess.run([fio, "--parse-only", str(path)], capture_output=True, text=True)


def vmware_like():
    plan = grid(1, 1, 1, specs=("RealLife",), qd=64)
    plan.specs = [AccessSpec("RealLife", [SpecLine(8192, 100, 65, 60, 0, 1, 0, 0)])]
    w = plan.managers[0].workers[0]
    w.targets = [Target("C:")]
    w.max_size = 8_000_000
    plan.setup.run_time = 300
    return plan


def test_linux_job_text():
    plan = vmware_like()
    jf = step_jobfile(plan, expand(plan)[0], 0, "Linux", JobSettings(mapping={"C:": "/tmp/t:1.tst"}))
    assert "ioengine=libaio" in jf.text and "thread" not in jf.text.split()
    for line in (
        "direct=1",
        "time_based=1",
        "runtime=300",
        "norandommap=1",
        "lat_percentiles=1",
        "[m1.w1.t1]",
        "filename=/tmp/t\\:1.tst",
        "size=32768000000",  # 8,000,000 sectors of a Linux file (4096 bytes), not of the name C: (512)
        "iodepth=64",
        "rw=randrw",
        "rwmixread=65",
        "percentage_random=60,60",
        "bs=8k",
        "blockalign=512",
        "randrepeat=0",
    ):
        assert line in jf.text.splitlines(), line
    assert "thinktime_spin" not in jf.text
    assert [(j.name, j.worker_key, j.path, j.queue_depth) for j in jf.jobs] == [
        ("m1.w1.t1", "w1", "/tmp/t:1.tst", 64)
    ]


def test_windows_job_text_uses_windowsaio_thread_and_escaped_colons():
    plan = vmware_like()
    text = step_jobfile(plan, expand(plan)[0], 0, "Windows").text.splitlines()
    assert "ioengine=windowsaio" in text and "thread" in text
    assert "filename=C\\:\\iobw.tst" in text


def test_physical_drive_on_windows_has_no_size_and_fixed_seed():
    plan = vmware_like()
    w = plan.managers[0].workers[0]
    w.targets = [Target("PHYSICALDRIVE:2")]
    w.max_size = 0
    w.fixed_seed = 1234
    text = step_jobfile(plan, expand(plan)[0], 0, "Windows").text.splitlines()
    assert "filename=\\\\.\\PhysicalDrive2" in text
    assert not any(x.startswith("size=") for x in text)
    assert "randrepeat=1" in text and "randseed=1234" in text


def test_run_time_zero_means_until_stopped_and_ramp_is_written():
    plan = vmware_like()
    plan.setup.run_time, plan.setup.ramp_up = 0, 5
    text = step_jobfile(
        plan, expand(plan)[0], 0, "Linux", JobSettings(mapping={"C:": "/x"})
    ).text.splitlines()
    assert "runtime=31536000" in text and "ramp_time=5" in text


def test_one_section_per_worker_and_target_of_the_manager():
    plan = grid(2, 2, 3)
    step = expand(plan)[0]
    jf = step_jobfile(plan, step, 1, "Linux")
    assert [j.name for j in jf.jobs] == [
        "m2.w1.t1",
        "m2.w1.t2",
        "m2.w1.t3",
        "m2.w2.t1",
        "m2.w2.t2",
        "m2.w2.t3",
    ]
    assert [j.target_key for j in jf.jobs][:2] == ["w1.t1", "w1.t2"]
    assert {j.manager for j in jf.jobs} == {"M2"}
    assert jf.jobs[0].path == "/t/m2w1t1"


@pytest.mark.fio
@pytest.mark.skipif(fio is None, reason="fio not installed")
@pytest.mark.parametrize("os_name", ["Linux", "Windows"])
def test_fio_parses_generated_job_files(tmp_path, os_name):
    plan = vmware_like()
    plan.specs.append(
        AccessSpec("multi", [SpecLine(512, 30, 80, 100, 3, 2, 0, 0), SpecLine(66560, 70, 20, 50, 3, 2, 0, 0)])
    )
    plan.managers[0].workers[0].specs.append("multi")
    plan.managers[0].workers[0].data_pattern = 2
    for step in expand(plan):
        where = "C:\\fiometer\\t.tst"
        if os_name == "Linux":  # on Windows Python a Linux manager's file is a POSIX path fio never opens
            where = "/tmp/fiometer/t.tst" if sys.platform == "win32" else str(tmp_path / "t.tst")
        jf = step_jobfile(plan, step, 0, os_name, JobSettings(mapping={"C:": where}))
        out = parse_only(tmp_path, jf.text)
        assert out.returncode == 0, out.stderr + jf.text


def test_plan_text_cannot_inject_fio_options():
    """fio --server runs whatever job it is sent; exec_prerun would run a command on the manager."""
    import pytest

    from app.engine.jobs.targets import TargetError

    plan = vmware_like()
    plan.name = "x\nexec_prerun=touch /tmp/pwned"
    plan.managers[0].workers[0].name = "w\r\nexec_postrun=id"
    plan.specs[0].name = "RealLife\nexec_prerun=id"
    plan.managers[0].workers[0].specs = [plan.specs[0].name]
    jf = step_jobfile(
        plan, expand(plan)[0], 0, "Linux", JobSettings(mapping={"C:": "/tmp/x"}, title=plan.name)
    )
    assert not any(line.startswith("exec_") for line in jf.text.splitlines())
    with pytest.raises(TargetError, match="control character"):
        step_jobfile(plan, expand(plan)[0], 0, "Linux", JobSettings(mapping={"C:": "/tmp/x\nexec_prerun=id"}))
