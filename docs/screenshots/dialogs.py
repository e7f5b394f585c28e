"""Screenshots of the dialogs and of the 16 x 8 worker view, next to the per-tab ones that
`fiometer gui PLAN --screenshot DIR` writes. Run: QT_QPA_PLATFORM=offscreen python docs/screenshots/dialogs.py"""

from __future__ import annotations

import socket
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))


from shot_kit import settle, start_app  # noqa: E402

from app.model.builtin_specs import find_builtin  # noqa: E402
from app.model.plan import AccessSpec, SpecLine  # noqa: E402
from app.ui import settings as prefs  # noqa: E402
from app.ui.launch import HeadlessWindow  # noqa: E402
from app.ui.plan.manager_dialog import AddManagerDialog  # noqa: E402
from app.ui.plan.spec_editor import SpecEditor  # noqa: E402
from app.ui.plan.targets_tab import AddTestFileDialog  # noqa: E402

KEEP: list = []  # widgets must not be destroyed before QApplication at the end of main()


def shot(widget, name: str) -> None:
    KEEP.append(widget)
    widget.show()
    settle()
    widget.grab().save(str(HERE / name))
    print(HERE / name)


def main() -> int:
    tmp = tempfile.mkdtemp(prefix="fiometer-shots-")
    start_app(tmp)  # no welcome banner in the pictures

    spec = AccessSpec(
        "Fileserver (Intel)",
        [
            SpecLine(512, 10, 80, 100, 0, 1, 0, 0),
            SpecLine(4096, 60, 80, 100, 0, 1, 0, 0),
            SpecLine(65536, 20, 80, 100, 0, 1, 0, 0),
        ],
    )
    editor = SpecEditor(spec, {"Default"}, "Edit Access Specification")
    editor.edits["reads"].setText("180")
    editor._edited("reads", "180")  # what typing does: the error shows next to the field, OK is disabled
    shot(editor, "dialog-spec-editor.png")

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dlg = AddManagerDialog(set())
    dlg.host.setText(f"127.0.0.1:{port}")
    dlg.probe()
    end = time.monotonic() + 10
    while not dlg.result.text().startswith("Not reachable") and time.monotonic() < end:
        settle(0.1)
    shot(dlg, "dialog-add-manager-unreachable.png")

    win = HeadlessWindow(prefs.app_settings(), persist=False, db_path=Path(tmp) / "runs.db")
    KEEP.append(win)
    win.doc.plan.specs.append(find_builtin("Default"))
    test_file = AddTestFileDialog(win.doc.plan.managers[0].workers[0])
    shot(test_file, "dialog-add-test-file.png")

    # the many-series view the benchmark measures: 16 managers x 8 workers, an hour at 1 Hz
    sys.path.insert(0, str(HERE.parents[1] / "benchmarks"))
    import bench_gui

    big = bench_gui.new_window(16, 8, Path(tmp))
    KEEP.append(big)
    bench_gui.fill_history(big, 3600, 8)
    bench_gui.choose_scope(big, "Each worker (all managers)")
    big.results_tab.redraw(force=True)
    settle(0.5)
    big.grab().save(str(HERE / "results-16x8-workers-1h.png"))
    print(HERE / "results-16x8-workers-1h.png")
    big.doc.dirty = False
    big.close()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
