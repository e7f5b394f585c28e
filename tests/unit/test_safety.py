"""Destructive writes need arming: raw devices, existing foreign files, files fio would rewrite."""

from app.engine.jobfile import step_jobfile
from app.engine.safety import CreatedFiles, device_in_use, unarmed, write_risks
from app.engine.sequence import expand
from app.model.plan import SpecLine, Target
from tests.helpers import grid


def risks_for(plan, registry, target_path, reads=0, local=True):
    plan.specs[0].lines = [SpecLine(4096, 100, reads, 100)]
    plan.managers[0].workers[0].targets = [Target(target_path)]
    files = {"M1": step_jobfile(plan, expand(plan)[0], 0, "Linux", default_file_size=1 << 20)}
    return write_risks(plan, files, {"M1"} if local else set(), registry)


def test_new_file_is_safe_and_foreign_existing_file_needs_arming(tmp_path):
    reg = CreatedFiles(tmp_path / "reg.json")
    plan = grid(1, 1, 1)
    assert risks_for(plan, reg, str(tmp_path / "new.tst")) == []
    existing = tmp_path / "precious.db"
    existing.write_bytes(b"x" * (2 << 20))
    (risk,) = risks_for(plan, reg, str(existing))
    assert "Fiometer did not create it" in risk.reason
    (msg,) = unarmed([risk], set(), set())
    assert f"--allow-write '{existing}'" in msg
    assert unarmed([risk], {str(existing)}, set()) == []
    # a read-only job on a large enough foreign file is fine
    assert risks_for(plan, reg, str(existing), reads=100) == []


def test_small_existing_file_would_be_rewritten_even_by_a_read_job(tmp_path):
    small = tmp_path / "notes.txt"
    small.write_text("19 bytes of notes.\n")
    (risk,) = risks_for(grid(1, 1, 1), CreatedFiles(tmp_path / "r.json"), str(small), reads=100)
    assert "would rewrite it" in risk.reason


def test_files_fiometer_created_are_reused_without_arming(tmp_path):
    reg = CreatedFiles(tmp_path / "sub" / "reg.json")
    f = tmp_path / "iobw.tst"
    f.write_bytes(b"\0" * 10)
    reg.add([str(f)])
    assert str(f) in reg
    assert risks_for(grid(1, 1, 1), reg, str(f)) == []


def test_raw_device_writes_need_arming_and_in_use_needs_a_second_override(tmp_path):
    plan = grid(1, 1, 1)
    (risk,) = risks_for(plan, CreatedFiles(tmp_path / "r.json"), "/dev/sdz")
    assert "raw device" in risk.reason
    assert risks_for(plan, CreatedFiles(tmp_path / "r.json"), "/dev/sdz", reads=100) == []
    in_use = risk.__class__(**{**risk.__dict__, "in_use": True})
    assert "mounted or partitioned" in unarmed([in_use], {"/dev/sdz"}, set())[0]
    assert unarmed([in_use], {"/dev/sdz"}, {"/dev/sdz"}) == []


def test_device_in_use_detects_mounts_and_partitions(tmp_path):
    assert device_in_use("/dev/sdq", "/dev/sdq1 /data ext4 rw 0 0\n", tmp_path)
    assert not device_in_use("/dev/sdq", "/dev/sda1 / ext4 rw 0 0\n", tmp_path)
    (tmp_path / "sdq" / "sdq1").mkdir(parents=True)
    (tmp_path / "sdq" / "sdq1" / "partition").write_text("1")
    assert device_in_use("/dev/sdq", "", tmp_path)
