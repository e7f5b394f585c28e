"""Destructive writes need arming: raw devices, existing foreign files, files fio would lay out again."""

import os

import pytest

from app.engine.guards.safety import CreatedFiles, armed_twice, is_armed, unarmed, write_risks
from app.engine.jobs.jobfile import JobSettings, step_jobfile
from app.engine.jobs.placement import placer
from app.engine.jobs.sequence import expand
from app.model.plan import SpecLine, Target
from tests.helpers import grid, prepared
from tests.platform_marks import posix_only


def jobfiles_for(
    plan, target_path, reads=0, local=True, start_sector=0, allow=(), allow_in_use=(), max_size=0
):
    plan.specs[0].lines = [SpecLine(4096, 100, reads, 100)]
    plan.managers[0].workers[0].targets = [Target(target_path)]
    plan.managers[0].workers[0].start_sector = start_sector
    plan.managers[0].workers[0].max_size = max_size
    return {
        "M1": step_jobfile(
            plan,
            expand(plan)[0],
            0,
            "Linux",
            JobSettings(
                default_file_size=1 << 20,
                place=placer(local, "Linux", "M1"),
                allow_mounted=lambda job: armed_twice(job, set(allow), set(allow_in_use)),
            ),
        )
    }


def risks_for(plan, registry, target_path, **kw):
    return write_risks(jobfiles_for(plan, target_path, **kw), registry)


def test_new_file_is_safe_and_foreign_existing_file_needs_arming(tmp_path):
    reg = CreatedFiles(tmp_path / "reg.json")
    plan = grid(1, 1, 1)
    assert risks_for(plan, reg, str(tmp_path / "new.tst")) == []
    existing = tmp_path / "precious.db"
    existing.write_bytes(b"x" * (2 << 20))
    (risk,) = risks_for(plan, reg, str(existing))
    assert "Fiometer did not create it" in risk.reason
    (msg,) = unarmed([risk], set(), set())
    assert ("--allow-write '" in msg or '--allow-write "' in msg) and str(
        existing
    ) in msg  # the shell's quoting
    assert unarmed([risk], {str(existing)}, set()) == []
    # a read-only job on a large enough foreign file is fine
    assert risks_for(plan, reg, str(existing), reads=100) == []


def test_small_existing_file_would_be_laid_out_again_even_by_a_read_job(tmp_path):
    small = tmp_path / "notes.txt"
    small.write_text("19 bytes of notes.\n")
    # a Maximum Disk Size larger than the file (0 would be the file's own size, as in Iometer)
    (risk,) = risks_for(grid(1, 1, 1), CreatedFiles(tmp_path / "r.json"), str(small), reads=100, max_size=8)
    assert "lay it out again" in risk.reason
    assert risks_for(grid(1, 1, 1), CreatedFiles(tmp_path / "r.json"), str(small), reads=100) == []


@posix_only("a Linux manager's POSIX path is this machine's temporary folder")
def test_a_file_of_exactly_the_test_size_is_laid_out_again_when_the_start_sector_is_above_0(tmp_path):
    """fio needs offset + size bytes: it rewrote such a file during a 100 % read spec."""
    exact = tmp_path / "exact.bin"
    exact.write_bytes(b"p" * (1 << 20))
    reg = CreatedFiles(tmp_path / "r.json")
    sectors = (1 << 20) // os.statvfs(tmp_path).f_bsize  # Maximum Disk Size: the file's size, in its sectors
    assert risks_for(grid(1, 1, 1), reg, str(exact), reads=100, max_size=sectors) == []
    (risk,) = risks_for(grid(1, 1, 1), reg, str(exact), reads=100, start_sector=1, max_size=sectors)
    assert f"{(1 << 20) + os.statvfs(tmp_path).f_bsize} bytes" in risk.reason


