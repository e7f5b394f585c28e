"""Iometer's geometry rule (app.engine.jobs.geometry), pure: the numbers read from an object -> sector, align 0,
fio size and offset. The real objects are in tests/integration/test_iometer_geometry.py."""

from app.engine.jobs import geometry as G


def test_a_unix_file_counts_its_file_systems_block_and_aligns_to_the_disk_sector_at_least_512():
    assert (G.of_file("linux", 4096, 512).sector, G.of_file("linux", 4096, 512).align) == (4096, 512)
    assert G.of_file("linux", 1024, 512).sector == 1024
    assert G.of_file("linux", 4096, 4096).align == 4096  # direct I/O on a 4096-byte disk
    assert G.of_file("linux", 4096, None).align == 512  # tmpfs: no disk under it
    assumed = G.of_file("darwin", None, None)
    assert (assumed.sector, assumed.align, assumed.known) == (4096, 512, False)


def test_a_windows_file_and_a_device_count_their_logical_sector():
    assert (G.of_file("windows", None, 4096).sector, G.of_file("windows", None, 4096).align) == (4096, 4096)
    assert G.of_file("windows", 4096, None).sector == 512  # the volume's bytes per sector, not a block
    assert (G.of_device(4096).sector, G.of_device(4096).align, G.of_device(4096).known) == (4096, 4096, True)
    assert (G.of_device(None).sector, G.of_device(3).sector) == (512, 512)  # unknown, or not a power of two


def test_region_maximum_disk_size_and_starting_sector():
    g = G.of_file("linux", 4096, 512)
    kw = {"is_device": False, "existing_size": None, "default_file_size": 1 << 30}
    assert G.region(65536, 0, g, **kw) == (256 << 20, 0)
    assert G.region(10, 2, g, **kw) == (40960, 8192)
    assert G.region(0, 0, g, **kw) == (1 << 30, 0)  # a new file needs a size
    assert G.region(0, 0, g, **{**kw, "existing_size": 256 << 20}) == (256 << 20, 0)  # the file's own
    assert G.region(0, 1, g, **{**kw, "existing_size": 256 << 20}) == ((256 << 20) - 4096, 4096)
    assert G.region(0, 3, G.of_device(4096), **{**kw, "is_device": True}) == (None, 12288)  # the whole device
