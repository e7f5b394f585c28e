"""What fio will open: paths examined on this machine, normalised for remote ones, fio's syntax refused."""

import os
import stat

import pytest

from app.engine.devices import linux_devices
from app.engine.jobs import windows_paths
from app.engine.jobs.jobfile import JobSettings, step_jobfile
from app.engine.jobs.placement import PlacementError, follow, place_local, place_remote
from app.engine.jobs.sequence import expand
from app.engine.jobs.targets import TargetError, fio_filename, fio_path_problem
from app.model.plan import Target
from tests.helpers import grid
from tests.platform_marks import posix_only


@posix_only("symbolic links followed component by component (the POSIX walk of place_local)")
def test_links_are_followed_to_the_object_and_dots_and_doubled_slashes_vanish(tmp_path):
    real = tmp_path / "real.bin"
    real.write_bytes(b"x")
    (tmp_path / "link").symlink_to(real)
    (tmp_path / "dir").mkdir()
    (tmp_path / "dirlink").symlink_to(tmp_path / "dir")
    assert place_local(str(tmp_path / "link")).path == str(real)
    assert place_local("/" + str(tmp_path / "link")).path == str(real)
    assert place_local(str(tmp_path) + "/./link").path == str(real)
    # '..' after a link applies to the link's target, as the kernel does it (not to the text)
    assert follow(str(tmp_path / "dirlink" / ".." / "real.bin"))[0] == str(real)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to(tmp_path / "dir")
    assert follow(str(tmp_path / "sub" / "up" / ".." / "real.bin"))[0] == str(real)


@posix_only("device nodes (os.mknod) and symlinks")
def test_a_link_to_a_device_is_a_device_found_by_its_file_type(tmp_path):
    (tmp_path / "innocent.tst").symlink_to("/dev/null")
    placed = place_local(str(tmp_path / "innocent.tst"))
    assert placed.is_device and placed.path == "/dev/null" and placed.in_use  # character device: unknown use
    plan = grid(1, 1, 1)
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "innocent.tst"))]
    (job,) = step_jobfile(plan, expand(plan)[0], 0, "Linux", JobSettings(place=place_local)).jobs
    assert job.is_device and job.path == "/dev/null"


@posix_only("device nodes (os.mknod) and symlinks")
def test_a_device_node_outside_dev_is_a_device(tmp_path):
    node = block_node(tmp_path / "disguised", 7, 250)  # a block device node outside /dev, loop minor 250
    placed = place_local(str(node), device_uses=lambda dev: [f"checked {dev}"])
    assert placed.is_device and placed.in_use == ("checked (7, 250)",)


def test_relative_paths_are_made_absolute_against_fiometers_folder(tmp_path):
    assert place_local("iobw.tst", cwd=str(tmp_path)).path == str(tmp_path / "iobw.tst")
    assert place_local("../x/iobw.tst", cwd=str(tmp_path / "a")).missing_folder == str(tmp_path / "x")


@posix_only("/proc and /dev/fd")
def test_paths_through_proc_are_refused(tmp_path):
    for path in (
        "/proc/self/fd/0",
        f"/proc/{os.getpid()}/root/tmp",
        "/proc/self/root/dev/null",
        "/dev/fd/0",
        "/dev/stdin",
    ):
        with pytest.raises(PlacementError, match="/proc"):
            place_local(path)
    (tmp_path / "sneaky").symlink_to("/proc/self/root/dev/null")
    with pytest.raises(PlacementError, match="/proc"):
        place_local(str(tmp_path / "sneaky"))


@posix_only("FIFOs (os.mkfifo) and /dev")
def test_folders_pipes_missing_devices_and_missing_folders(tmp_path):
    with pytest.raises(PlacementError, match="is a folder"):
        place_local(str(tmp_path))
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(PlacementError, match="neither a file nor a device"):
        place_local(str(tmp_path / "fifo"))
    with pytest.raises(PlacementError, match="fio would create a plain file"):
        place_local("/dev/fiometer-no-such-disk")
    assert place_local(str(tmp_path / "no" / "where.tst")).missing_folder == str(tmp_path / "no")
    (tmp_path / "file").write_text("x")
    with pytest.raises(PlacementError, match="not a folder"):
        place_local(str(tmp_path / "file" / "x.tst"))


@posix_only("symbolic links followed component by component (the POSIX walk of place_local)")
def test_a_link_whose_target_fio_would_read_differently_is_refused(tmp_path):
    (tmp_path / "ok").symlink_to(tmp_path / "a;b")
    with pytest.raises(PlacementError, match="';'"):
        place_local(str(tmp_path / "ok"))


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/data/${HOME}/x", "'${'"),
        ("/data/$ncpus", "number of CPUs"),
        ("/data/$pagesize", "page size"),
        ("/data/a;b", "';'"),
        ("/data/a#b", "'#'"),
        ("/data/x ", "blank"),
        (" /data/x", "blank"),
        ("/data/x\t", "U+0009"),
        ("/data/x\nexec_prerun=id", "U+000A"),
        ("/data/\x1b[1m", "U+001B"),
        ("/" + "x" * 5000, "longer than"),
        ("", "empty"),
    ],
)
def test_fio_syntax_in_a_path_is_refused_naming_the_character(path, words):
    assert words in (fio_path_problem(path) or "")
    plan = grid(1, 1, 1)
    plan.managers[0].workers[0].targets = [Target(path or "C:")]
    with pytest.raises(TargetError):
        step_jobfile(
            plan, expand(plan)[0], 0, "Linux", JobSettings(mapping={"C:": path} if not path else None)
        )


