"""Read a Windows shortcut (.lnk, MS-SHLLINK): its target, arguments and working folder, one per line.

packaging/wine/setup.sh package checks the installer's Start menu entries with it and runs the
*Fiometer Command Prompt* entry's own command. Linux Python, standard library only:
    python3 lnk.py FILE.lnk   ->  target=...\\n args=...\\n workdir=...
"""

import struct
import sys
from pathlib import Path

HAS_ID_LIST, HAS_LINK_INFO, HAS_NAME, HAS_REL_PATH, HAS_WORKDIR, HAS_ARGS, HAS_ICON = (
    1 << i for i in range(7)
)
IS_UNICODE = 1 << 7


def read(data: bytes) -> dict[str, str]:
    if data[:4] != b"\x4c\x00\x00\x00":
        raise ValueError("not a shortcut (.lnk): its header size is not 0x4C")
    flags = struct.unpack_from("<I", data, 20)[0]
    pos = 76
    if flags & HAS_ID_LIST:
        pos += 2 + struct.unpack_from("<H", data, pos)[0]
    out = {"target": ""}
    if flags & HAS_LINK_INFO:
        size, _header, info_flags, _vol, base_off = struct.unpack_from("<IIIII", data, pos)
        if info_flags & 1:  # VolumeIDAndLocalBasePath: the target's local path (ANSI)
            end = data.index(b"\0", pos + base_off)
            out["target"] = data[pos + base_off : end].decode(
                "mbcs" if sys.platform == "win32" else "latin-1"
            )
        pos += size
    wide = bool(flags & IS_UNICODE)
    for flag, name in (
        (HAS_NAME, "name"),
        (HAS_REL_PATH, "relpath"),
        (HAS_WORKDIR, "workdir"),
        (HAS_ARGS, "args"),
        (HAS_ICON, "icon"),
    ):
        if flags & flag:
            count = struct.unpack_from("<H", data, pos)[0]
            size = count * (2 if wide else 1)
            raw = data[pos + 2 : pos + 2 + size]
            out[name] = raw.decode("utf-16-le" if wide else "latin-1")
            pos += 2 + size
    return out


if __name__ == "__main__":
    fields = read(Path(sys.argv[1]).read_bytes())
    for key in ("target", "args", "workdir", "icon"):
        print(f"{key}={fields.get(key, '').replace(chr(0), '')}")
