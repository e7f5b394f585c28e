"""The report as one self-contained HTML file: inline CSS, charts as inline SVG, nothing fetched (Qt-free).

Numeric cells carry their raw value in ``data-value`` so the page can be checked against the store.
"""

from __future__ import annotations

import re
from html import escape

from app.report.charts import LineChart, draw, family_of, small_multiples, to_svg
from app.report.document import Report
from app.report.pts_markup import pts_contents, pts_html
from app.report.sweep_charts import curves_title
from app.report.tables import Table
from app.report.validity_report import curve_contents

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
table.facts td { overflow-wrap: break-word; }
figure { margin: 14px 0 22px; }
figure svg { max-width: 100%; height: auto; }
figure.small { display: inline-block; width: 48%; margin: 0 1% 1em 0; vertical-align: top; }
details { margin: 6px 0; }
summary { cursor: pointer; color: var(--accent); }
pre { background: #f3f5f7; border: 1px solid var(--rule); padding: 8px 10px; font-size: 12px; overflow-x: auto; }
nav.toc { background: #f6f7f9; padding: 8px 14px; margin: 0 0 18px; font-size: 13px; }
nav.toc ol { margin: 4px 0 0; padding-left: 20px; columns: 2; }
img.logo { float: right; max-height: 64px; max-width: 200px; }
ul.summary li { margin: 3px 0; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--rule);
         padding-top: 8px; }
@media print { body { background: #fff; } main { padding: 0; } details { display: block; }
               h2, h3 { break-after: avoid; } figure, .callout, tr { break-inside: avoid; }
               thead { display: table-header-group; } }
"""


def _attr(v) -> str:
    return "" if v is None or isinstance(v, str) else f' data-value="{v!r}"'


LONG_WORD = re.compile(r"\S{25,}")


def wrappable(text: str) -> str:
    """Escaped text whose long words (mount options, paths) may wrap after a comma, slash, equals or semicolon
    (``<wbr>``), not inside a number: "resgid=655<br>34" is what a browser does otherwise."""
    return LONG_WORD.sub(lambda m: re.sub(r"([,/=;])(?=.)", r"\1<wbr>", m.group()), escape(text))


def table_html(t: Table, css_class: str = "data") -> str:
    if not t.rows:  # say why instead of an empty table
        return '<ul class="notes">' + "".join(f"<li>{escape(n)}</li>" for n in t.notes) + "</ul>"
    out = [f'<table class="{css_class}" id="{escape(t.key)}">', "<thead><tr>"]
    out += [f"<th{' class=num' if c.numeric else ''}>{escape(c.title)}</th>" for c in t.columns]
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
            tds.append(f"<td{cls}{_attr(cell.value)}>{wrappable(cell.text)}</td>")
        out.append("<tr>" + "".join(tds) + "</tr>")
    out.append("</tbody></table>")
    if t.notes:
        out.append('<ul class="notes">' + "".join(f"<li>{escape(n)}</li>" for n in t.notes) + "</ul>")
    return "\n".join(out)


def logo_data_uri(path: str) -> str:
    """The logo inline (the HTML stays one self-contained file); "" when it cannot be read."""
    import base64
    from pathlib import Path

    kind = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".gif": "gif", ".svg": "svg+xml"}.get(
        Path(path).suffix.lower()
    )
    try:
        data = Path(path).read_bytes() if kind else b""
    except OSError:
        return ""
    return f"data:image/{kind};base64," + base64.b64encode(data).decode() if data else ""


def summary_html(report: Report) -> list[str]:
    h = []
    for block in report.summary:
        h.append(f"<h3>{escape(block.heading)}</h3>")
        if block.what_changed:  # a one-run summary has no other side
            h.append(
                '<p class="what-changed"><strong>What changed:</strong> '
                + escape("; ".join(block.what_changed))
                + "</p>"
            )
        h.append('<ul class="summary">' + "".join(f"<li>{escape(s)}</li>" for s in block.sentences) + "</ul>")
        if block.headlines:
            h.append(
                '<p><strong>Headline figures:</strong></p><ul class="summary">'
                + "".join(f"<li>{escape(s)}</li>" for s in block.headlines)
                + "</ul>"
            )
        if block.unchanged:
            h.append(f"<p>{escape(block.unchanged)}</p>")
        if block.left_out:
            h.append(
                '<div class="callout"><strong>Left out of the findings (did not run to the end):</strong><ul>'
                + "".join(f"<li>{escape(w)}</li>" for w in block.left_out)
                + "</ul></div>"
            )
        if block.validity:
            h.append(
                '<div class="validity"><strong>Validity:</strong><ul>'
                + "".join(f"<li>{escape(w)}</li>" for w in block.validity)
                + "</ul></div>"
            )
        h.append(
            f'<p class="note">{escape(block.noise)} Higher IOPS and MB/s are better; lower response '
            "times are better.</p>"
        )
    return h


def sections(report: Report) -> list[tuple[str, str]]:
    """(anchor, title) of the report's sections in order: the table of contents."""
    out = [("validity", "Validity")] if report.validity else []
    if report.summary:
        out.append(("summary", "Summary"))
    out += pts_contents(report)
    out.append(("environment", "Test environment"))
    if report.comparisons:
        out.append(("compare", "Before / after"))
    out.append(("latency", "Response time percentiles"))
    if report.charts or report.line_charts:
        out.append(("charts", "Charts"))
    out.append(("runs", "Results per run"))
    out += [(f"curve-{s.run.id}", line) for s in report.runs if (line := curve_contents(s.run))]
    out.append(("appendix", "Run facts and method"))
    return out


def _line_figures(charts: list[LineChart]) -> list[str]:
    """The per-step charts of a sweep two a row (small multiples); each family starts a row of its own."""
    small = small_multiples(charts)
    out = []
    for i, lc in enumerate(charts):
        if i and lc.key in small and family_of(lc.key) != family_of(charts[i - 1].key):
            out.append('<div class="row-break"></div>')
        out.append(_figure(lc, lc.key in small))
    return out


def _figure(chart: LineChart, small: bool) -> str:
    if small:
        return f'<figure class="small" id="{chart.key}">{to_svg(draw(chart, 372), chart.title)}</figure>'
    return f'<figure id="{chart.key}">{to_svg(draw(chart, 760), chart.title)}</figure>'


def render_html(report: Report) -> str:
    m = report.meta
    h = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(m.title)}</title>",
        f'<meta name="author" content="{escape(", ".join(x for x in (m.author, m.company) if x))}">',
        f'<meta name="description" content="{escape(report.subject)}">',
        f"<style>{CSS}</style></head><body><main>",
        '<header class="cover">',
    ]
    h += _cover_html(report)
    h.append(
        '<nav class="toc"><strong>Contents</strong><ol>'
        + "".join(f'<li><a href="#{a}">{escape(t)}</a></li>' for a, t in sections(report))
        + "</ol></nav>"
    )
    if report.validity:  # first: whether the figures below measure the storage
        h.append(
            '<h2 id="validity">Validity</h2><div class="callout"><ul>'
            + "".join(f"<li>{escape(v)}</li>" for v in report.validity)
            + "</ul></div>"
        )

    if report.summary:
        h.append('<h2 id="summary">Summary</h2>')
        h += summary_html(report)
        if report.glance:
            h.append(f"<h3>{escape(report.glance.title)}</h3>")
            h.append(table_html(report.glance))
    h += pts_html(report)
    h.append('<h2 id="environment">Test environment</h2>')
    h.append(table_html(report.environment, "data facts"))
    h += _compare_html(report)
    if report.notes:
        h.append(
            '<div class="callout"><ul>'
            + "".join(f"<li>{escape(n)}</li>" for n in report.notes)
            + "</ul></div>"
        )
    h.append('<h2 id="latency">Response time percentiles</h2>')
    h.append(table_html(report.percentiles))
    h += _charts_html(report)
    h += _runs_html(report)
    h += _appendix_html(report)
    client = " \u2014 " + escape(m.client) if m.client else ""
    h.append(
        f"<footer>Made with Fiometer from its results database. {escape(m.title)}{client}, "
        f"{escape(m.date)}.</footer>"
    )
    h.append("</main></body></html>")
    return "\n".join(h) + "\n"


