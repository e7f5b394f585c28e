"""Reports and comparison prepare everything without Qt; only app.report.pdf paints with it."""

import subprocess
import sys

QT_FREE = [
    "app.analysis.compare", "app.analysis.run_groups", "app.analysis.iometer_import",
    "app.analysis.iometer_results_reader", "app.report.tables", "app.report.facts", "app.report.charts",
    "app.report.document", "app.report.html", "app.report.csv_out", "app.report.xlsx", "app.report.pdf_markup",
    "app.cli_history", "app.cli_report",
]


def test_report_preparation_imports_without_qt():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph'):\n"
        "            raise ImportError('Qt is blocked in this test: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        f"for m in {QT_FREE!r}:\n"
        "    __import__(m)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_the_pdf_module_uses_qtgui_only():
    out = subprocess.run([sys.executable, "-c", "import sys, app.report.pdf; "
                          "print(sorted(m for m in sys.modules if m.startswith('PySide6.Qt')))"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['PySide6.QtCore', 'PySide6.QtGui']"
