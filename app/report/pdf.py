"""The PDF: a painted cover, the body laid out by QTextDocument, charts painted with QPainter, and a
header and "page n of N" footer on every body page. Qt is used here for painting only (QtGui); the
content comes ready-made from ``document`` and ``pdf_markup``."""

from __future__ import annotations

import errno
import os
import sys

from PySide6.QtCore import QMarginsF, QPointF, QRectF, QSizeF, Qt, QUrl
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QImage,
    QPageLayout,
    QPageSize,
    QPainter,
    QPdfWriter,
    QPen,
    QTextDocument,
    QTextOption,
)

from app.report.charts import Drawing, Line, Rect, Text, draw
from app.report.document import Report
from app.report.html import sections
from app.report.pdf_markup import ACCENT, MUTED, SMALL_SHARE, body_markup, keep_together
from app.report.pts_markup import pts_page_header

DPI = 300
MARGIN_MM = (20.0, 18.0, 20.0, 18.0)  # left, top, right, bottom
HEAD_CHARS = 105  # characters of the 7 pt page header a line of the text width holds, at the least
FAMILY = "DejaVu Sans"
FALLBACKS = ("Segoe UI", "Arial", "Helvetica")  # where DejaVu is not installed (Windows)
_app: QGuiApplication | None = None


def ensure_gui() -> None:
    """Fonts and painting need a QGuiApplication; without a display, use the offscreen platform."""
    global _app
    if QGuiApplication.instance() is not None:
        return
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _app = QGuiApplication(["fiometer"])


def plain_font(family: str = FAMILY) -> QFont:
    """No ligatures: DejaVu joins "fi", and "fio" would be copied (and searched) as "\ufb01o"."""
    f = QFont(family)
    f.setFamilies([family, *FALLBACKS])
    f.setFeature(QFont.Tag("liga"), 0)
    return f


def font(pt: float, bold: bool = False, family: str = FAMILY) -> QFont:
    f = plain_font(family)
    f.setPointSizeF(pt)
    f.setBold(bold)
    return f


def paint_drawing(p: QPainter, d: Drawing, x: float, y: float, scale: float) -> None:
    """Paint chart primitives; ``scale`` device pixels per chart unit, chart sizes are in points."""
    p.save()
    p.translate(x, y)
    p.scale(scale, scale)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    for it in d.items:
        if isinstance(it, Rect):
            p.fillRect(QRectF(it.x, it.y, it.w, it.h), QColor(it.fill))
        elif isinstance(it, Line):
            pen = QPen(QColor(it.color), it.width)
            if it.dash:
                pen.setStyle(Qt.PenStyle.DashLine)
            p.setPen(pen)
            p.drawLine(QPointF(it.x1, it.y1), QPointF(it.x2, it.y2))
    for it in d.items:
        if isinstance(it, Text):
            f = plain_font()
            f.setPixelSize(max(1, round(it.size * 10)))  # lay text out at 10x and scale down: exact metrics
            f.setBold(it.bold)
            p.save()
            p.translate(it.x, it.y)
            p.scale(0.1, 0.1)
            p.setFont(f)
            p.setPen(QColor(it.color))
            w = QFontMetricsF(f).horizontalAdvance(it.text)
            dx = {"start": 0.0, "middle": -w / 2, "end": -w}[it.anchor]
            p.drawText(QPointF(dx, 0), it.text)
            p.restore()
    p.restore()


def block_charts(
    doc: QTextDocument, block, drawings: dict[str, Drawing]
) -> list[tuple[Drawing, float, float, float, float]]:
    """The charts a block holds as laid out: (drawing, x, top, width, height) in document units."""
    out = []
    rect = doc.documentLayout().blockBoundingRect(block)
    it = block.begin()
    while not it.atEnd():
        frag = it.fragment()
        fmt = frag.charFormat()
        if fmt.isImageFormat() and fmt.toImageFormat().name() in drawings:
            img = fmt.toImageFormat()
            at = frag.position() - block.position()
            line = block.layout().lineForTextPosition(at)
            x = line.cursorToX(at)  # the image's own place in its line (two small multiples share one)
            x = x[0] if isinstance(x, tuple) else x
            w = img.width() * DPI / 96
            h = img.height() * DPI / 96
            out.append(
                (
                    drawings[img.name()],
                    rect.left() + float(x),
                    rect.top() + line.y() + line.ascent() - h,
                    w,
                    h,
                )
            )
        it += 1
    return out


