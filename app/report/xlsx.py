"""The report as an Excel workbook, written with XlsxWriter.

Sheets: Summary (the summary in words), one sheet per table (header row frozen, filters on, numbers stored
as numbers with display formats, better/worse cells coloured), Charts (the chart data and a native Excel bar
chart per metric drawn from those cells), Job files (every fio job file in full) and ``data``: every stored
result in long form, the same rows as the CSV.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TypedDict

import xlsxwriter

from app.report.charts import BarChart, LineChart
from app.report.document import Report, done_reading
from app.report.long_form import COLUMNS, long_rows
from app.report.summary import summary_lines
from app.report.tables import Table, excel_format, sig_decimals
from app.report.xlsx_rows import RowsSheet

BETTER = {"font_color": "#17693A", "bg_color": "#E3F2E7", "bold": True}
WORSE = {"font_color": "#A8231B", "bg_color": "#FAE6E3", "bold": True}


class _HeaderFormat(TypedDict):
    """XlsxWriter format properties of a header cell (typed, so ``fmt(**HEADER)`` checks against ``_Formats``)."""

    bold: bool
    bg_color: str
    bottom: int
    border_color: str
    text_wrap: bool
    valign: str


HEADER: _HeaderFormat = {
    "bold": True,
    "bg_color": "#ECEFF3",
    "bottom": 1,
    "border_color": "#9AA3AD",
    "text_wrap": True,
    "valign": "top",
}
MAX_WIDTH = 60


def sheet_name(title: str, used: set[str]) -> str:
    """Excel's rules: at most 31 characters, none of []:*?/\\, unique in the workbook (any case)."""
    text = re.sub(r"\s*:\s*", " - ", title)  # "Transfers: before" -> "Transfers - before"
    text = re.sub(r"\s+", " ", re.sub(r"[\[\]*?/\\]", "-", text)).strip(" '")
    base = _cut(text, 31) or "Sheet"
    name, n = base, 2
    while name.casefold() in used:
        suffix = f" ({n})"
        name, n = _cut(base, 31 - len(suffix)) + suffix, n + 1
    used.add(name.casefold())
    return name


def _cut(text: str, size: int) -> str:
    """``text`` at most ``size`` characters, never ending in a blank or a dangling separator (the issue's
    "Transfers- before, round-robin ")."""
    return text[:size].rstrip(" -,;'") if len(text) > size else text


class _Formats:
    def __init__(self, wb: xlsxwriter.Workbook):
        self.wb = wb
        self.cache: dict[tuple, object] = {}

    def __call__(self, num_format: str = "", mark: str | None = None, **extra) -> object:
        key = (num_format, mark, tuple(sorted(extra.items())))
        if key not in self.cache:
            props = dict(extra)
            if num_format:
                props["num_format"] = num_format
            if mark:
                props.update(BETTER if mark == "better" else WORSE)
            self.cache[key] = self.wb.add_format(props)
        return self.cache[key]


SHEETS = {
    "at-a-glance": "At a glance",
    "compare": "Comparison {}",
    "unmatched": "Not compared {}",
    "percentiles": "Percentiles",
    "environment": "Environment",
    "summary": "Run {} results",
    "job-options": "Job options",
    "facts": "Run {} facts",
    "headlines": "Headlines {}",
    "disk-compare": "Disks compared {}",
    "sweep": "Run {} sweep",
    "precondition": "Run {} preconditioning",
    "transfer": "Run {} transfer",
    "disks": "Run {} disks",
}
PAPER = {"A4": 9, "Letter": 1}  # XlsxWriter's paper codes
SUMMARY_WIDTH = 100  # the Summary sheet's column, in characters: a landscape page wide at 100 %
SUMMARY_LINE = 105  # characters of proportional text a wrapped line of that column holds (row heights)


def print_setup(ws, paper: str, header_rows: tuple[int, int] | None) -> None:
    """Printable as it is: landscape, one page wide, the header row on every page."""
    ws.set_landscape()
    ws.set_paper(PAPER.get(paper, 9))
    ws.fit_to_pages(1, 0)
    if header_rows:
        ws.repeat_rows(*header_rows)


