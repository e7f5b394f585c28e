"""Write a built report in one format: the one place the CLI and the window both call.

The renderers are imported lazily, so writing HTML/CSV/XLSX never loads Qt (only the PDF does).
"""

from __future__ import annotations

from pathlib import Path

from app.report.document import Report

FORMATS = ("html", "pdf", "xlsx", "csv")  # and "csv-tables": the tables as a person reads them


def write_report_file(report: Report, kind: str, path: str | Path) -> Path:
    """Raises OSError for a file that cannot be written (app.safe_files.UnsafeOutput, in words, for a
    link, a device or anything else that is not a regular file, /dev/null, a terminal or a pipe)."""
    from app.safe_files import staged, write_file

    path = Path(path)
    if kind == "html":
        from app.report.html import render_html

        write_file(path, render_html(report))
    elif kind == "csv":
        from app.report.csv_out import render_csv

        write_file(path, render_csv(report), encoding="utf-8-sig", newline="")
    elif kind == "csv-tables":
        from app.report.csv_out import render_tables_csv

        write_file(path, render_tables_csv(report), encoding="utf-8-sig", newline="")
    elif kind == "xlsx":
        from app.report.xlsx import write_xlsx

        with staged(path) as tmp:
            write_xlsx(report, tmp)
    elif kind == "pdf":
        from app.report.pdf import write_pdf

        with staged(path) as tmp:
            write_pdf(report, str(tmp))
    else:
        raise ValueError(f"unknown report format {kind!r}; one of {', '.join(FORMATS)}")
    return path
