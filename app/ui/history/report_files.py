"""Writing a report's files from the window: built and rendered by app.report exactly as `fiometer report`
does (same builder, same renderers, same encodings), on a store task thread.

The PDF is painted on that thread too: app.report.pdf uses QPdfWriter, QPainter and QTextDocument, which
Qt supports outside the GUI thread (painting on a printer-type device, reentrant rich text, threaded
font rendering); its only GUI-thread need, a QGuiApplication, exists in the window. The thread is a
QThread (see store_tasks), so the Qt objects it makes have an event dispatcher.
"""

from __future__ import annotations

import re
from pathlib import Path

from app.report.document import ReportMeta, build_report
from app.report.output_files import FORMATS, write_report_file
from app.store import Store
from app.ui.history.compare_data import CompareRequest

SUFFIXES = {"html": ".html", "pdf": ".pdf", "xlsx": ".xlsx", "csv": ".csv"}
FORMAT_TITLES = {
    "html": "HTML (one self-contained file)",
    "pdf": "PDF (cover, tables, charts, appendix)",
    "xlsx": "XLSX (Excel: tables as numbers, native charts)",
    "csv": "CSV (every result in one long table)",
}


def default_name(req: CompareRequest) -> str:
    """fiometer-run-3, fiometer-run-3-vs-4-5 (a file name without suffix)."""
    base = "-".join(map(str, req.baseline))
    cands = ["-".join(map(str, g)) for g in req.candidates]
    return f"fiometer-run-{base}" + (f"-vs-{'-'.join(cands)}" if cands else "")


def safe_name(text: str) -> str:
    """A file name the user typed, without folders or characters Windows refuses."""
    name = re.sub(r'[<>:"/\\|?*\x00-\x1f]', "-", text.strip()).strip(" .")
    for suffix in SUFFIXES.values():
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name


def output_paths(folder: Path, name: str, formats: list[str]) -> dict[str, Path]:
    return {k: folder / f"{name}{SUFFIXES[k]}" for k in FORMATS if k in formats}


def write_report(store: Store, req: CompareRequest, meta: ReportMeta, outputs: dict[str, Path]) -> list[Path]:
    """Build the report and write each file (a store task). RunNotFound if a run was deleted; OSError for a
    file that cannot be written (the files before it are written)."""
    report = build_report(
        store,
        req.baseline,
        req.candidates,
        meta,
        threshold_pct=req.threshold_pct,
        match=req.match,
        repeats=req.repeats,
    )
    written = []
    for kind, path in outputs.items():
        write_report_file(report, kind, path)
        written.append(Path(path))
    return written
