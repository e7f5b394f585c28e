"""The Qt-free layers import with Qt absent (DESIGN.md: nothing below app.ui imports Qt)."""

import subprocess
import sys

QT_FREE = [
    "icf_import",
    "app.model",
    "app.model.metrics",
    "app.model.opening",
    "app.model.examples",
    "app.engine",
    "app.engine.transport",
    "app.engine.fio_binary",
    "app.engine.fio_json_stream",
    "app.engine.fio_messages",
    "app.engine.local_fio",
    "app.engine.telemetry",
    "app.engine.runner",
    "app.engine.managers",
    "app.engine.remote",
    "app.engine.safety",
    "app.store",
    "app.recording",
    "app.analysis.export_run",
    "app.analysis.compare",
    "app.cli_progress",
]


def test_qt_free_layers_import_without_qt():
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
