"""Iometer's geometry of a target: what its "sector" is, and where "align 0" puts an I/O (pure; no OS calls).

Dynamo (eilerjc/iometer, ``IOTargetDisk.cpp``, ``TargetDisk::Set_Sizes``) counts *Maximum Disk Size* and
*Starting Sector* in ``disk_info.sector_size``, which it takes from the object it opens:

- a test file on Linux, macOS or Solaris: the file system's block, ``statfs().f_bsize``;
- a raw disk on Linux: the logical sector, ``ioctl(BLKSSZGET)``; on macOS ``DKIOCGETBLOCKSIZE``;
- a Windows volume (its test file): ``GetDiskFreeSpace`` bytes per sector; a physical disk: the drive
  geometry's ``BytesPerSector``.

An access line's "align 0" means "sector boundaries". Dynamo aligns a 0 on the wire to that same
``sector_size``; the fork's Qt front end (``core/AccessSpecCatalog.h``, ``fillWireAccess``) sends 512 for it,
and that is what a Linux Dynamo did when traced (issue 38: a file on ext4, 4096-byte blocks, I/Os on 512-byte
boundaries). Fiometer aligns "align 0" to the logical sector of the storage under the target: the raw device's
own, for a file the device holding its file system, 512 where there is none (tmpfs) or it is unknown. That is
512 where the traced Dynamo used 512, and never below what direct I/O on that device accepts (a 512-byte
boundary on a 4096-byte-sector disk fails with EINVAL).

*Maximum Disk Size* 0: Dynamo uses the whole object, an existing test file's own size (``st_size``).
"""

from __future__ import annotations

from dataclasses import dataclass

WINDOWS = "windows"
BASE_SECTOR = 512  # the sector when nothing else is known, and the smallest "align 0" boundary
FS_BLOCK = 4096  # the usual statfs f_bsize (ext4, xfs, btrfs, tmpfs, APFS): assumed where it cannot be read


@dataclass(frozen=True)
class Geometry:
    sector: int  # bytes of Iometer's sector: Maximum Disk Size and Starting Sector count it
    align: int  # bytes of an "align 0" (sector boundaries) I/O's boundary
    source: str  # where the numbers come from, in words ("the file system's block", "assumed", ...)

    @property
    def known(self) -> bool:
        return not self.source.startswith("assumed")


def _valid(n: int | None) -> int | None:
    """A sector size as read: a positive power of two, else unknown."""
    return n if n and n > 0 and not n & (n - 1) else None


def of_file(os_name: str, fs_block: int | None, disk_sector: int | None) -> Geometry:
    """A test file: ``fs_block`` is statvfs f_bsize (Unix), ``disk_sector`` the logical sector of the device
    under its file system (Windows: the volume's bytes per sector). None: could not be read."""
    disk = _valid(disk_sector)
    align = max(disk or BASE_SECTOR, BASE_SECTOR)
    if os_name == WINDOWS:
        return Geometry(align, align, "the volume's bytes per sector" if disk else "assumed (512 bytes)")
    block = _valid(fs_block)
    if block is None:
        return Geometry(FS_BLOCK, align, f"assumed (the usual file system block, {FS_BLOCK} bytes)")
    return Geometry(block, align, "the file system's block")


def of_device(logical_sector: int | None) -> Geometry:
    """A raw disk or partition: its logical sector (BLKSSZGET / sysfs logical_block_size)."""
    sector = _valid(logical_sector)
    if sector is None:
        return Geometry(BASE_SECTOR, BASE_SECTOR, "assumed (512 bytes)")
    return Geometry(sector, sector, "the device's logical sector")


def assumed(is_device: bool, os_name: str) -> Geometry:
    """Where nothing can be looked at (a plain fio --server, a path not examined yet)."""
    return of_device(None) if is_device else of_file(os_name, None, None)


def region(
    max_sectors: int,
    start_sector: int,
    geometry: Geometry,
    *,
    is_device: bool,
    existing_size: int | None,
    default_file_size: int,
) -> tuple[int | None, int]:
    """(fio size=, fio offset=) of a target, as Dynamo covers it. size None: the whole device.

    Maximum Disk Size 0 is the whole object: a device's, an existing test file's own size (less the part
    before the starting sector); a new test file needs a size, ``default_file_size``."""
    offset = start_sector * geometry.sector
    size = max_sectors * geometry.sector
    if size:
        return size, offset
    if is_device:
        return None, offset
    if existing_size is not None and existing_size > offset:
        return existing_size - offset, offset
    return default_file_size, offset