def test_paths_fio_reads_literally_pass():
    for path in ("/data/iobw.tst", "/data/a b/c", "/data/a=b", "/data/C$/x", "/data/x:y", "/data/é"):
        assert fio_path_problem(path) is None


def test_colons_are_escaped_for_fio():
    assert fio_filename("C:\\iobw.tst") == "C\\:\\iobw.tst"
    assert fio_filename("/a:b:c") == "/a\\:b\\:c"


def test_remote_paths_are_normalised_by_text_and_anything_like_a_device_is_one():
    assert place_remote("//dev/sdb", False, "Linux").is_device
    assert place_remote("/./dev//sdb", False, "Linux").path == "/dev/sdb"
    placed = place_remote("/data/iobw.tst", False, "Linux", "DB01")
    assert not placed.is_device and not placed.verified and "manager 'DB01'" in placed.note
    for bad, words in (
        ("/tmp/../dev/sdb", "'..'"),
        ("data/iobw.tst", "absolute"),
        ("/proc/self/root/dev/sdb", "/proc"),
    ):
        with pytest.raises(PlacementError, match=words):
            place_remote(bad, False, "Linux")


def test_windows_devices_and_paths():
    for dev in (
        "\\\\.\\PhysicalDrive0",
        "\\\\.\\C:",
        "//./PhysicalDrive3",
        "\\\\?\\GLOBALROOT\\Device\\Harddisk1",
        "\\\\?\\Volume{12345678-1234-1234-1234-123456789abc}",
        "C:",
        "C:\\temp\\NUL",
        "CON",
        "D:\\x\\com1.txt",
        "\\\\?\\PhysicalDrive1",
    ):
        assert windows_paths.is_device(dev), dev
    for f in (
        "C:\\iobw.tst",
        "\\\\?\\C:\\dir\\x",
        "\\\\?\\UNC\\srv\\share\\x",
        "\\\\srv\\share\\iobw.tst",
        "D:\\console.txt",
    ):
        assert not windows_paths.is_device(f), f
    assert windows_paths.normalise("C:/data//./iobw.tst") == "C:\\data\\iobw.tst"
    for bad in ("iobw.tst", "C:iobw.tst", "\\data\\x", "C:\\a\\..\\b"):
        with pytest.raises(ValueError):
            windows_paths.normalise(bad)
    assert place_remote("\\\\.\\PhysicalDrive2", False, "Windows").is_device
    assert place_remote("C:\\temp\\NUL", False, "Windows").is_device
    with pytest.raises(PlacementError, match="not a full path"):
        place_remote("iobw.tst", False, "Windows")


def test_windows_job_text_escapes_the_drive_colon():
    plan = grid(1, 1, 1)
    plan.managers[0].workers[0].targets = [Target("C:")]
    jf = step_jobfile(plan, expand(plan)[0], 0, "Windows")
    assert "filename=C\\:\\iobw.tst" in jf.text.splitlines()
    plan.managers[0].workers[0].targets = [Target("PHYSICALDRIVE:1")]
    (job,) = step_jobfile(plan, expand(plan)[0], 0, "Windows").jobs
    assert job.is_device and job.path == "\\\\.\\PhysicalDrive1"


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def fake_sys(tmp_path):
    sysdev = tmp_path / "sys"
    write(sysdev / "8:0" / "dev", "8:0\n")
    write(sysdev / "8:0" / "sda1" / "partition", "1\n")
    write(sysdev / "8:0" / "sda1" / "dev", "8:1\n")
    (sysdev / "8:0" / "holders").mkdir()
    write(sysdev / "8:1" / "dev", "8:1\n")
    (sysdev / "8:1" / "holders").mkdir()
    write(sysdev / "8:16" / "dev", "8:16\n")
    (sysdev / "8:16" / "holders" / "dm-0").mkdir(parents=True)
    write(sysdev / "7:3" / "dev", "7:3\n")
    (sysdev / "7:3" / "holders").mkdir()
    return sysdev


def test_in_use_is_decided_by_device_number(tmp_path):
    sysdev = fake_sys(tmp_path)
    mountinfo = tmp_path / "mountinfo"
    write(
        mountinfo,
        "22 1 8:1 / /data\\040disk rw,relatime - ext4 /dev/whatever rw\n"
        "23 1 0:45 / /srv rw - btrfs /nonexistent rw\n",
    )
    swaps = tmp_path / "swaps"
    write(swaps, "Filename Type Size Used Priority\n")

    def uses(dev):
        return linux_devices.device_uses(dev, mountinfo=mountinfo, swaps=swaps, sys_dev_block=sysdev)

    whole = uses((8, 0))
    assert "mounted at /data disk (partition sda1)" in whole and "partitioned (sda1)" in whole
    assert uses((8, 1)) == ["mounted at /data disk"]
    assert uses((8, 16)) == ["held by dm-0 (device-mapper, LVM, RAID or encryption)"]
    assert uses((7, 3)) == []
    assert "cannot tell" in uses((9, 9))[0]


