"""Reports and comparison prepare everything without Qt; only app.report.pdf paints with it."""

import subprocess
import sys

from tests.helpers import assert_imports_without_qt

QT_FREE = [
    "app.analysis.compare",
    "app.analysis.run_groups",
    "app.analysis.iometer_import",
    "app.analysis.iometer_results_reader",
    "app.report.tables",
    "app.report.facts",
    "app.report.charts",
    "app.report.document",
    "app.report.html",
    "app.report.csv_out",
    "app.report.xlsx",
    "app.report.pdf_markup",
    "app.cli.history_commands",
    "app.cli.report_commands",
    "app.report.summary",
    "app.report.latency",
    "app.report.timeline",
    "app.report.long_form",
    "app.analysis.csv_safe",
    "app.analysis.samples_export",
    "app.engine.devices.environment",
]


def test_report_preparation_imports_without_qt():
    assert_imports_without_qt(QT_FREE)


def test_the_pdf_module_uses_qtgui_only():
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, app.report.pdf; print(sorted(m for m in sys.modules if m.startswith('PySide6.Qt')))",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['PySide6.QtCore', 'PySide6.QtGui']"


def test_a_cut_sheet_name_ends_in_neither_a_blank_nor_a_separator():
    """The issue's sheet "Transfers- before, round-robin ": Excel keeps the blank and a reader sees a typo."""
    from app.report.xlsx import sheet_name

    used: set[str] = set()
    first = sheet_name("Transfers: before, round-robin vs after, multipath", used)
    again = sheet_name("Transfers: before, round-robin vs after, multipath", used)
    assert first == "Transfers - before, round-robin"
    assert again == "Transfers - before, round-r (2)" and len(again) <= 31
    assert sheet_name("a/b [c]: d?", used) == "a-b -c- - d-"
