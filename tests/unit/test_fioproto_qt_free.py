"""The fio protocol client is Qt-free and needs no numpy (it runs in the CLI and in worker threads)."""

import subprocess
import sys

MODULES = [
    "app.engine.transports.fioproto",
    "app.engine.transports.fioproto",
    "app.engine.transports.fioproto.frames",
    "app.engine.transports.fioproto.commands",
    "app.engine.transports.fioproto.layouts",
    "app.engine.transports.fioproto.tstat",
    "app.engine.transports.fioproto.statmath",
    "app.engine.transports.fioproto.decode",
    "app.engine.transports.fioproto.decoder",
    "app.engine.transports.fioproto.client",
]


def test_imports_without_qt_or_third_party_packages():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph', 'numpy'):\n"
        "            raise ImportError('blocked in this test: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        f"for m in {MODULES!r}:\n"
        "    __import__(m)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