def block_node(path, major: int, minor: int):
    """A block device node outside /dev (needs root)."""
    if os.geteuid() != 0:
        pytest.skip("creating a device node needs root")
    os.mknod(path, 0o600 | stat.S_IFBLK, os.makedev(major, minor))
    return path


def uses_of_7_3(tmp_path, mountinfo: str = "", swaps: str = "Filename Type Size Used Priority\n"):
    write(tmp_path / "mi", mountinfo)
    write(tmp_path / "swaps", swaps)
    return linux_devices.device_uses(
        (7, 3), mountinfo=tmp_path / "mi", swaps=tmp_path / "swaps", sys_dev_block=fake_sys(tmp_path)
    )


@posix_only("Linux's /proc/swaps and mountinfo with device numbers")
def test_active_swap_on_a_device_counts_as_in_use(tmp_path):
    node = block_node(tmp_path / "swapdev", 7, 3)
    assert uses_of_7_3(tmp_path, swaps=f"Filename Type Size Used Priority\n{node} partition 1024 0 -2\n") == [
        f"active swap {node}"
    ]


@posix_only("Linux's /proc/swaps and mountinfo with device numbers")
def test_a_mount_whose_number_is_anonymous_is_matched_by_its_source(tmp_path):
    node = block_node(tmp_path / "src", 7, 3)
    assert uses_of_7_3(tmp_path, mountinfo=f"23 1 0:45 / /srv rw - btrfs {node} rw\n") == ["mounted at /srv"]


def layered_sys(tmp_path, shared: bool = False):
    """sysfs as the kernel lays it out (``/sys/dev/block/M:m`` links to the device's folder): loop5 (7:5)
    holds a mounted file system, loop6 (7:6) lies over loop5, dm-0 (253:0, device-mapper) over loop6; with
    ``shared`` a dm-1 holds loop6 too."""
    devices, sysdev = tmp_path / "devices", tmp_path / "dev-block"
    for name, number in (("loop5", "7:5"), ("loop6", "7:6"), ("dm-0", "253:0"), ("dm-1", "253:1")):
        write(devices / name / "dev", number + "\n")
        (devices / name / "holders").mkdir()
        (devices / name / "slaves").mkdir()
        sysdev.mkdir(exist_ok=True)
        (sysdev / number).symlink_to(devices / name)
    for name in ("loop5", "loop6"):
        (devices / name / "loop").mkdir()
    (devices / "dm-0" / "slaves" / "loop6").symlink_to(devices / "loop6")
    (devices / "loop6" / "holders" / "dm-0").symlink_to(devices / "dm-0")
    if shared:
        (devices / "dm-1" / "slaves" / "loop6").symlink_to(devices / "loop6")
        (devices / "loop6" / "holders" / "dm-1").symlink_to(devices / "dm-1")
    write(tmp_path / "mi", "22 1 7:5 / /data rw,relatime - ext4 /dev/loop5 rw\n")
    write(tmp_path / "swaps", "Filename Type Size Used Priority\n")
    backings = [("loop5", ("file", 2049, 12)), ("loop6", ("block", 7, 5))]

    def uses(dev):
        return linux_devices.device_uses(
            dev, mountinfo=tmp_path / "mi", swaps=tmp_path / "swaps", sys_dev_block=sysdev, backings=backings
        )

    return uses


@posix_only("a sysfs tree of symbolic links, laid out as Linux lays out /sys/dev/block")
def test_a_device_mapper_device_over_a_loop_stacked_on_a_mounted_one_is_in_use(tmp_path):
    """Issue 36.3, the stack through every layer: dm-0 writes through loop6 to the mounted loop5."""
    uses = layered_sys(tmp_path)
    assert uses((253, 0)) == [
        "its underlying device loop6 (7:6) is in use (its backing device 7:5 is in use (mounted at /data))"
    ]
    assert uses((7, 6)) == [
        "held by dm-0 (device-mapper, LVM, RAID or encryption)",
        "its backing device 7:5 is in use (mounted at /data)",
    ]


@posix_only("a sysfs tree of symbolic links, laid out as Linux lays out /sys/dev/block")
def test_a_device_under_two_device_mapper_devices_is_in_use_for_each(tmp_path):
    """loop6 alone (not stacked on anything in use) under dm-0 and dm-1: writing dm-0 may overwrite dm-1's
    data, so dm-0 is in use through loop6's other holder; unmounted below, nothing else counts."""
    uses = layered_sys(tmp_path, shared=True)
    write(tmp_path / "mi", "")
    assert uses((253, 0)) == [
        "its underlying device loop6 (7:6) is in use (held by dm-1 (device-mapper, LVM, RAID or encryption))"
    ]
    assert uses((253, 1))[0].startswith("its underlying device loop6 (7:6) is in use (held by dm-0 ")
