"""The report as CSV (Qt-free).

``render_csv``: one tidy long table (see ``long_form``) that loads in one step. ``render_tables_csv``: the
report's tables as a person reads them, each under its title (the "human" file, written on request).
Every cell goes through ``safe_cell``: text starting like a formula is neutralised, numbers stay numbers.
"""

from __future__ import annotations

import csv
import io

from app.analysis.csv_safe import safe_cell
from app.report.document import Report, done_reading
from app.report.long_form import COLUMNS, long_rows
from app.report.summary import summary_lines
from app.report.tables import Table


def _writer(buf: io.StringIO):
    return csv.writer(buf, lineterminator="\r\n")


def _row(w, cells) -> None:
    w.writerow([safe_cell(c) for c in cells])


def render_csv(report: Report) -> str:
    buf = io.StringIO()
    w = _writer(buf)
    w.writerow(COLUMNS)
    try:
        for row in long_rows(
            [(s.run, s.label) for s in report.runs], report.validity_notes, report.step_results
        ):
            _row(w, [float(f"{v:.10g}") if isinstance(v, float) else v for v in row])
    finally:
        done_reading(report)
    return buf.getvalue()


def _value(cell, pct: bool):
    v = cell.value
    if v is None or isinstance(v, str):
        return v
    if pct:
        v *= 100
    return float(f"{v:.10g}") if isinstance(v, float) else v


def write_table(w, t: Table) -> None:
    grouped = any(r.group for r in t.rows)
    _row(w, [t.title])
    _row(w, ([t.group_title] if grouped else []) + [c.title for c in t.columns])
    pct_cols = {
        i
        for i, c in enumerate(t.columns)
        if c.title.endswith("%") or c.title.startswith("Noise") or c.title == "Largest change"
    }
    for r in t.rows:
        cells = [_value(c, i in pct_cols) for i, c in enumerate(r.cells)]
        _row(w, ([r.group_value or r.group] if grouped else []) + cells)
    for n in t.notes:
        _row(w, [n])
    w.writerow([])


def render_tables_csv(report: Report) -> str:
    buf = io.StringIO()
    w = _writer(buf)
    m = report.meta
    _row(w, [m.title])
    for k, v in (("Client", m.client), ("Prepared by", m.author), ("Company", m.company), ("Date", m.date)):
        if v:
            _row(w, [k, v])
    w.writerow([])
    if report.validity:  # first, as in the other formats: whether the figures measure the storage
        _row(w, ["Validity"])
        for v in report.validity:
            _row(w, [v])
        w.writerow([])
    for block in report.summary:
        _row(w, [block.heading])
        for _kind, s in summary_lines(block):
            _row(w, [s])
        w.writerow([])
    for t in report.tables:
        write_table(w, t)
    if report.disclosure:
        _row(w, ["Disclosure: what was run and what the numbers mean"])
        for x in report.disclosure:
            _row(w, [x])
    return buf.getvalue()
