"""Write a built report in one format: the one place the CLI and the window both call.

The renderers are imported lazily, so writing HTML/CSV/XLSX never loads Qt (only the PDF does).
"""

from __future__ import annotations

from pathlib import Path

from app.report.document import Report

FORMATS = ("html", "pdf", "xlsx", "csv")  # and "csv-tables": the tables as a person reads them


def write_report_file(report: Report, kind: str, path: str | Path) -> Path:
    """Raises OSError for a file that cannot be written."""
    path = Path(path)
    if kind == "html":
        from app.report.html import render_html
        path.write_text(render_html(report), encoding="utf-8")
    elif kind == "csv":
        from app.report.csv_out import render_csv
        path.write_text(render_csv(report), encoding="utf-8-sig", newline="")
    elif kind == "csv-tables":
        from app.report.csv_out import render_tables_csv
        path.write_text(render_tables_csv(report), encoding="utf-8-sig", newline="")
    elif kind == "xlsx":
        from app.report.xlsx import write_xlsx
        write_xlsx(report, path)
    elif kind == "pdf":
        from app.report.pdf import write_pdf
        write_pdf(report, str(path))
    else:
        raise ValueError(f"unknown report format {kind!r}; one of {', '.join(FORMATS)}")
    return path
