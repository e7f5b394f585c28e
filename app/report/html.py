"""The report as one self-contained HTML file: inline CSS, charts as inline SVG, nothing fetched (Qt-free).

Numeric cells carry their raw value in ``data-value`` so the page can be checked against the store.
"""

from __future__ import annotations

from html import escape

from app.report.charts import layout, to_svg
from app.report.document import Report
from app.report.tables import Table

CSS = """
:root { --ink:#1d2733; --muted:#5b6673; --rule:#d5dae0; --head:#eef1f4; --better:#17693a; --better-bg:#e6f4ea;
        --worse:#a8231b; --worse-bg:#fbe9e7; --accent:#1f5fa8; }
* { box-sizing: border-box; }
body { font-family: "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink); margin: 0;
       background: #f6f7f9; font-size: 14px; line-height: 1.45; }
main { max-width: 1060px; margin: 0 auto; padding: 32px 40px 64px; background: #fff; }
header.cover { border-bottom: 3px solid var(--accent); padding-bottom: 16px; margin-bottom: 24px; }
header.cover h1 { font-size: 26px; margin: 0 0 6px; font-weight: 600; }
header.cover dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0 0;
                  color: var(--muted); }
header.cover dt { font-weight: 600; }
header.cover dd { margin: 0; }
h2 { font-size: 19px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--rule); }
h3 { font-size: 15px; margin: 22px 0 6px; }
p.note, ul.notes { color: var(--muted); font-size: 12.5px; margin: 4px 0 12px; }
ul.notes { padding-left: 18px; }
.callout { border-left: 4px solid #d9822b; background: #fdf5ec; padding: 8px 12px; margin: 10px 0 14px; }
.callout ul { margin: 4px 0 0; padding-left: 18px; }
table.data { border-collapse: collapse; width: 100%; margin: 6px 0 4px; font-size: 13px; }
table.data th, table.data td { padding: 4px 8px; border-bottom: 1px solid var(--rule); vertical-align: top; }
table.data thead th { background: var(--head); text-align: left; font-weight: 600; border-bottom: 2px solid #b9c1ca; }
table.data th.num, table.data td.num { text-align: right; font-variant-numeric: tabular-nums;
                                       white-space: nowrap; }
table.data tr.group th { background: #fff; text-align: left; padding-top: 12px; color: var(--accent);
                         font-size: 13px; border-bottom: 1px solid #b9c1ca; }
td.better { color: var(--better); background: var(--better-bg); font-weight: 600; }
td.worse { color: var(--worse); background: var(--worse-bg); font-weight: 600; }
table.facts td:first-child { width: 190px; color: var(--muted); white-space: nowrap; }
table.facts td { word-break: break-word; }
figure { margin: 14px 0 22px; }
figure svg { max-width: 100%; height: auto; }
details { margin: 6px 0; }
summary { cursor: pointer; color: var(--accent); }
pre { background: #f3f5f7; border: 1px solid var(--rule); padding: 8px 10px; font-size: 12px; overflow-x: auto; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--rule);
         padding-top: 8px; }
@media print { body { background: #fff; } main { padding: 0; } details { display: block; } }
"""


def _attr(v) -> str:
    return "" if v is None or isinstance(v, str) else f' data-value="{v!r}"'


def table_html(t: Table, css_class: str = "data") -> str:
    if not t.rows:  # say why instead of an empty table
        return '<ul class="notes">' + "".join(f"<li>{escape(n)}</li>" for n in t.notes) + "</ul>"
    out = [f'<table class="{css_class}" id="{escape(t.key)}">', "<thead><tr>"]
    out += [f'<th{" class=num" if c.numeric else ""}>{escape(c.title)}</th>' for c in t.columns]
    out.append("</tr></thead><tbody>")
    group = None
    for row in t.rows:
        if row.group and row.group != group:
            group = row.group
            out.append(f'<tr class="group"><th colspan="{len(t.columns)}">{escape(group)}</th></tr>')
        tds = []
        for col, cell in zip(t.columns, row.cells, strict=True):
            classes = " ".join(x for x in ("num" if col.numeric else "", cell.mark or "") if x)
            cls = f' class="{classes}"' if classes else ""
            tds.append(f"<td{cls}{_attr(cell.value)}>{escape(cell.text)}</td>")
        out.append("<tr>" + "".join(tds) + "</tr>")
    out.append("</tbody></table>")
    if t.notes:
        out.append('<ul class="notes">' + "".join(f"<li>{escape(n)}</li>" for n in t.notes) + "</ul>")
    return "\n".join(out)


