"""app.engine.disks on a fake /sys/block and /proc/mounts."""

from pathlib import Path

from app.engine.disks import format_size, list_disks, unsupported_reason


def _disk(root: Path, name: str, sectors: int, model: str = "", parts: tuple[str, ...] = (),
          holders: tuple[str, ...] = ()) -> None:
    d = root / name
    (d / "device").mkdir(parents=True)
    (d / "queue").mkdir()
    (d / "holders").mkdir()
    (d / "size").write_text(f"{sectors}\n")
    (d / "removable").write_text("0\n")
    (d / "ro").write_text("0\n")
    (d / "queue" / "rotational").write_text("0\n")
    (d / "queue" / "logical_block_size").write_text("4096\n")
    if model:
        (d / "device" / "model").write_text(model + "   \n")
        (d / "device" / "vendor").write_text("ATA\n")
    for p in parts:
        (d / p / "holders").mkdir(parents=True)
        (d / p / "partition").write_text("1\n")
    for h in holders:
        (d / "holders" / h).mkdir()


def test_linux_disks_with_mounts_partitions_holders_and_swap(tmp_path: Path) -> None:
    sb = tmp_path / "block"
    _disk(sb, "sda", 1000215216, "Samsung SSD 860", parts=("sda1", "sda2"))
    _disk(sb, "sdb", 2048, "Blank disk")
    _disk(sb, "sdc", 4096, "PV disk", holders=("dm-0",))
    _disk(sb, "loop0", 0)  # empty loop device: not listed
    _disk(sb, "zram0", 4096)  # compressed RAM: not listed
    _disk(sb, "sdd", 8192, "Swap disk")
    mounts = tmp_path / "mounts"
    mounts.write_text("/dev/sda2 /mnt/my\\040data ext4 rw 0 0\nproc /proc proc rw 0 0\n")
    swaps = tmp_path / "swaps"
    swaps.write_text("Filename Type Size Used Priority\n/dev/sdd partition 4096 0 -2\n")

    disks = {d.name: d for d in list_disks("Linux", sys_block=sb, proc_mounts=mounts, proc_swaps=swaps)}

    assert sorted(disks) == ["sda", "sdb", "sdc", "sdd"]
    sda = disks["sda"]
    assert sda.path == "/dev/sda"
    assert sda.size_bytes == 1000215216 * 512
    assert sda.model == "ATA Samsung SSD 860"
    assert sda.partitions == ("sda1", "sda2")
    assert sda.mountpoints == ("/mnt/my data",)
    assert sda.in_use and sda.state == "mounted at /mnt/my data"
    assert sda.logical_sector == 4096 and sda.rotational is False
    assert not disks["sdb"].in_use and disks["sdb"].state == "unused"
    assert disks["sdc"].state == "used by dm-0"
    assert disks["sdd"].state == "mounted at [SWAP]"


def test_other_systems_are_an_explained_empty_list(tmp_path: Path) -> None:
    assert list_disks("Windows") == []
    assert "PhysicalDrive" in unsupported_reason("Windows")
    assert unsupported_reason("Linux") == ""
    assert list_disks("Linux", sys_block=tmp_path / "missing") == []


def test_format_size() -> None:
    assert format_size(512) == "512 B"
    assert format_size(1 << 30) == "1.0 GiB"
    assert format_size(int(1.5 * (1 << 40))) == "1.5 TiB"
