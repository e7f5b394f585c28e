"""The PDF's body as Qt rich text (the HTML subset QTextDocument lays out), built Qt-free from the report.

pdf.py paints the cover and page furniture itself and supplies chart images by name (``chart_src``).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from html import escape

from app.report.charts import family_of, small_multiples
from app.report.document import Report
from app.report.pts_markup import pts_pdf
from app.report.sweep_charts import curves_title
from app.report.tables import Table

BETTER, BETTER_BG, WORSE, WORSE_BG = "#17693a", "#e3f2e7", "#a8231b", "#fae6e3"
ACCENT, RULE, HEAD_BG, MUTED = "#1f5fa8", "#c9cfd6", "#eceff3", "#5b6673"

# Qt rich text takes margins in CSS pixels (1/96 in; "pt" margins are ignored), font sizes in points.
STYLE = f"""
body {{ font-family: 'DejaVu Sans', 'Segoe UI', Arial, sans-serif; font-size: 9pt; color: #1d2733; }}
h1 {{ font-size: 16pt; font-weight: 600; color: #1d2733; margin-top: 0; margin-bottom: 8px; }}
h2 {{ font-size: 11pt; font-weight: 600; color: {ACCENT}; margin-top: 24px; margin-bottom: 7px; }}
h3 {{ font-size: 10pt; font-weight: 600; margin-top: 16px; margin-bottom: 5px; }}
p {{ margin-top: 0; margin-bottom: 7px; }}
p.sentence {{ font-size: 9.5pt; margin-bottom: 4px; }}
p.note {{ font-size: 7.5pt; color: {MUTED}; margin-top: 3px; margin-bottom: 3px; }}
td.warn {{ font-size: 8.5pt; color: #6b4210; background-color: #fdf3e6; border-left: 3px solid #d9822b; }}
table.data {{ border-collapse: collapse; font-size: 8pt; margin-bottom: 4px; }}
table.wide {{ border-collapse: collapse; font-size: 7.5pt; margin-bottom: 4px; }}
table.data th, table.wide th {{ background-color: {HEAD_BG}; font-weight: 600; border-bottom: 1px solid #9aa3ad;
                 padding: 3px 5px; text-align: left; }}
table.wide th {{ padding: 3px 3px; }}
table.data td, table.wide td {{ padding: 2px 5px; border-bottom: 1px solid {RULE}; }}
table.wide td {{ padding: 2px 3px; }}
table.data td.group {{ color: {ACCENT}; font-weight: 600; padding-top: 7px; border-bottom: 1px solid #9aa3ad; }}
td.n {{ white-space: nowrap; }}
th.n {{ white-space: nowrap; }}
td.better, td.nbetter {{ color: {BETTER}; background-color: {BETTER_BG}; font-weight: 600; }}
td.worse, td.nworse {{ color: {WORSE}; background-color: {WORSE_BG}; font-weight: 600; }}
td.nbetter, td.nworse {{ white-space: nowrap; }}
table.facts {{ font-size: 8pt; border-collapse: collapse; }}
table.facts td {{ padding: 2px 5px; border-bottom: 1px solid {RULE}; }}
td.key {{ color: {MUTED}; }}
pre {{ font-family: 'DejaVu Sans Mono', Consolas, 'Courier New', monospace; font-size: 7pt; margin-top: 0; margin-bottom: 0; }}
td.code {{ background-color: #f3f5f7; border-left: 2px solid {RULE}; }}
"""


NOWRAP_TEXT = 36  # text columns whose cells are all this short are kept on one line
WIDE = 9  # tables with more columns than this are set smaller (class "wide")
MAX_COLUMNS = 10  # a data table with more columns is split into parts across the page, one below the other


LONG_WORD = re.compile(r"\S{25,}")
ZWSP = "\u200b"


def breakable(text: str) -> str:
    """Long words (mount options, paths) may break after a comma, slash, equals or semicolon: text wraps
    between words only, and one such word must not make a whole table wider than the page."""
    return LONG_WORD.sub(lambda m: re.sub(r"([,/=;])(?=.)", r"\1" + ZWSP, m.group()), text)


def column_parts(t: Table) -> list[Table]:
    """``t`` split so that no part has more than ``MAX_COLUMNS`` columns: each part repeats the leading text
    columns (the row keys: access specification, load, side...) and takes an even share of the others, in
    order. Squeezed onto one page width, a wide table's text columns would wrap letter by letter; split, every
    figure stays and each part is readable. The notes go under the last part. The PDF only: HTML, XLSX and
    CSV keep the table whole."""
    keys = next((i for i, c in enumerate(t.columns) if c.numeric), len(t.columns))
    rest = len(t.columns) - keys
    if len(t.columns) <= MAX_COLUMNS or keys == 0 or MAX_COLUMNS - keys < 2:
        return [t]
    n = math.ceil(rest / (MAX_COLUMNS - keys))
    size = math.ceil(rest / n)
    parts = []
    for start in range(keys, len(t.columns), size):
        idx = list(range(keys)) + list(range(start, min(start + size, len(t.columns))))
        parts.append(
            replace(
                t,
                columns=[t.columns[i] for i in idx],
                notes=[],
                rows=[replace(r, cells=[r.cells[i] for i in idx]) for r in t.rows],
            )
        )
    parts[-1].notes = list(t.notes)
    return parts


def table_markup(
    t: Table, css: str = "data", widths: dict[int, str] | None = None, wrap_all: bool = False
) -> str:
    """A table; numeric columns right-aligned, verdict cells coloured, group rows as headings. Numbers never
    wrap; short text columns do not either (Qt narrows wrapping columns first); text headers wrap between
    words only. A data table with many columns is set as parts (``column_parts``)."""
    if not t.rows:  # say why instead of an empty table
        return "\n".join(f'<p class="note">{escape(n)}</p>' for n in t.notes)
    if css == "data" and len(parts := column_parts(t)) > 1:
        return "\n".join(table_markup(part, css, widths, wrap_all) for part in parts)
    widths = widths or {}
    short = (
        set()
        if wrap_all
        else {
            i
            for i, c in enumerate(t.columns)
            if not c.numeric and css != "facts" and all(len(r.cells[i].text) <= NOWRAP_TEXT for r in t.rows)
        }
    )
    cls = "wide" if css == "data" and len(t.columns) > WIDE else css
    out = [f'<table class="{cls}" width="100%" cellspacing="0" cellpadding="0">', "<thead><tr>"]
    for i, c in enumerate(t.columns if css == "data" else []):  # key/value facts need no header
        align = "right" if c.numeric else "left"
        w = f' width="{widths[i]}"' if i in widths else ""
        cls = ' class="n"' if c.numeric and (" " not in c.title or len(c.title) <= 8) else ""
        title = escape(c.title).replace(" (", "<br>(") if c.numeric else escape(c.title)
        out.append(f'<th align="{align}"{w}{cls}>{title}</th>')
    out.append("</tr></thead>")
    group = None
    for row in t.rows:
        if row.group and row.group != group:
            group = row.group
            out.append(f'<tr><td class="group" colspan="{len(t.columns)}">{escape(group)}</td></tr>')
        out.append("<tr>")
        for i, (col, cell) in enumerate(zip(t.columns, row.cells, strict=True)):
            align = "right" if col.numeric else "left"
            # one class per cell: Qt rich text applies a single class selector (n = numeric, no wrapping)
            name = ("n" if col.numeric or i in short else "") + (cell.mark or "")
            if not name and css == "facts" and cell is row.cells[0]:
                name = "key"
            cls = f' class="{name}"' if name else ""
            text = escape(cell.text) if col.numeric else breakable(escape(cell.text))
            out.append(f'<td align="{align}"{cls}>{text}</td>')
        out.append("</tr>")
    out.append("</table>")
    out += [f'<p class="note">{escape(n)}</p>' for n in t.notes]
    return "\n".join(out)


def _new_page(parts: list[str]) -> str:
    """A section starts on a new page unless it is the first thing in the body (no blank first page)."""
    return ' style="page-break-before: always"' if len(parts) > 1 else ""


def callout(inner: str) -> str:
    """A shaded note box (a one-cell table: paragraphs cannot have padding in Qt rich text)."""
    return (
        '<table width="100%" cellspacing="0" cellpadding="6" style="margin-top: 5px; margin-bottom: 11px">'
        f'<tr><td class="warn">{inner}</td></tr></table>'
    )


# Tighter table settings, tried in turn when a table is wider than the page (nothing may be clipped).
COMPACT = (
    "",
    "table.data, table.wide {{ font-size: 7pt; }} table.data td, table.wide td {{ padding: 1px 3px; }} "
    "table.data th, table.wide th {{ padding: 2px 3px; }}",
)


def summary_markup(report: Report) -> list[str]:
    h = []
    for block in report.summary:
        h.append(f"<h3>{escape(block.heading)}</h3>")
        if block.what_changed:  # a one-run summary has no other side
            h.append(f"<p><b>What changed:</b> {escape('; '.join(block.what_changed))}</p>")
        for sentence in block.sentences:
            h.append(f'<p class="sentence">\u2022 {escape(sentence)}</p>')
        if block.headlines:
            h.append("<p><b>Headline figures:</b></p>")
            h += [f'<p class="sentence">\u2022 {escape(s)}</p>' for s in block.headlines]
        if block.unchanged:
            h.append(f"<p>{escape(block.unchanged)}</p>")
        if block.left_out:
            h.append(
                callout(
                    "<b>Left out of the findings (did not run to the end):</b><br>"
                    + "<br>".join("\u2022 " + escape(w) for w in block.left_out)
                )
            )
        if block.validity:
            h.append(
                callout("<b>Validity:</b><br>" + "<br>".join("\u2022 " + escape(w) for w in block.validity))
            )
        h.append(
            f'<p class="note">{escape(block.noise)} Higher IOPS and MB/s are better; lower response times '
            "are better.</p>"
        )
    return h


def _h1(h: list[str], anchor: str, title: str) -> None:
    """A section heading; each section starts on a new page unless it is the first thing in the body."""
    h.append(f'<h1{_new_page(h)}><a name="{anchor}"></a>{escape(title)}</h1>')


def _chart(h: list[str], chart_src: dict[str, tuple[str, int, int]], key: str) -> None:
    name, w, ht = chart_src[key]
    h.append(f'<p><img src="{name}" width="{w}" height="{ht}"></p>')


SMALL_SHARE = 0.49  # a small multiple's share of the text width (two a row, a gap between them)


def _charts_in_rows(
    h: list[str], chart_src: dict[str, tuple[str, int, int]], keys: list[str], small: set[str]
) -> None:
    """Charts one a paragraph; consecutive small multiples of one family two a paragraph, side by side."""
    row: list[str] = []
    for key in [*keys, ""]:
        if key in small and len(row) < 2 and (not row or family_of(row[0]) == family_of(key)):
            row.append(key)
            continue
        if row:
            imgs = [
                f'<img src="{chart_src[k][0]}" width="{chart_src[k][1]}" height="{chart_src[k][2]}">'
                for k in row
            ]
            h.append("<p>" + "&nbsp;&nbsp;".join(imgs) + "</p>")
            row = []
        if key in small:
            row.append(key)
        elif key:
            _chart(h, chart_src, key)


def body_markup(report: Report, chart_src: dict[str, tuple[str, int, int]], compact: int = 0) -> str:
    """``chart_src``: chart key -> (resource name, width, height) of its image in layout units. ``compact``
    1 sets tables smaller; 2 also lets every text column wrap. Section anchors are the HTML report's."""
    wrap = compact >= 2
    extra = COMPACT[min(compact, 1)].replace("{{", "{").replace("}}", "}")
    h = [f"<html><head><style>{STYLE}{extra}</style></head><body>"]
    if report.summary:
        _h1(h, "summary", "Summary")
        h += summary_markup(report)
        if report.glance:
            h.append(f"<h3>{escape(report.glance.title)}</h3>")
            h.append(table_markup(report.glance, wrap_all=wrap))
    h += pts_pdf(report, chart_src, wrap)
    if report.comparisons:
        h.append('<h2><a name="environment"></a>Test environment</h2>')
    else:
        _h1(h, "environment", "Test environment")
    h.append(table_markup(report.environment, wrap_all=True))
    if report.comparisons:
        _h1(h, "compare", "Before / after")
        for i, t in enumerate(report.comparison_tables + report.headline_tables + report.unmatched_tables):
            first = ' style="margin-top: 0"' if not i else ""
            h.append(f"<h2{first}>{escape(t.title)}</h2>")
            h.append(table_markup(t, wrap_all=wrap))
    if report.notes:
        h.append(callout("<br>".join(escape(n) for n in report.notes)))
    _h1(h, "latency", "Response time percentiles")
    h.append(table_markup(report.percentiles, wrap_all=wrap))
    _charts_markup(h, report, chart_src)
    _runs_markup(h, report, chart_src, wrap)
    _appendix_markup(h, report)
    h.append("</body></html>")
    if report.validity:  # first, on the first section's page: whether the figures measure the storage
        h[1:1] = [
            '<h1 style="margin-top: 0"><a name="validity"></a>Validity</h1>',
            callout("<br>".join("\u2022 " + escape(v) for v in report.validity)),
        ]
    return "\n".join(h)


def _charts_markup(h: list[str], report: Report, chart_src: dict[str, tuple[str, int, int]]) -> None:
    """The charts: per step, the sweep overlays, then the line charts in rows."""
    if report.charts or report.line_charts:
        _h1(h, "charts", "Charts")
        for ch in report.charts:
            _chart(h, chart_src, ch.key)
    if report.sweep_overlays:
        h.append('<h2><a name="sweep-overlays"></a>Sweeps and steady state, before and after</h2>')
        for lc in report.sweep_overlays:
            _chart(h, chart_src, lc.key)
    if report.line_charts:  # flows on after the bar charts: a page break here could leave one chart alone
        h.append('<h2><a name="latency-charts"></a>Response time distribution and stability</h2>')
        _charts_in_rows(
            h, chart_src, [lc.key for lc in report.line_charts], small_multiples(report.line_charts)
        )


def _runs_markup(
    h: list[str], report: Report, chart_src: dict[str, tuple[str, int, int]], wrap: bool
) -> None:
    """The results per run, each run's sweep curves after its sweep table."""
    _h1(h, "runs", "Results per run")
    for s in report.runs:
        h.append(f"<h2>{escape(s.summary.title)} ({escape(s.label)})</h2>")
        h.append(table_markup(s.summary, wrap_all=wrap))
        for table in s.workloads:
            h.append(f'<h2><a name="{escape(table.key)}"></a>{escape(table.title)}</h2>')
            h.append(table_markup(table, wrap_all=wrap))
            if table.key == f"sweep-{s.run.id}" and s.sweep_charts:
                h.append(f"<h2>{escape(curves_title(s.run))}</h2>")
                for c in s.sweep_charts:
                    _chart(h, chart_src, c.key)


def _appendix_markup(h: list[str], report: Report) -> None:
    """The appendix: the method, the disclosure, the job options, the first job file, each run's facts."""
    _h1(h, "appendix", "Appendix: methodology and job files")
    h.append(
        "<p>Every number in this report comes from Fiometer's results database. Fiometer reproduces "
        "Iometer's access specifications on fio: one fio job per worker and target, Iometer's outstanding "
        "I/Os as fio's iodepth per target. Response time is fio's total latency (submit to completion, "
        "lat_ns), as Iometer measures it; MB/s is decimal (10<sup>6</sup> bytes per second); percentiles "
        "come from merged latency histograms. Numbers show three significant digits (values of 100 and more "
        "as whole numbers); the workbook and the CSV hold them in full.</p>"
    )
    if report.disclosure:
        h.append("<h2>Disclosure: what was run and what the numbers mean</h2>")
        h += [f'<p class="sentence">\u2022 {escape(x)}</p>' for x in report.disclosure]
    h.append(f"<h2>{escape(report.job_options.title)}</h2>")
    h.append(table_markup(report.job_options, wrap_all=True))
    first = next((s for s in report.runs if s.job_files), None)
    if first:
        j = first.job_files[0]
        h.append(
            f'<p class="note"><b>Run {first.run.id}, {escape(j.title)}: the full job file</b></p>'
            '<table width="100%" cellspacing="0" cellpadding="5" style="margin-bottom: 6px"><tr>'
            f'<td class="code"><pre>{escape(j.text)}</pre></td></tr></table>'
        )
    for s in report.runs:
        h.append(f"<h2>{escape(s.facts.title)}</h2>")
        h.append(table_markup(s.facts, "facts", widths={0: "24%"}))


# A unit the PDF keeps on one page where it fits: a table, or a chart's image paragraph.
UNIT = re.compile(r"<table\b|<p><img\b")
# What belongs with the unit that follows it: its heading, or the caption of a job file.
LEAD = re.compile(
    r"(<h[123][^>]*>(?:(?!</h[123]>).)*</h[123]>\s*|<p class=\"note\"><b>(?:(?!</p>).)*</p>\s*)$", re.S
)
BREAK = ' style="page-break-before: always"'


def keep_together(markup: str, breaks: set[int]) -> str:
    """The markup with a page break before each unit numbered in ``breaks`` (in markup order), placed
    before its heading where one leads into it, so a heading never ends a page alone."""
    starts = [m.start() for m in UNIT.finditer(markup)]
    out, last = [], 0
    for i in sorted(breaks):
        if i >= len(starts):
            continue
        pos = starts[i]
        lead = LEAD.search(markup[last:pos])
        at = last + lead.start() if lead else pos
        out.append(markup[last:at])
        tag_end = markup.index(">", at)
        tag = markup[at:tag_end]
        if "page-break-before" not in tag:
            if ' style="' in tag:
                tag = tag.replace(' style="', ' style="page-break-before: always; ', 1)
            else:
                name_end = (
                    next(k for k, ch in enumerate(tag) if ch in " >" and k > 1) if " " in tag else len(tag)
                )
                tag = tag[:name_end] + BREAK + tag[name_end:]
        out.append(tag)
        last = tag_end
    out.append(markup[last:])
    return "".join(out)