def render_html(report: Report) -> str:
    m = report.meta
    h = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
         '<meta name="viewport" content="width=device-width, initial-scale=1">',
         f"<title>{escape(m.title)}</title>", f"<style>{CSS}</style></head><body><main>",
         '<header class="cover">', f"<h1>{escape(m.title)}</h1><dl>"]
    for k, v in (("Client", m.client), ("Prepared by", m.author), ("Date", m.date)):
        if v:
            h.append(f"<dt>{k}</dt><dd>{escape(v)}</dd>")
    runs = "; ".join(f"Run {s.run.id}" + (f" \u201c{escape(s.run.name)}\u201d" if s.run.name else "")
                     for s in report.runs)
    h.append(f"<dt>Runs</dt><dd>{runs}</dd></dl></header>")

    if report.comparisons:
        h.append("<h2>Summary</h2>")
        compared = "; ".join(f"{escape(c.candidate.label)} \u201c{escape(c.candidate.name)}\u201d"
                             for c in report.comparisons)
        h.append(f"<p>Baseline: {escape(report.baseline.label)} \u201c{escape(report.baseline.name)}\u201d. "
                 f"Compared: {compared}.</p>")
        h.append('<p class="note">Higher IOPS and MB/s are better; lower response times are better. Changes '
                 "within run-to-run noise are not marked.</p>")
        for c, diffs in zip(report.comparisons, report.differences, strict=True):
            if diffs:
                h.append(f'<div class="callout"><strong>{escape(c.candidate.label)} and the baseline differ in '
                         "more than the change under test:</strong><ul>"
                         + "".join(f"<li>{escape(d)}</li>" for d in diffs) + "</ul></div>")
        if report.glance:
            h.append(f"<h3>{escape(report.glance.title)}</h3>")
            h.append(table_html(report.glance))
        h.append("<h2>Before / after</h2>")
        for t in report.comparison_tables:
            h.append(f"<h3>{escape(t.title)}</h3>")
            h.append(table_html(t))
        for t in report.unmatched_tables:
            h.append(f"<h3>{escape(t.title)}</h3>")
            h.append(table_html(t))
    if report.notes:
        h.append('<div class="callout"><ul>' + "".join(f"<li>{escape(n)}</li>" for n in report.notes)
                 + "</ul></div>")
    if report.charts:
        h.append("<h2>Charts</h2>")
        for ch in report.charts:
            h.append(f'<figure id="{ch.key}">{to_svg(layout(ch, 760), ch.title)}</figure>')
    h.append("<h2>Results per run</h2>")
    for s in report.runs:
        h.append(f"<h3>{escape(s.summary.title)}</h3>")
        h.append(table_html(s.summary))
    h.append("<h2>Run facts and method</h2>")
    for s in report.runs:
        h.append(f"<h3>{escape(s.facts.title)}</h3>")
        h.append(table_html(s.facts, "data facts"))
        if s.job_files:
            h.append(f"<details><summary>fio job files ({len(s.job_files)})</summary>")
            for j in s.job_files:
                h.append(f"<p class=note>{escape(j.title)}</p><pre>{escape(j.text)}</pre>")
            h.append("</details>")
    client = " \u2014 " + escape(m.client) if m.client else ""
    h.append(f"<footer>Made with Fiometer from its results database. {escape(m.title)}{client}, "
             f"{escape(m.date)}.</footer>")
    h.append("</main></body></html>")
    return "\n".join(h) + "\n"