def _cover_html(report: Report) -> list[str]:
    """The cover: logo, title, who and when, the runs."""
    m = report.meta
    h: list[str] = []
    logo = logo_data_uri(m.logo) if m.logo else ""
    if logo:
        h.append(f'<img class="logo" src="{logo}" alt="logo">')
    h.append(f"<h1>{escape(m.title)}</h1><dl>")
    by = ", ".join(x for x in (m.author, m.company) if x)
    for k, v in (("Client", m.client), ("Prepared by", by), ("Date", m.date)):
        if v:
            h.append(f"<dt>{k}</dt><dd>{escape(v)}</dd>")
    runs = "; ".join(
        f"Run {s.run.id}"
        + (f" \u201c{escape(s.run.name)}\u201d" if s.run.name else "")
        + f" ({escape(s.label)})"
        for s in report.runs
    )
    h.append(f"<dt>Runs</dt><dd>{runs}</dd></dl></header>")
    return h


def _compare_html(report: Report) -> list[str]:
    """Before / after: the comparisons, the headlines, what could not be matched."""
    h: list[str] = []
    if report.comparisons:
        h.append('<h2 id="compare">Before / after</h2>')
        for t in report.comparison_tables + report.headline_tables:
            h.append(f"<h3>{escape(t.title)}</h3>")
            h.append(table_html(t))
        for t in report.unmatched_tables:
            h.append(f"<h3>{escape(t.title)}</h3>")
            h.append(table_html(t))
    return h


