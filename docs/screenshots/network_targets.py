"""Screenshots of the Network Targets tab and of a network worker's live and stored results: two real `fio --server`
managers on loopback (127.0.0.2 and 127.0.0.3), a TCP network worker on A sending to B for 5 s.
Run: QT_QPA_PLATFORM=offscreen python docs/screenshots/network_targets.py"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from shot_kit import start_app  # noqa: E402

from app.model import plan as P  # noqa: E402
from app.model import planfile  # noqa: E402
from app.ui import settings as prefs  # noqa: E402
from app.ui.launch import HeadlessWindow  # noqa: E402
from app.ui.plan.network_tab import NetworkTargetDialog  # noqa: E402
from app.ui.plan.topology import Selection  # noqa: E402
from app.ui.screenshots import SIZE, settle, wait_for_run  # noqa: E402
from tests.fio_servers import fio_servers  # noqa: E402


def main() -> int:
    tmp = tempfile.mkdtemp(prefix="fiometer-shots-")
    start_app(tmp)
    servers = fio_servers()
    start = next(servers)
    try:
        (ha, pa, _), (hb, pb, _) = start("127.0.0.2"), start("127.0.0.3")
        send = P.AccessSpec(
            "64 KiB send", [P.SpecLine(65536, 100, 0, 0, 0, 1, 0, 0)], default_assignment="NET"
        )
        net = P.Worker(
            "Net 1",
            kind="network_tcp",
            specs=[send.name],
            targets=[P.Target("B (TCP)", kind="network", partner_manager="B")],
        )
        plan = P.Plan(
            "Network workers",
            P.TestSetup(run_time=5),
            [send],
            [P.Manager("A", f"{ha}:{pa}", workers=[net]), P.Manager("B", f"{hb}:{pb}")],
        )
        path = Path(tmp) / "network.fiometer.json"
        planfile.save(plan, path)
        win = HeadlessWindow(prefs.app_settings(), persist=False, db_path=Path(tmp) / "runs.db")
        win.show()
        win.resize(*SIZE)
        win.files.open_path(path)
        settle(3.0)  # the managers' probes answer
        win.topology.select(Selection(0, 0))
        win.show_tab(win.network_tab)
        settle(0.3)
        win.grab().save(str(HERE / "network-targets.png"))
        print(HERE / "network-targets.png")
        dlg = NetworkTargetDialog(win.doc.plan, 0, net, net.targets[0], win)
        dlg.fixed.setChecked(True)
        dlg.show()
        settle(0.3)
        dlg.grab().save(str(HERE / "dialog-network-target.png"))
        print(HERE / "dialog-network-target.png")
        dlg.reject()
        if win.run_control.start_run() and wait_for_run(win, 60):
            rt = win.results_tab
            rt.scope.setCurrentIndex(
                [rt.scope.itemText(i) for i in range(rt.scope.count())].index("Each worker (all managers)")
            )
            win.show_tab(rt)
            rt.redraw(force=True)
            settle(0.5)
            win.grab().save(str(HERE / "network-results.png"))
            print(HERE / "network-results.png")
            view = win.history.open_run(1)  # the same run from the results database
            settle(1.0)
            view.scope.setCurrentIndex(
                [view.scope.itemText(i) for i in range(view.scope.count())].index("Each worker")
            )
            settle(1.0)
            win.grab().save(str(HERE / "network-history.png"))
            print(HERE / "network-history.png")
        win.doc.dirty = False
        win.close()
    finally:
        servers.close()  # stops both servers and any job process they left
    return 0


if __name__ == "__main__":
    sys.exit(main())
