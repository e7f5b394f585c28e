"""The committed icons: what packaging/make_icons.py renders from the SVG, and a .ico Windows and Qt can read."""

import importlib.util
import struct
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage, QImageReader

ROOT = Path(__file__).resolve().parents[2]
ICONS = ROOT / "resources" / "icons"


def load_make_icons():
    spec = importlib.util.spec_from_file_location("make_icons", ROOT / "packaging" / "make_icons.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mi = load_make_icons()


# Qt's rasteriser differs between machines (CPU features, library builds) by a step or two of 255 in a
# few anti-aliased pixels; any real change to the drawing moves some pixel by far more.
RASTER_TOLERANCE = 2


def channels(img: QImage) -> np.ndarray:
    img = img.convertToFormat(QImage.Format.Format_ARGB32)
    return np.frombuffer(bytes(img.constBits()), dtype=np.uint8).astype(np.int16)


def same_pixels(a: QImage, b: QImage, tolerance: int = 0) -> bool:
    """Same size and every channel of every pixel within ``tolerance`` (0: identical bytes)."""
    if a.size() != b.size():
        return False
    return int(np.abs(channels(a) - channels(b)).max(initial=0)) <= tolerance


def same_look(a: QImage, b: QImage, tolerance: int = RASTER_TOLERANCE) -> bool:
    """Same size, and every pixel the same as it is drawn: colour times alpha (premultiplied, as Qt
    composes) within ``tolerance`` of 255, alpha too. Reading the .ico's straight-alpha pixels goes
    through Qt's premultiplied formats with CPU-specific rounding (SSE/AVX paths): a semi-transparent
    pixel's colour may come back a step or two off, which no one can see; a changed drawing is far off."""
    if a.size() != b.size():
        return False
    pa, pb = (channels(x).reshape(-1, 4) for x in (a, b))
    alpha_a, alpha_b = pa[:, 3:4], pb[:, 3:4]
    drawn_a = np.concatenate([(pa[:, :3] * alpha_a + 127) // 255, alpha_a], axis=1)
    drawn_b = np.concatenate([(pb[:, :3] * alpha_b + 127) // 255, alpha_b], axis=1)
    return int(np.abs(drawn_a - drawn_b).max(initial=0)) <= tolerance


def test_committed_renders_match_the_svg(qapp, tmp_path):
    written = mi.make_icons(tmp_path)
    assert [p.name for p in written] == [mi.png_name(s) for s in mi.SIZES] + ["fiometer.ico"]
    for size in mi.SIZES:
        committed = QImage(str(ICONS / mi.png_name(size)))
        assert (committed.width(), committed.height()) == (size, size)
        assert committed.hasAlphaChannel()
        assert same_pixels(committed, QImage(str(tmp_path / mi.png_name(size))), RASTER_TOLERANCE), (
            f"{mi.png_name(size)} is stale: run python packaging/make_icons.py"
        )


def test_the_tolerance_takes_rasteriser_noise_but_not_a_change_to_the_drawing(qapp):
    committed = QImage(str(ICONS / mi.png_name(64))).convertToFormat(QImage.Format.Format_ARGB32)
    noisy, changed = committed.copy(), committed.copy()

    def nudged(x: int, dr: int, dg: int) -> QColor:
        c = committed.pixelColor(x, 32)
        return QColor(min(max(c.red() + dr, 0), 255), min(max(c.green() + dg, 0), 255), c.blue(), c.alpha())

    noisy.setPixelColor(32, 32, nudged(32, 1, 0))
    noisy.setPixelColor(33, 32, nudged(33, 0, -2))
    changed.setPixelColor(
        32, 32, nudged(32, 60, 60) if committed.pixelColor(32, 32).red() < 128 else nudged(32, -60, -60)
    )
    assert not same_pixels(committed, noisy) and same_pixels(committed, noisy, RASTER_TOLERANCE)
    assert not same_pixels(committed, changed, RASTER_TOLERANCE)
    assert not same_pixels(committed, QImage(str(ICONS / mi.png_name(32))), RASTER_TOLERANCE)


def test_icon_has_a_transparent_corner_and_an_opaque_centre(qapp):
    img = QImage(str(ICONS / mi.png_name(256)))
    assert img.pixelColor(0, 0).alpha() == 0  # rounded corner
    assert img.pixelColor(128, 128).alpha() == 255
    assert img.pixelColor(128, 20).alpha() == 255


def test_ico_holds_every_size_and_qt_reads_the_same_pixels(qapp):
    data = (ICONS / "fiometer.ico").read_bytes()
    assert mi.read_ico_directory(data) == [(s, s, s == 256) for s in mi.SIZES]
    reader = QImageReader(str(ICONS / "fiometer.ico"))
    assert reader.imageCount() == len(mi.SIZES)
    for i, size in enumerate(mi.SIZES):
        assert reader.jumpToImage(i)
        image = reader.read()
        assert image.width() == size, reader.errorString()
        assert same_look(image, QImage(str(ICONS / mi.png_name(size)))), f"{size}x{size} differs"


def test_the_ico_comparison_takes_rounding_in_faint_pixels_but_not_a_changed_drawing(qapp):
    png = QImage(str(ICONS / mi.png_name(64))).convertToFormat(QImage.Format.Format_ARGB32)
    pixels = channels(png).reshape(64, 64, 4)
    faint = next(
        (x, y)
        for y in range(64)
        for x in range(64)
        if 0 < pixels[y, x, 3] < 128 and pixels[y, x, :3].max() > 8
    )
    rounded, changed = png.copy(), png.copy()
    c = png.pixelColor(*faint)
    rounded.setPixelColor(
        *faint, QColor(c.red(), c.green(), max(c.blue() - 2, 0) if c.blue() else 2, c.alpha())
    )
    assert not same_pixels(png, rounded) and same_look(png, rounded)
    opaque = QColor(png.pixelColor(32, 32))
    changed.setPixelColor(
        32, 32, QColor((opaque.red() + 128) % 256, opaque.green(), opaque.blue(), opaque.alpha())
    )
    assert not same_look(png, changed)
    faded = png.copy()
    faded.setPixelColor(*faint, QColor(c.red(), c.green(), c.blue(), min(c.alpha() + 40, 255)))
    assert not same_look(png, faded)
    assert not same_look(png, QImage(str(ICONS / mi.png_name(32))))


def test_dib_entry_layout_and_mask():
    size = 2
    # top row: opaque red, transparent; bottom row: transparent, opaque blue (BGRA)
    pixels = bytes([0, 0, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0, 255, 0, 0, 255])
    dib = mi.dib_entry(size, pixels)
    header = struct.unpack_from("<IiiHHI", dib, 0)
    assert header == (40, 2, 4, 1, 32, 0)  # height doubled: XOR image + AND mask
    xor = dib[40 : 40 + 16]
    assert xor[:8] == pixels[8:] and xor[8:] == pixels[:8]  # bottom-up rows
    mask = dib[56:]
    assert len(mask) == 2 * 4  # rows padded to 32 bits
    assert mask[0] == 0b10000000 and mask[4] == 0b01000000  # bottom row: 1st transparent; top row: 2nd


def test_ico_bytes_directory_offsets():
    blob = mi.ico_bytes([(16, b"a" * 10), (256, b"\x89PNG\r\n\x1a\n" + b"b" * 5)])
    assert struct.unpack_from("<HHH", blob, 0) == (0, 1, 2)
    assert struct.unpack_from("<BBBBHHII", blob, 6) == (16, 16, 0, 0, 1, 32, 10, 38)
    assert struct.unpack_from("<BBBBHHII", blob, 22) == (0, 0, 0, 0, 1, 32, 13, 48)
    assert mi.read_ico_directory(blob) == [(16, 16, False), (256, 256, True)]
    with pytest.raises(ValueError):
        mi.ico_bytes([(512, b"x")])
    with pytest.raises(ValueError):
        mi.dib_entry(2, b"short")


def test_icon_files_hook_for_the_gui(qapp):
    from PySide6.QtGui import QIcon

    from app.paths import icon_files

    files = icon_files()
    assert all(p.is_file() for p in files)
    icon = QIcon()
    for p in files:
        icon.addFile(str(p))
    assert not icon.isNull()
    assert {s.width() for s in icon.availableSizes()} >= {16, 32, 48, 64, 128, 256}