def sheet_title(t: Table) -> str:
    """A short sheet name from the table's kind ("Comparison 1", "Run 3 results"); its title is in A1."""
    kind, _, number = t.key.rpartition("-") if t.key[-1:].isdigit() else (t.key, "", "")
    return SHEETS.get(kind, t.title).format(number)


def put_table(wb: xlsxwriter.Workbook, fmt: _Formats, t: Table, used: set[str]) -> None:
    """One table per sheet: title, header (frozen, filtered), rows; a group (e.g. the metric) as a column."""
    ws = wb.add_worksheet(sheet_name(sheet_title(t), used))
    ws.write(0, 0, t.title, fmt(bold=True, font_size=13))
    grouped = any(r.group for r in t.rows)
    head = ([t.group_title or "Group"] if grouped else []) + [c.title for c in t.columns]
    numeric = ([False] if grouped else []) + [c.numeric for c in t.columns]
    widths = [len(h) + 2 for h in head]
    for i, h in enumerate(head):
        ws.write(1, i, h, fmt(**HEADER, align="right" if numeric[i] else "left"))
    for r, row in enumerate(t.rows, 2):
        values = ([(row.group_value or row.group, "", None)] if grouped else []) + [
            (
                c.value if c.value is not None else (c.text if c.text != "\u2013" else None),
                c.number_format,
                c.mark,
            )
            for c in row.cells
        ]
        for i, (v, code, mark) in enumerate(values):
            if v is None or v == "":
                if mark:
                    ws.write_blank(r, i, None, fmt(mark=mark))
                continue
            if isinstance(v, int | float):
                ws.write_number(r, i, v, fmt(code, mark))
                shown = f"{v:,.{code.count('0') - 1 if '.' in code else 0}f}" if code else f"{v:g}"
            else:
                ws.write_string(r, i, str(v), fmt("", mark))
                shown = str(v)
            widths[i] = max(widths[i], min(MAX_WIDTH, len(shown) + 2))
    last = 1 + len(t.rows)
    for n, note in enumerate(t.notes, last + 2):
        ws.write_string(n, 0, note, fmt(italic=True, font_color="#5B6673"))
    for i, w in enumerate(widths):
        ws.set_column(i, i, w)
    ws.freeze_panes(2, 1 if grouped or not numeric[0] else 0)
    ws.repeat_rows(0, 1)
    if t.rows:
        ws.autofilter(1, 0, last, len(head) - 1)


def put_line_charts(
    wb: xlsxwriter.Workbook, fmt: _Formats, charts: list[LineChart], used: set[str], title: str
) -> None:
    """Each line chart's points as cells (x, then one column per series) and a native line (scatter) chart."""
    ws = wb.add_worksheet(sheet_name(title, used))
    name = ws.get_name()
    row = 0
    starts: list[int] = []
    for ch in charts:
        series = [s for s in ch.series if s.points and (s.label or len(ch.series) == 1)]
        xs = sorted({x for s in series for x, _ in s.points})
        if not xs:
            continue
        ws.write(row, 0, ch.title, fmt(bold=True))
        ws.write(row + 1, 0, ch.x_title, fmt(**HEADER))
        for j, s in enumerate(series, 1):
            ws.write(row + 1, j, s.label or ch.y_title, fmt(**HEADER))
        for i, x in enumerate(xs, row + 2):
            ws.write_number(i, 0, x)
            for j, s in enumerate(series, 1):
                y = dict(s.points).get(x)
                if y is not None:
                    ws.write_number(i, j, y, fmt(excel_format(sig_decimals(y))))
        chart = wb.add_chart({"type": "scatter", "subtype": "straight_with_markers"})
        last = row + 1 + len(xs)
        for j, s in enumerate(series, 1):
            chart.add_series(
                {
                    "name": [name, row + 1, j],
                    "categories": [name, row + 2, 0, last, 0],
                    "values": [name, row + 2, j, last, j],
                    "line": {"color": s.color},
                    "marker": {"type": "circle", "fill": {"color": s.color}, "border": {"color": s.color}},
                }
            )
        chart.set_title({"name": ch.title, "name_font": {"size": 10}})
        chart.set_x_axis({"name": ch.x_title, "log_base": 2} if ch.x_log2 else {"name": ch.x_title})
        chart.set_y_axis(
            {"name": ch.y_title, "major_gridlines": {"visible": True, "line": {"color": "#E3E6EA"}}}
        )
        chart.set_legend({"position": "top"})
        chart.set_size({"width": 560, "height": 300})
        ws.insert_chart(row, len(series) + 2, chart)
        starts.append(row)
        row += max(len(xs) + 3, 17)
    ws.set_column(0, 0, 16)
    ws.set_h_pagebreaks(starts[2::2])  # two charts a printed page: a chart is never cut in two