def test_files_fiometer_created_are_reused_without_arming_until_someone_replaces_them(tmp_path):
    reg = CreatedFiles(tmp_path / "sub" / "reg.json")
    f = tmp_path / "iobw.tst"
    f.write_bytes(b"\0" * 10)
    reg.add([str(f)])
    assert str(f) in reg
    assert risks_for(grid(1, 1, 1), reg, str(f)) == []
    # the same name, another file (new inode): foreign again
    other = tmp_path / "other"
    other.write_bytes(b"\0" * 10)
    os.replace(other, f)
    assert str(f) not in reg
    assert len(risks_for(grid(1, 1, 1), reg, str(f))) == 1
    # rewritten in place (same inode, new modification time): foreign again
    reg.add([str(f)])
    assert risks_for(grid(1, 1, 1), reg, str(f)) == []
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert len(risks_for(grid(1, 1, 1), reg, str(f))) == 1


def test_the_record_is_per_host(tmp_path):
    f = tmp_path / "iobw.tst"
    f.write_bytes(b"\0" * 10)
    CreatedFiles(tmp_path / "reg.json", host="alpha").add([str(f)])
    assert str(f) in CreatedFiles(tmp_path / "reg.json", host="alpha")
    assert str(f) not in CreatedFiles(tmp_path / "reg.json", host="beta")


def test_an_old_record_without_identity_counts_for_nothing(tmp_path):
    f = tmp_path / "iobw.tst"
    f.write_bytes(b"\0" * 10)
    (tmp_path / "reg.json").write_text(f'["{f}"]')
    assert str(f) not in CreatedFiles(tmp_path / "reg.json")


def test_raw_device_writes_need_arming_and_in_use_needs_a_second_override(tmp_path):
    plan = grid(1, 1, 1)
    (risk,) = risks_for(plan, CreatedFiles(tmp_path / "r.json"), "/dev/sdz", local=False)
    assert "raw device" in risk.reason
    assert risks_for(plan, CreatedFiles(tmp_path / "r.json"), "/dev/sdz", reads=100, local=False) == []
    in_use = risk.__class__(**{**risk.__dict__, "in_use": True, "use": "mounted at /data"})
    assert "in use (mounted at /data)" in unarmed([in_use], {"/dev/sdz"}, set())[0]
    assert not is_armed(in_use, {"/dev/sdz"}, set())
    assert unarmed([in_use], {"/dev/sdz"}, {"/dev/sdz"}) == []


def test_allow_mounted_write_is_sent_only_for_a_device_armed_twice():
    def text(allow, in_use, path="/dev/sdz"):
        return jobfiles_for(grid(1, 1, 1), path, local=False, allow=allow, allow_in_use=in_use)["M1"].text

    assert "allow_mounted_write" not in text(set(), set())
    assert "allow_mounted_write" not in text({"/dev/sdz"}, set())
    assert "allow_mounted_write" not in text(set(), {"/dev/sdz"})
    assert "allow_mounted_write=1" in text({"/dev/sdz"}, {"/dev/sdz"})
    assert "allow_mounted_write" not in text({"/t/x"}, {"/t/x"}, path="/t/x")  # files: never


@posix_only("a Linux manager's POSIX path is this machine's temporary folder")
def test_remote_targets_are_not_verified_and_say_so(tmp_path):
    existing = tmp_path / "precious.db"
    existing.write_bytes(b"x" * 10)
    files = jobfiles_for(grid(1, 1, 1), str(existing), local=False)
    assert write_risks(files, CreatedFiles(tmp_path / "r.json")) == []
    (job,) = files["M1"].jobs
    assert "cannot verify" in job.placement.note and "link to a device" in job.placement.note


