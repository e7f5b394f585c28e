"""The report's tables as one CSV file (Qt-free): each table under its title, a blank line between tables.

Numbers are written raw (full precision, change % as a percentage number), so a spreadsheet computes with
them; a comparison table gets a leading Metric column instead of heading rows.
"""

from __future__ import annotations

import csv
import io

from app.report.document import Report
from app.report.tables import Table


def _value(cell, pct: bool) -> str:
    v = cell.value
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if pct:
        v *= 100
    return repr(float(f"{v:.10g}")) if isinstance(v, float) else str(v)


def write_table(w, t: Table) -> None:
    grouped = any(r.group for r in t.rows)
    w.writerow([t.title])
    w.writerow(([t.group_title] if grouped else []) + [c.title for c in t.columns])
    pct_cols = {i for i, c in enumerate(t.columns) if c.title.endswith("%") or c.title.startswith("Noise")
                or c.title == "Largest change"}
    for r in t.rows:
        cells = [_value(c, i in pct_cols) for i, c in enumerate(r.cells)]
        w.writerow(([r.group_value or r.group] if grouped else []) + cells)
    for n in t.notes:
        w.writerow([n])
    w.writerow([])


def render_csv(report: Report) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    m = report.meta
    w.writerow([m.title])
    for k, v in (("Client", m.client), ("Prepared by", m.author), ("Date", m.date)):
        if v:
            w.writerow([k, v])
    w.writerow([])
    for t in report.tables:
        write_table(w, t)
    return buf.getvalue()