def put_charts(wb: xlsxwriter.Workbook, fmt: _Formats, charts: list[BarChart], used: set[str]) -> None:
    """Each chart's data as a block of cells, and a native bar chart drawn from them beside it."""
    ws = wb.add_worksheet(sheet_name("Charts", used))
    name = ws.get_name()
    row = 0
    ws.set_column(0, 0, 34)
    for ch in charts:
        ws.write(row, 0, ch.title, fmt(**HEADER))
        for j, s in enumerate(ch.series, 1):
            ws.write(row, j, s.label, fmt(**HEADER))
            ws.set_column(j, j, max(12, min(30, len(s.label) + 2)))
        for i, cat in enumerate(ch.categories, 1):
            ws.write_string(row + i, 0, cat)
            for j, s in enumerate(ch.series, 1):
                v = s.values[i - 1]
                if v is not None:
                    ws.write_number(row + i, j, v, fmt(excel_format(sig_decimals(v))))
        chart = wb.add_chart({"type": "bar"})
        for j, s in enumerate(ch.series, 1):
            chart.add_series(
                {
                    "name": [name, row, j],
                    "categories": [name, row + 1, 0, row + len(ch.categories), 0],
                    "values": [name, row + 1, j, row + len(ch.categories), j],
                    "fill": {"color": s.color},
                    "gap": 60,
                }
            )
        chart.set_title({"name": ch.title, "name_font": {"size": 11}})
        chart.set_y_axis({"reverse": True})
        chart.set_x_axis(
            {"name": ch.metric.unit, "major_gridlines": {"visible": True, "line": {"color": "#E3E6EA"}}}
        )
        chart.set_legend({"position": "top"})
        height = max(260, 60 + 26 * len(ch.categories) * len(ch.series))
        chart.set_size({"width": 620, "height": height})
        ws.insert_chart(row, len(ch.series) + 2, chart)
        row += max(len(ch.categories) + 2, int(height / 20) + 2)


def put_data(wb: xlsxwriter.Workbook, fmt: _Formats, report: Report, used: set[str]) -> None:
    """The long form, the CSV's rows: plain cells written as XML rows (app.report.xlsx_rows), 5-10 times
    faster than XlsxWriter's cell by cell for the million cells of a long wide run."""
    ws = wb.add_worksheet(sheet_name("data", used), worksheet_class=RowsSheet)
    for i, h in enumerate(COLUMNS):
        ws.write(0, i, h, fmt(**HEADER))
    rows = long_rows([(s.run, s.label) for s in report.runs], report.validity_notes, report.step_results)
    try:
        n = ws.put_rows(
            rows, len(COLUMNS), "Every row is in the report's CSV (every result in one long table)."
        )
    finally:
        done_reading(report)
    ws.freeze_panes(1, 0)
    ws.autofilter(0, 0, max(n, 1), len(COLUMNS) - 1)
    for i, w in enumerate((6, 14, 6, 30, 12, 9, 14, 16, 16, 14, 7, 8, 8, 12, 12, 24)):
        ws.set_column(i, i, w)


