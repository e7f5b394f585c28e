"""Render resources/icons/fiometer.svg to PNGs (16..256 px) and a Windows .ico, with Qt only.

    python packaging/make_icons.py [OUT_DIR]      # default: resources/icons next to the SVG

The .ico holds 32-bit BGRA bitmaps (with an AND mask, for old readers) for the sizes below 256 and a
PNG for 256, which is what Windows' own icons do; it is written here byte by byte (no Pillow).
Run it after editing the SVG and commit the results; tests/unit/test_icons.py checks they match.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

SIZES = (16, 32, 48, 64, 128, 256)
ROOT = Path(__file__).resolve().parents[1]
SVG = ROOT / "resources" / "icons" / "fiometer.svg"


def png_name(size: int) -> str:
    return f"fiometer-{size}.png"


# --- ICO (Qt-free) ---------------------------------------------------------------------------------------
def dib_entry(size: int, bgra_top_down: bytes) -> bytes:
    """An ICO image as a BITMAPINFOHEADER + bottom-up 32-bit BGRA rows + a 1-bit AND mask."""
    row = size * 4
    if len(bgra_top_down) != row * size:
        raise ValueError(f"expected {row * size} bytes of BGRA for {size}x{size}, got {len(bgra_top_down)}")
    rows = [bgra_top_down[y * row : (y + 1) * row] for y in range(size)]
    xor = b"".join(reversed(rows))
    mask_row = (size + 31) // 32 * 4
    mask = bytearray()
    for y in reversed(range(size)):  # bit set = transparent, for readers that ignore alpha
        bits = bytearray(mask_row)
        for x in range(size):
            if rows[y][x * 4 + 3] == 0:
                bits[x // 8] |= 0x80 >> (x % 8)
        mask += bits
    header = struct.pack("<IiiHHIIiiII", 40, size, size * 2, 1, 32, 0, len(xor) + len(mask), 0, 0, 0, 0)
    return header + xor + bytes(mask)


def ico_bytes(images: list[tuple[int, bytes]]) -> bytes:
    """An .ico from (size, encoded image) pairs; each image is a PNG or a dib_entry()."""
    count = len(images)
    offset = 6 + 16 * count
    directory, data = bytearray(struct.pack("<HHH", 0, 1, count)), bytearray()
    for size, blob in images:
        if not 1 <= size <= 256:
            raise ValueError(f"icon size {size} is outside 1..256")
        dim = 0 if size == 256 else size
        directory += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(blob), offset + len(data))
        data += blob
    return bytes(directory + data)


def read_ico_directory(data: bytes) -> list[tuple[int, int, bool]]:
    """(width, height, is_png) per entry: for tests and for checking a built .ico."""
    reserved, kind, count = struct.unpack_from("<HHH", data, 0)
    if reserved != 0 or kind != 1:
        raise ValueError("not an .ico file")
    out = []
    for i in range(count):
        w, h, _c, _r, _p, _b, length, offset = struct.unpack_from("<BBBBHHII", data, 6 + 16 * i)
        blob = data[offset : offset + length]
        if len(blob) != length:
            raise ValueError(f"entry {i} runs past the end of the file")
        out.append((w or 256, h or 256, blob.startswith(b"\x89PNG\r\n\x1a\n")))
    return out


# --- rendering (Qt) ----------------------------------------------------------------------------------------
def render(svg: Path, size: int):
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg}: not a valid SVG for Qt")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image.convertToFormat(QImage.Format.Format_ARGB32)


def png_bytes(image) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buf, "PNG"):
        raise OSError("Qt could not encode a PNG")
    buf.close()
    return bytes(data.data())


def bgra(image) -> bytes:
    """Top-down BGRA rows of an ARGB32 image (its memory layout on little-endian machines)."""
    if sys.byteorder != "little":
        raise RuntimeError("ARGB32 is BGRA in memory only on little-endian machines")
    size = image.width() * 4
    raw = bytes(image.constBits())
    return b"".join(
        raw[y * image.bytesPerLine() : y * image.bytesPerLine() + size] for y in range(image.height())
    )


def make_icons(out_dir: Path, svg: Path = SVG) -> list[Path]:
    from PySide6.QtGui import QGuiApplication

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    out_dir.mkdir(parents=True, exist_ok=True)
    written, ico_images = [], []
    for size in SIZES:
        image = render(svg, size)
        png = png_bytes(image)
        path = out_dir / png_name(size)
        path.write_bytes(png)
        written.append(path)
        ico_images.append((size, png if size == 256 else dib_entry(size, bgra(image))))
    ico = out_dir / "fiometer.ico"
    ico.write_bytes(ico_bytes(ico_images))
    written.append(ico)
    return written


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else SVG.parent
    for path in make_icons(out):
        print(f"{path}  {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
