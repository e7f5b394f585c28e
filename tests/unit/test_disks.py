"""app.engine.devices.disks on a fake /sys/block and /proc/mounts."""

from pathlib import Path

from app.engine.devices.disks import empty_reason, list_disks, unsupported_reason
from app.model.units import format_bytes as format_size


def _disk(
    root: Path,
    name: str,
    sectors: int,
    model: str = "",
    parts: tuple[str, ...] = (),
    holders: tuple[str, ...] = (),
) -> None:
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
    assert unsupported_reason("Windows") == ""
    assert unsupported_reason("Linux") == ""
    assert list_disks("Linux", sys_block=tmp_path / "missing") == []


def test_disk_sizes_read_as_disk_tools_show_them() -> None:
    assert format_size(512) == "512 B"
    assert format_size(1 << 30) == "1 GiB"
    assert format_size(500107862016) == "465.8 GiB"
    assert format_size(int(1.5 * (1 << 40))) == "1.5 TiB"


# What WINDOWS_SCRIPT prints (Get-Disk / Get-Partition fields): the boot disk and a blank data disk.
WINDOWS_JSON = (
    '[{"Number":0,"FriendlyName":"Samsung SSD 980 PRO 1TB","Model":"Samsung SSD 980 PRO 1TB",'
    '"Size":1000204886016,"IsBoot":true,"IsSystem":true,"IsOffline":false,"IsReadOnly":false,'
    '"NumberOfPartitions":4,"LogicalSectorSize":512,"DriveLetters":["C:"],'
    '"AccessPaths":["C:\\\\","\\\\\\\\?\\\\Volume{1b2c}\\\\"]},'
    '{"Number":2,"FriendlyName":"MSFT Virtual Disk","Model":"Virtual Disk","Size":68719476736,'
    '"IsBoot":false,"IsSystem":false,"IsOffline":true,"IsReadOnly":false,"NumberOfPartitions":0,'
    '"LogicalSectorSize":4096,"DriveLetters":[],"AccessPaths":[]}]'
)


def test_windows_disks_from_get_disk():
    from app.engine.devices.disks import WINDOWS_SCRIPT

    seen = []

    def powershell(script):
        seen.append(script)
        return WINDOWS_JSON

    boot, blank = list_disks("Windows", powershell=powershell)
    assert "Get-Disk" in seen[0] and "ConvertTo-Json" in seen[0] and seen[0] == WINDOWS_SCRIPT
    assert (boot.path, boot.size_bytes, boot.model) == (
        "\\\\.\\PhysicalDrive0",
        1000204886016,
        "Samsung SSD 980 PRO 1TB",
    )
    assert boot.in_use and boot.mountpoints == ("C:",) and "Windows boot disk" in boot.holders
    assert boot.state == "mounted at C:"
    assert (blank.path, blank.in_use, blank.state, blank.logical_sector) == (
        "\\\\.\\PhysicalDrive2",
        False,
        "unused",
        4096,
    )


def test_windows_single_disk_object_and_failures():
    (d,) = list_disks(
        "Windows", powershell=lambda s: '{"Number":3,"Size":10,"DriveLetters":[],"AccessPaths":[]}'
    )
    assert d.path == "\\\\.\\PhysicalDrive3"

    def broken(script):
        raise OSError("Get-Disk : Access denied")

    assert list_disks("Windows", powershell=broken) == []
    assert list_disks("Windows", powershell=lambda s: "not json") == []
    assert "PhysicalDriveN" in empty_reason("Windows")
    assert "Windows 8" not in empty_reason("Windows")  # Fiometer runs on Windows 10 and later only
    assert empty_reason("Linux") == "No disks found in /sys/block."
