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
    "app.engine.transports.environment",
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
