"""Windows: which physical disk holds a path, asked of the Windows API (ctypes, no extra package).

A file's volume comes from ``GetVolumePathNameW`` (``C:\\`` or a mounted folder), the volume is opened
without access rights (``\\\\.\\C:``, or ``\\\\?\\Volume{…}`` for a folder mount) and
``IOCTL_STORAGE_GET_DEVICE_NUMBER`` names its disk: ``PhysicalDrive<N>``, the name a Windows admin
knows from Disk Management and Iometer's ``PHYSICALDRIVE:N``. A volume spread over several disks
(a dynamic or Storage Spaces volume), a network share, or an API that does not answer (Wine) gives
None: an honest "not known", never a guess and never an exception.

The steps are plain functions over a small API object so their logic is tested on any system; only
``_CtypesApi`` touches Windows.
"""

from __future__ import annotations

import re
import struct
import sys
from typing import Protocol

IOCTL_STORAGE_GET_DEVICE_NUMBER = 0x2D1080
_DRIVE_ROOT = re.compile(r"^([A-Za-z]):\\?$")
_PHYSICAL = re.compile(r"^(?:\\\\[.?]\\)PhysicalDrive(\d+)$", re.IGNORECASE)
_DEVICE_NUMBER = struct.Struct("<III")  # STORAGE_DEVICE_NUMBER: DeviceType, DeviceNumber, PartitionNumber


class WindowsApi(Protocol):
    def volume_path(self, path: str) -> str | None: ...
    def volume_guid(self, mount_point: str) -> str | None: ...
    def device_number(self, device: str) -> bytes | None: ...


def volume_device(volume_path: str, guid: str | None) -> str | None:
    """The name to open a volume by: ``\\\\.\\C:`` for a drive root, else its ``\\\\?\\Volume{…}`` name
    (without the trailing backslash, which would open its root folder instead of the volume)."""
    m = _DRIVE_ROOT.match(volume_path)
    if m:
        return f"\\\\.\\{m.group(1).upper()}:"
    if guid and guid.startswith("\\\\?\\Volume"):
        return guid.rstrip("\\")
    return None


def parse_device_number(raw: bytes | None) -> int | None:
    """STORAGE_DEVICE_NUMBER's DeviceNumber; None for a short or missing answer."""
    if raw is None or len(raw) < _DEVICE_NUMBER.size:
        return None
    _type, number, _partition = _DEVICE_NUMBER.unpack_from(raw)
    return number if number != 0xFFFFFFFF else None


def disk_of(path: str, api: WindowsApi | None = None) -> str | None:
    """``PhysicalDrive<N>`` holding ``path`` (a file, a drive, or a physical disk itself); None when
    Windows does not say (see module doc)."""
    m = _PHYSICAL.match(path.rstrip("\\"))
    if m:
        return f"PhysicalDrive{int(m.group(1))}"
    if api is None:
        if sys.platform != "win32":
            return None
        api = _CtypesApi()
    root = api.volume_path(path)
    if not root:
        return None
    device = volume_device(root, None if _DRIVE_ROOT.match(root) else api.volume_guid(root))
    if device is None:
        return None
    number = parse_device_number(api.device_number(device))
    return None if number is None else f"PhysicalDrive{number}"


class _CtypesApi:  # pragma: no cover - Windows only (run under Wine by `bootstrap.sh test-windows`)
    """The three Windows calls, each None on failure."""

    def __init__(self) -> None:
        import ctypes
        from ctypes import wintypes

        self._ct, self._wt = ctypes, wintypes
        k = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]  # Windows only; mypy checks as Linux
        k.GetVolumePathNameW.argtypes = [wintypes.LPCWSTR, wintypes.LPWSTR, wintypes.DWORD]
        k.GetVolumePathNameW.restype = wintypes.BOOL
        k.GetVolumeNameForVolumeMountPointW.argtypes = [wintypes.LPCWSTR, wintypes.LPWSTR, wintypes.DWORD]
        k.GetVolumeNameForVolumeMountPointW.restype = wintypes.BOOL
        k.CreateFileW.argtypes = [
            wintypes.LPCWSTR,
            wintypes.DWORD,
            wintypes.DWORD,
            wintypes.LPVOID,
            wintypes.DWORD,
            wintypes.DWORD,
            wintypes.HANDLE,
        ]
        k.CreateFileW.restype = wintypes.HANDLE
        k.DeviceIoControl.argtypes = [
            wintypes.HANDLE,
            wintypes.DWORD,
            wintypes.LPVOID,
            wintypes.DWORD,
            wintypes.LPVOID,
            wintypes.DWORD,
            ctypes.POINTER(wintypes.DWORD),
            wintypes.LPVOID,
        ]
        k.DeviceIoControl.restype = wintypes.BOOL
        k.CloseHandle.argtypes = [wintypes.HANDLE]
        self._k = k

    def volume_path(self, path: str) -> str | None:
        buf = self._ct.create_unicode_buffer(1024)
        return buf.value if self._k.GetVolumePathNameW(path, buf, len(buf)) else None

    def volume_guid(self, mount_point: str) -> str | None:
        buf = self._ct.create_unicode_buffer(1024)
        root = mount_point if mount_point.endswith("\\") else mount_point + "\\"
        return buf.value if self._k.GetVolumeNameForVolumeMountPointW(root, buf, len(buf)) else None

    def device_number(self, device: str) -> bytes | None:
        share_read_write, open_existing = 0x1 | 0x2, 3
        handle = self._k.CreateFileW(device, 0, share_read_write, None, open_existing, 0, None)
        if handle is None or handle == self._wt.HANDLE(-1).value:
            return None
        try:
            out = self._ct.create_string_buffer(_DEVICE_NUMBER.size)
            got = self._wt.DWORD(0)
            ok = self._k.DeviceIoControl(
                handle,
                IOCTL_STORAGE_GET_DEVICE_NUMBER,
                None,
                0,
                out,
                _DEVICE_NUMBER.size,
                self._ct.byref(got),
                None,
            )
            return out.raw[: got.value] if ok else None
        finally:
            self._k.CloseHandle(handle)