def test_a_preconditioning_fill_writes_even_when_every_spec_only_reads(tmp_path):
    from app.model.plan import PRECONDITION_FILL, AccessSpec, Precondition

    existing = tmp_path / "precious.db"
    existing.write_bytes(b"x" * (2 << 20))
    plan = grid(1, 1, 1)
    # a read-only spec that even borrows the fill's name: the job's own spec decides, not a name
    plan.specs = [AccessSpec(PRECONDITION_FILL, [SpecLine(4096, 100, 100, 100)])]
    plan.managers[0].workers[0].specs = [PRECONDITION_FILL]
    plan.managers[0].workers[0].targets = [Target(str(existing))]
    plan.setup.precondition = Precondition(fill_passes=1)
    fill = expand(plan)[0]
    files = {
        "M1": step_jobfile(
            plan, fill, 0, "Linux", JobSettings(default_file_size=1 << 20, place=placer(True, "Linux"))
        )
    }
    (risk,) = write_risks(files, CreatedFiles(tmp_path / "r.json"))
    assert "did not create it" in risk.reason


@posix_only("a character device node stands for the raw disk")
def test_a_local_raw_disk_without_administrator_rights_is_refused_in_plain_words(tmp_path):
    """Windows without elevation: fio would say only "failed to open file"; Fiometer says why first."""
    from app.engine.guards.safety import raw_disks_refused

    disk = jobfiles_for(grid(1, 1, 1), "/dev/null")
    (msg,) = raw_disks_refused([disk], may_open_raw_disks=False)
    assert "/dev/null" in msg and "Run as administrator" in msg and "'M1'" in msg
    assert raw_disks_refused([disk], may_open_raw_disks=True) == []
    # a test file, and a disk on a remote manager (its rights are its own), are never refused for this
    assert raw_disks_refused([jobfiles_for(grid(1, 1, 1), str(tmp_path / "t.tst"))], False) == []
    assert raw_disks_refused([jobfiles_for(grid(1, 1, 1), "/dev/sdz", local=False)], False) == []


def test_elevation_is_asked_only_on_windows():
    from app.engine.devices.elevation import may_open_raw_disks

    assert may_open_raw_disks() is True or os.name == "nt"


@posix_only("a Linux manager is this machine")
def test_a_windows_raw_disk_on_a_linux_manager_is_refused_once_per_run():
    """Issue 36.6: a plan of many steps names its Windows raw disk once, with the steps, not once a step."""
    from app.engine.run.managers import local_endpoint
    from app.engine.run.runner import Runner, RunOptions, RunRefused
    from app.model.plan import SpecLine, Target
    from tests.helpers import grid

    plan = grid(1, 1, 1, specs=("A", "B", "C"))
    for s in plan.specs:
        s.lines = [SpecLine(4096, 100, 0, 100, 0, 1, 4096, 0)]
    plan.managers[0].workers[0].targets = [Target("\\\\.\\PhysicalDrive0")]
    with pytest.raises(RunRefused) as refused:
        prepared(Runner(plan, {"M1": local_endpoint("M1")}, None, RunOptions(run_time=1)))
    (line,) = [ln for ln in str(refused.value).splitlines() if "PhysicalDrive0" in ln]
    assert line.startswith("steps 1 to 3, manager 'M1'") and "Windows raw disk" in line and "map it" in line
    assert "target '\\\\.\\PhysicalDrive0':" in line, line  # as the user typed it, not Python's escaped repr


@posix_only("a symbolic link to /dev/null, a character device")
def test_arming_a_link_to_a_raw_device_says_so(tmp_path):
    from app.engine.run.managers import local_endpoint
    from app.engine.run.runner import Runner, RunOptions
    from app.model.plan import SpecLine, Target
    from tests.helpers import grid

    link = tmp_path / "rawlink"
    link.symlink_to("/dev/null")
    plan = grid(1, 1, 1)
    plan.specs[0].lines = [SpecLine(4096, 100, 0, 100, 0, 1, 4096, 0)]
    plan.managers[0].workers[0].targets = [Target(str(link))]
    armed = {str(link)}
    runner = prepared(
        Runner(
            plan,
            {"M1": local_endpoint("M1")},
            None,
            RunOptions(run_time=1, allow_write=armed, allow_write_in_use=armed),
        )
    )
    assert any(f"{link} is a link to the raw device /dev/null" in n for n in runner.notes), runner.notes