def put_summary(wb: xlsxwriter.Workbook, fmt: _Formats, report: Report, used: set[str]) -> None:
    ws = wb.add_worksheet(sheet_name("Summary", used))
    ws.set_column(0, 0, SUMMARY_WIDTH)
    m = report.meta
    lines: list[tuple[str, object]] = [(m.title, fmt(bold=True, font_size=14))]
    for k, v in (
        ("Client", m.client),
        ("Prepared by", ", ".join(x for x in (m.author, m.company) if x)),
        ("Date", m.date),
    ):
        if v:
            lines.append((f"{k}: {v}", None))
    if report.validity:  # first, as in the other formats: whether the figures measure the storage
        lines += [("", None), ("Validity", fmt(bold=True, font_color="#6B4210"))]
        lines += [(v, fmt(font_color="#6B4210", text_wrap=True)) for v in report.validity]
    for block in report.summary:
        lines.append(("", None))
        lines.append((block.heading, fmt(bold=True, font_color="#1F5FA8")))
        styles = {
            "what_changed": fmt(bold=True, text_wrap=True),
            "left_out": fmt(font_color="#6B4210", text_wrap=True),
            "validity": fmt(font_color="#6B4210", text_wrap=True),
            "noise": fmt(italic=True, font_color="#5B6673", text_wrap=True),
        }
        lines += [(s, styles.get(kind)) for kind, s in summary_lines(block)]
    if report.disclosure:
        lines += [("", None), ("Disclosure: what was run and what the numbers mean", fmt(bold=True))]
        lines += [(x, None) for x in report.disclosure]
    wrap = fmt(text_wrap=True, valign="top")
    for r, (text, f) in enumerate(lines):  # wrapped in the column: printed one page wide at a readable size
        ws.write_string(r, 0, text, f or wrap)
        if len(text) > SUMMARY_LINE:  # spreadsheets do not grow a written row to its wrapped text
            ws.set_row(r, 15 * -(-len(text) // SUMMARY_LINE))


def put_job_files(wb: xlsxwriter.Workbook, fmt: _Formats, report: Report, used: set[str]) -> None:
    ws = wb.add_worksheet(sheet_name("Job files", used))
    ws.set_column(0, 0, 100)
    mono = fmt(font_name="Consolas", font_size=9)
    r = 0
    for s in report.runs:
        for j in s.job_files:
            ws.write_string(r, 0, f"Run {s.run.id}, {j.title}", fmt(bold=True))
            r += 1
            for line in j.text.splitlines():
                ws.write_string(r, 0, line, mono)
                r += 1
            r += 1


def write_xlsx(report: Report, path: str | Path) -> None:
    """Raises OSError for a file that cannot be written."""
    wb = xlsxwriter.Workbook(
        str(path), {"strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False}
    )
    m = report.meta
    wb.set_properties(
        {
            "title": m.title,
            "author": ", ".join(x for x in (m.author, m.company) if x),
            "company": m.company,
            "subject": report.subject,
            "comments": "Made with Fiometer",
        }
    )
    fmt = _Formats(wb)
    used: set[str] = set()
    if report.summary or report.validity:
        put_summary(wb, fmt, report, used)
    for t in report.tables:
        if t.rows:
            put_table(wb, fmt, t, used)
    if report.charts:
        put_charts(wb, fmt, report.charts, used)
    sweeps = [
        c
        for c in report.every_chart
        if isinstance(c, LineChart)
        and c.key.startswith("sweep-")
        and c.x_ticks is not None
        and not c.key.endswith("-knee")
    ]
    if sweeps:
        put_line_charts(wb, fmt, sweeps, used, "Sweep charts")
    put_job_files(wb, fmt, report, used)
    put_data(wb, fmt, report, used)
    for ws in wb.worksheets():
        print_setup(ws, m.paper, (0, 0) if ws.get_name() == "data" else None)
    try:
        wb.close()
    except xlsxwriter.exceptions.FileCreateError as e:
        err = e.args[0] if e.args and isinstance(e.args[0], OSError) else None
        raise (err or OSError(str(e))) from e