def chart_positions(
    doc: QTextDocument, drawings: dict[str, Drawing]
) -> list[tuple[Drawing, float, float, float]]:
    """Where the document laid out each chart's placeholder image: (drawing, x, y, width) in document units."""
    out = []
    block = doc.begin()
    while block.isValid():
        out += [(d, x, y, w) for d, x, y, w, _ in block_charts(doc, block, drawings)]
        block = block.next()
    return out


class _Pages:
    def __init__(self, writer: QPdfWriter, report: Report):
        self.writer = writer
        self.report = report
        r = writer.pageLayout().paintRectPixels(writer.resolution())
        self.page = QRectF(0, 0, r.width(), r.height())  # paint rect (inside the margins), device pixels
        self.px_per_pt = writer.resolution() / 72.0

    def pt(self, v: float) -> float:
        return v * self.px_per_pt

    def text(self, p: QPainter, rect: QRectF, s: str, f: QFont, color: str, flags) -> None:
        p.setFont(f)
        p.setPen(QColor(color))
        p.drawText(rect, flags, s)

    def cover(self, p: QPainter, contents: list[tuple[str, int]]) -> None:
        m = self.report.meta
        w, h = self.page.width(), self.page.height()
        left = self.pt(20)
        wrap = Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
        logo = QImage(m.logo) if m.logo else QImage()
        if not logo.isNull():  # top right, at most 50 x 22 mm
            box = QSizeF(self.pt(50 * 72 / 25.4), self.pt(22 * 72 / 25.4))
            size = QSizeF(logo.size()).scaled(box, Qt.AspectRatioMode.KeepAspectRatio)
            p.drawImage(QRectF(w - size.width(), 0, size.width(), size.height()), logo)
        self.text(
            p,
            QRectF(left, self.pt(120), w - left, self.pt(20)),
            "STORAGE PERFORMANCE",
            font(9, True),
            MUTED,
            wrap,
        )
        title_rect = QRectF(left, self.pt(148), w - left - self.pt(20), self.pt(130))
        self.text(p, title_rect, m.title, font(26, True), "#1d2733", wrap)
        used = p.boundingRect(title_rect, wrap, m.title).height()
        y = self.pt(148) + used + self.pt(24)
        by = ", ".join(x for x in (m.author, m.company) if x)
        for label, value in (("Prepared for", m.client), ("Prepared by", by), ("Date", m.date)):
            if not value:
                continue
            self.text(p, QRectF(left, y, self.pt(110), self.pt(16)), label, font(10), MUTED, wrap)
            vr = QRectF(left + self.pt(110), y, w - left - self.pt(130), self.pt(60))
            self.text(p, vr, value, font(11, True), "#1d2733", wrap)
            y += max(self.pt(20), p.boundingRect(vr, wrap, value).height() + self.pt(6))
        p.fillRect(
            QRectF(0, self.pt(150), self.pt(6), y - self.pt(150)), QColor(ACCENT)
        )  # beside title and facts
        runs = "\n".join(f"Run {s.run.id} ({s.label}): {s.run.name}" for s in self.report.runs)
        y += self.pt(24)
        self.text(p, QRectF(left, y, w, self.pt(16)), "Runs in this report", font(10), MUTED, wrap)
        runs_rect = QRectF(left, y + self.pt(18), w - left, h - y)
        self.text(p, runs_rect, runs, font(9.5), "#1d2733", wrap)
        y += self.pt(18) + p.boundingRect(runs_rect, wrap, runs).height() + self.pt(22)
        self.text(p, QRectF(left, y, w, self.pt(16)), "Contents", font(10), MUTED, wrap)
        y += self.pt(18)
        for title, page in contents:
            self.text(
                p, QRectF(left, y, w - left - self.pt(60), self.pt(14)), title, font(9.5), "#1d2733", wrap
            )
            self.text(
                p,
                QRectF(left, y, w - left - self.pt(60), self.pt(14)),
                str(page),
                font(9.5),
                "#1d2733",
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop,
            )
            y += self.pt(15)
        p.setPen(QPen(QColor("#c9cfd6"), self.pt(0.6)))
        p.drawLine(QPointF(0, h - self.pt(30)), QPointF(w, h - self.pt(30)))
        self.text(
            p,
            QRectF(0, h - self.pt(24), w, self.pt(14)),
            "Made with Fiometer \u2014 Iometer access specifications measured with fio",
            font(7.5),
            MUTED,
            Qt.AlignmentFlag.AlignLeft,
        )

    def furniture(self, p: QPainter, number: int, total: int) -> None:
        m = self.report.meta
        w, h = self.page.width(), self.page.height()
        head = (
            m.title
            + (f" \u2014 {m.client}" if m.client else "")
            + (f" \u2014 {m.company}" if m.company else "")
        )
        pts = pts_page_header(self.report)  # a PTS run's page header: test, times, revision, device, tester
        lines = max(1, -(-len(pts) // HEAD_CHARS))  # it wraps onto as many lines as it needs
        head = pts or head
        top = self.pt(4 + 9 * lines)
        self.text(
            p,
            QRectF(0, -top, w, top - self.pt(3)),
            head,
            font(7),
            MUTED,
            Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap,
        )
        p.setPen(QPen(QColor("#c9cfd6"), self.pt(0.5)))
        p.drawLine(QPointF(0, -self.pt(2)), QPointF(w, -self.pt(2)))
        self.text(
            p,
            QRectF(0, h + self.pt(4), w, self.pt(10)),
            f"Page {number} of {total}",
            font(7),
            MUTED,
            Qt.AlignmentFlag.AlignRight,
        )
        self.text(
            p, QRectF(0, h + self.pt(4), w, self.pt(10)), m.date, font(7), MUTED, Qt.AlignmentFlag.AlignLeft
        )


def _wrapping(mode: QTextOption.WrapMode) -> QTextOption:
    option = QTextOption()
    option.setWrapMode(mode)
    return option


def write_pdf(report: Report, path: str) -> None:
    ensure_gui()
    writer = QPdfWriter(str(path))
    writer.setResolution(DPI)
    size = QPageSize(
        QPageSize.PageSizeId.Letter if report.meta.paper == "Letter" else QPageSize.PageSizeId.A4
    )
    writer.setPageLayout(
        QPageLayout(
            size, QPageLayout.Orientation.Portrait, QMarginsF(*MARGIN_MM), QPageLayout.Unit.Millimeter
        )
    )
    writer.setTitle(report.meta.title)
    writer.setAuthor(", ".join(x for x in (report.meta.author, report.meta.company) if x) or "Fiometer")
    writer.setCreator("Fiometer")
    pages = _Pages(writer, report)
    body = pages.page

    doc = QTextDocument()
    doc.documentLayout().setPaintDevice(writer)
    doc.setDefaultFont(font(9))
    doc.setDocumentMargin(0)
    doc.setPageSize(QSizeF(body.width(), body.height()))
    # Charts are painted as vectors (crisp, and their text is real text): the document holds a blank image of
    # the chart's size in its place, and each chart is painted where that image was laid out.
    chart_src = {}
    drawings = {}
    width_pt = body.width() / pages.px_per_pt  # charts are laid out in points across the text width
    blank = QImage(1, 1, QImage.Format.Format_RGB32)
    blank.fill(QColor("white"))
    small = report.small_charts
    for ch in report.every_chart:
        share = SMALL_SHARE if ch.key in small else 1.0  # small multiples: two side by side
        d = draw(ch, width_pt * share)
        name = f"{ch.key}.png"
        doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(name), blank)
        css_px = body.width() * share * 96 / DPI  # <img> sizes are CSS pixels (1/96 in)
        chart_src[ch.key] = (name, int(css_px), int(css_px * d.height / d.width))
        drawings[name] = d
    # tighter tables until none is wider than the page; text wraps between words only ("Random 4k read", never
    # "Ran dom"), unless nothing else fits (the last resort: nothing may be clipped)
    slack = writer.resolution() / 25.4 * 0.3  # Qt's rounding can set a full-width table a pixel or two wider
    tries = [(compact, QTextOption.WrapMode.WordWrap) for compact in range(3)]
    for compact, wrap in [*tries, (2, QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)]:
        doc.setDefaultTextOption(_wrapping(wrap))
        markup = body_markup(report, chart_src, compact)
        doc.setHtml(markup)
        if doc.idealWidth() <= body.width() + slack:
            break
    breaks: set[int] = set()
    for _ in range(20):  # move what would straddle a page break (or run off it) to the next page; then a
        # chart left alone on a page takes the chart before it along (its own break, if any, goes)
        split = straddling(doc, drawings, body.height()) - breaks
        if split:
            breaks |= split
        elif lone := lone_charts(doc, drawings, body.height()) - breaks:
            breaks = (breaks - {i + 1 for i in lone}) | lone
        else:
            break
        doc.setHtml(keep_together(markup, breaks))
    placed = chart_positions(doc, drawings)
    total = 1 + doc.pageCount()
    contents = section_pages(doc, body.height(), report)

    p = QPainter(writer)
    if not p.isActive():  # Qt only warns; say it plainly
        raise OSError(
            errno.EACCES,
            "cannot be written (no permission, or a folder or open file is in the way)",
            str(path),
        )
    try:
        pages.cover(p, contents)
        for i in range(doc.pageCount()):
            writer.newPage()
            p.save()
            p.translate(0, -i * body.height())
            # a hair inside the page: a line laid out to start exactly at the next page's top must not be drawn
            # (clipped, invisible, yet extracted as text) at the bottom of this one
            doc.drawContents(p, QRectF(0, i * body.height() + 0.5, body.width(), body.height() - 1.5))
            p.restore()
            for d, x, y, w in placed:
                if i * body.height() <= y < (i + 1) * body.height():
                    paint_drawing(p, d, x, y - i * body.height(), w / d.width)
            pages.furniture(p, i + 2, total)
    finally:
        p.end()
    add_subject(path, report.subject)


NOTE_PT = 7.5  # p.note's size in pdf_markup.STYLE: the only top-level paragraphs set this small


def _block_kind(block) -> str:
    """ "heading", "note", "text" or "empty", from how the block's first fragment is set."""
    it = block.begin()
    if it.atEnd() or not block.text().strip():
        return "empty"  # Qt puts an empty block after each table
    fmt = it.fragment().charFormat()
    size = fmt.fontPointSize()
    if size and abs(size - NOTE_PT) < 0.01:
        return "note"
    if size >= 10 and fmt.fontWeight() >= 600:
        return "heading"
    return "text"


def units(doc: QTextDocument, drawings: dict[str, Drawing]) -> list[tuple[float, float]]:
    """(top, bottom) in document units of each table and each chart, in document order (the order
    ``pdf_markup.UNIT`` finds them in the markup); a unit reaches up to the heading right above it and down
    over the notes right below it, which belong with it on one page."""
    return [(top, bottom) for top, bottom, _chart in _units(doc, drawings)]


def _units(doc: QTextDocument, drawings: dict[str, Drawing]) -> list[tuple[float, float, bool]]:
    """``units``, each saying whether it is a chart."""
    lay = doc.documentLayout()
    items: list[tuple[str, float, float]] = []  # (kind, top, bottom): unit, chart, heading, note, text
    it = doc.rootFrame().begin()
    while not it.atEnd():
        frame = it.currentFrame()
        if frame is not None:
            r = lay.frameBoundingRect(frame)
            items.append(("unit", r.top(), r.bottom()))
        else:
            block = it.currentBlock()
            charts = block_charts(doc, block, drawings)
            if charts:  # one unit a paragraph: small multiples side by side share theirs
                items.append(("chart", min(c[2] for c in charts), max(c[2] + c[4] for c in charts)))
            else:
                r = lay.blockBoundingRect(block)
                items.append((_block_kind(block), r.top(), r.bottom()))
        it += 1
    items = [x for x in items if x[0] != "empty"]
    out = []
    for i, (kind, top, bottom) in enumerate(items):
        if kind not in ("unit", "chart"):
            continue
        if i and items[i - 1][0] == "heading":
            top = items[i - 1][1]
        k = i + 1
        while k < len(items) and items[k][0] == "note":
            bottom = items[k][2]
            k += 1
        out.append((top, bottom, kind == "chart"))
    return out


def lone_charts(doc: QTextDocument, drawings: dict[str, Drawing], page_height: float) -> set[int]:
    """Charts that would end a run of charts alone on a page (what follows starts a new page, a section),
    where the page before holds three units or more of which the last is a chart: that chart, to move onto
    the lone one's page, where both fit. A chart alone is a page of little but a picture."""
    us = _units(doc, drawings)
    page = [int(top // page_height) for top, _b, _c in us]
    out = set()
    for i in range(1, len(us)):
        top, bottom, chart = us[i]
        ptop, pbottom, pchart = us[i - 1]
        alone = page.count(page[i]) == 1 and (i + 1 == len(us) or page[i + 1] > page[i])
        if (
            chart
            and pchart
            and alone
            and page[i - 1] == page[i] - 1
            and page.count(page[i - 1]) >= 3
            and (bottom - top) + (pbottom - ptop) < page_height * 0.9
        ):
            out.add(i - 1)
    return out


def straddling(doc: QTextDocument, drawings: dict[str, Drawing], page_height: float) -> set[int]:
    """Units (see ``units``) that start on one page and end on the next although they would fit on one."""
    out = set()
    for i, (top, bottom) in enumerate(units(doc, drawings)):
        if bottom - top < page_height * 0.9 and int(top // page_height) != int((bottom - 1) // page_height):
            out.add(i)
    return out


def section_pages(doc: QTextDocument, page_height: float, report: Report) -> list[tuple[str, int]]:
    """(section title, page number) for the table of contents; the cover is page 1."""
    titles = dict(sections(report)) | {
        "latency-charts": "Response time distribution and stability",
        "appendix": "Appendix: methodology and job files",
    }
    found: list[tuple[str, int]] = []
    lay = doc.documentLayout()
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            for name in it.fragment().charFormat().anchorNames():
                if name in titles:
                    found.append((titles[name], 2 + int(lay.blockBoundingRect(block).top() // page_height)))
            it += 1
        block = block.next()
    return found


def _pdf_text(s: str) -> bytes:
    return b"<FEFF" + s.encode("utf-16-be").hex().upper().encode() + b">"


def add_subject(path: str, subject: str) -> None:
    """Qt writes no Subject: append an incremental update whose document information has one (the file's
    existing bytes stay as they are; readers take the newest trailer)."""
    import re

    with open(path, "rb") as f:
        data = f.read()
    tail = data[-2048:]
    m = re.search(rb"trailer\s*<<(.*?)>>\s*startxref\s*(\d+)\s*%%EOF\s*$", tail, re.S)
    if not m:
        return
    trailer, prev = m.group(1), int(m.group(2))
    size = re.search(rb"/Size\s+(\d+)", trailer)
    root = re.search(rb"/Root\s+(\d+\s+\d+\s+R)", trailer)
    info = re.search(rb"/Info\s+(\d+)\s+(\d+)\s+R", trailer)
    if not (size and root and info):
        return
    old = re.search(
        rb"\n" + info.group(1) + rb"\s+" + info.group(2) + rb"\s+obj\s*<<(.*?)>>\s*endobj", data, re.S
    )
    entries = old.group(1) if old else b""
    n = int(size.group(1))
    obj = f"\n{n} 0 obj\n<<".encode() + entries + b"\n/Subject " + _pdf_text(subject) + b"\n>>\nendobj\n"
    start = len(data) + 1
    xref = len(data) + len(obj)
    update = (
        obj
        + b"xref\n0 1\n0000000000 65535 f \n"
        + f"{n} 1\n{start:010d} 00000 n \n".encode()
        + b"trailer\n<< /Size "
        + str(n + 1).encode()
        + b" /Root "
        + root.group(1)
        + b" /Info "
        + str(n).encode()
        + b" 0 R /Prev "
        + str(prev).encode()
        + b" >>\nstartxref\n"
        + str(xref).encode()
        + b"\n%%EOF\n"
    )
    with open(path, "ab") as f:
        f.write(update)
