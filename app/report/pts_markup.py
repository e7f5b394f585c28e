"""The PTS part of a report in HTML and in the PDF's rich text (report.pts_report builds what it shows):
per PTS run its header facts, blocks, steady-state plots and determination table, then the test's tables
and plots; first, for two runs or more, the PTS comparison."""

from __future__ import annotations

from html import escape

from app.report.charts import draw, to_svg
from app.report.document import Report
from app.report.pts_report import PtsSection

ANCHOR, TITLE = "pts", "SNIA PTS"


def header_line(section: PtsSection) -> str:
    """The PTS page header in one line: test, PTS revision and variant, device, firmware, times, who tested."""
    f = dict(section.header)
    start, end = f.get("Start", ""), f.get("End", "")
    if start[:10] == end[:10]:  # the same day: its date once
        end = end[11:]
    return (
        f"{f.get('Test', '')}; {f.get('PTS', '')}; {f.get('Device', '')}, firmware {f.get('Firmware', '')}, "
        f"{f.get('Capacity', '')}; {start} to {end}; tested by {f.get('Tested by', '')}"
    )


def pts_contents(report: Report) -> list[tuple[str, str]]:
    """The PTS section's entry in the table of contents, when the report has PTS runs."""
    return [(ANCHOR, TITLE)] if report.pts else []


def pts_html(report: Report) -> list[str]:
    if not report.pts:
        return []
    from app.report.html import table_html

    h = [f'<h2 id="{ANCHOR}">{TITLE}</h2>']
    if report.pts_compare is not None:
        h.append(f"<h3>{escape(report.pts_compare.title)}</h3>")
        h.append(table_html(report.pts_compare))
    for s in report.pts:
        h.append(f'<h3 id="{s.anchor}">{escape(s.heading)}</h3>')
        h.append(f'<p class="note pts-header">{escape(header_line(s))}</p>')
        for t in s.blocks:
            h.append(f"<h3>{escape(t.title)}</h3>")
            h.append(table_html(t, "data facts"))
        for c in s.charts[:2]:
            h.append(f'<figure id="{c.key}">{to_svg(draw(c, 760), c.title)}</figure>')
        h.append(f"<h3>{escape(s.determination.title)}</h3>")
        h.append(table_html(s.determination))
        for t in s.tables:
            h.append(f"<h3>{escape(t.title)}</h3>")
            h.append(table_html(t))
        for c in s.charts[2:]:
            h.append(f'<figure id="{c.key}">{to_svg(draw(c, 760), c.title)}</figure>')
    return h


def pts_pdf(report: Report, chart_src: dict[str, tuple[str, int, int]], wrap: bool) -> list[str]:
    """The PDF's PTS section: each run starts on a page of its own."""
    if not report.pts:
        return []
    from app.report.pdf_markup import table_markup

    def chart(key: str) -> str:
        name, w, ht = chart_src[key]
        return f'<p><img src="{name}" width="{w}" height="{ht}"></p>'

    brk = ' style="page-break-before: always"'
    h = [f'<h1{brk}><a name="{ANCHOR}"></a>{TITLE}</h1>']
    if report.pts_compare is not None:
        h.append(f"<h2>{escape(report.pts_compare.title)}</h2>")
        h.append(table_markup(report.pts_compare, wrap_all=True))
    for i, s in enumerate(report.pts):
        page = brk if i or report.pts_compare is not None else ""
        h.append(f'<h2{page}><a name="{s.anchor}"></a>{escape(s.heading)}</h2>')
        for t in s.blocks[1:]:  # the header's facts are on every page already
            h.append(f"<h3>{escape(t.title)}</h3>")
            h.append(table_markup(t, "facts", widths={0: "30%"}))
        for c in s.charts[:2]:
            h.append(chart(c.key))
        h.append(f"<h3>{escape(s.determination.title)}</h3>")
        h.append(table_markup(s.determination, wrap_all=True))
        for t in s.tables:
            h.append(f"<h3>{escape(t.title)}</h3>")
            h.append(table_markup(t, wrap_all=wrap))
        for c in s.charts[2:]:
            h.append(chart(c.key))
    return h


def pts_page_header(report: Report) -> str:
    """What the PDF's page header says for a report of PTS runs ("" for other reports)."""
    return " | ".join(header_line(s) for s in report.pts)