def _charts_html(report: Report) -> list[str]:
    """The charts: per step, the sweep overlays, the line charts."""
    h: list[str] = []
    if report.charts or report.line_charts:
        h.append('<h2 id="charts">Charts</h2>')
        for ch in report.charts:
            h.append(f'<figure id="{ch.key}">{to_svg(draw(ch, 760), ch.title)}</figure>')
        if report.sweep_overlays:
            h.append('<h3 id="sweep-overlays">Sweeps and steady state, before and after</h3>')
        h += [_figure(lc, False) for lc in report.sweep_overlays]
        h += _line_figures(report.line_charts)
    return h


def _runs_html(report: Report) -> list[str]:
    """The results per run, each run's sweep curves after its sweep table."""
    h: list[str] = []
    h.append('<h2 id="runs">Results per run</h2>')
    for s in report.runs:
        for table in (s.summary, *s.workloads):
            h.append(f'<h3 id="{escape(table.key)}">{escape(table.title)}</h3>')
            h.append(table_html(table))
            if table.key == f"sweep-{s.run.id}" and s.sweep_charts:
                h.append(f"<h3>{escape(curves_title(s.run))}</h3>")
                h += [
                    f'<figure id="{c.key}">{to_svg(draw(c, 760), c.title)}</figure>' for c in s.sweep_charts
                ]
    return h


def _appendix_html(report: Report) -> list[str]:
    """Run facts and method: the disclosure, the job options, each run's facts and job files."""
    h: list[str] = []
    h.append('<h2 id="appendix">Run facts and method</h2>')
    if report.disclosure:
        h.append("<h3>Disclosure: what was run and what the numbers mean</h3>")
        h.append(
            '<ul class="summary">' + "".join(f"<li>{escape(x)}</li>" for x in report.disclosure) + "</ul>"
        )
    h.append(f"<h3>{escape(report.job_options.title)}</h3>")
    h.append(table_html(report.job_options))
    for s in report.runs:
        h.append(f"<h3>{escape(s.facts.title)}</h3>")
        h.append(table_html(s.facts, "data facts"))
        if s.job_files:
            h.append(f"<details><summary>fio job files ({len(s.job_files)})</summary>")
            for j in s.job_files:
                h.append(f"<p class=note>{escape(j.title)}</p><pre>{escape(j.text)}</pre>")
            h.append("</details>")
    return h
