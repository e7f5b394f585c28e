"""Screenshots of the History tab, a before/after comparison and the report dialog, from a demo results
database (the EVA 4400 example of examples/before-after.md, written through the real Recorder).
Run: QT_QPA_PLATFORM=offscreen python docs/screenshots/history_shots.py"""

from __future__ import annotations

import math
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))


from shot_kit import settle, start_app  # noqa: E402

from app.model import planfile  # noqa: E402
from app.model.metrics import Metrics  # noqa: E402
from app.store import open_store  # noqa: E402
from app.store.recorder import Recorder  # noqa: E402
from app.store.records import ManagerInfo, ResultRow, SampleRow, TargetInfo, WorkerInfo  # noqa: E402
from app.ui import settings as prefs  # noqa: E402
from app.ui.launch import HeadlessWindow  # noqa: E402
from tests.helpers import grid  # noqa: E402
from tests.stored_runs import AFTER, BEFORE, StepSpec, metrics  # noqa: E402

NOW = datetime(2026, 3, 14, 16, 30, tzinfo=UTC)


def scaled(steps: list[StepSpec], f: float) -> list[StepSpec]:
    return [StepSpec(s.spec, s.iops * f, s.mbps * f, s.avg_ms / f, s.max_ms / f, s.p99_ms / f) for s in steps]


def demo_run(
    store,
    name: str,
    steps: list[StepSpec],
    started: datetime,
    *,
    tags=(),
    status="complete",
    managers=(("M1", "local"),),
    fio="3.33",
    description="",
    notes="",
    samples=True,
) -> int:
    plan = grid(len(managers), 1, 1, specs=tuple(s.spec for s in BEFORE), qd=64)
    plan.name = "VMware unofficial storage performance"
    rec = Recorder(store)
    run_id = rec.begin_run(
        planfile.to_dict(plan),
        plan_name=plan.name,
        name=name,
        description=description,
        tags=list(tags),
        notes=notes,
        host={"hostname": "lab-ws01", "os": "Linux"},
        started=started,
    )
    rec.add_managers(run_id, [ManagerInfo(m, a, "Linux", fio) for m, a in managers])
    rec.add_workers(run_id, [WorkerInfo(m, "w1", "Worker 1") for m, _a in managers])
    rec.add_targets(
        run_id, [TargetInfo(m, "w1", "w1.t1", "EVA", "/dev/mapper/eva-lun1") for m, _a in managers]
    )
    t = started
    for i, s in enumerate(steps):
        step_id = rec.begin_step(
            run_id,
            i,
            spec_name=s.spec,
            queue_depth=64,
            run_s=300,
            started=t,
            active_workers=[[m, "w1"] for m, _a in managers],
            active_targets=[[m, "w1.t1"] for m, _a in managers],
        )
        if status != "complete" and i == len(steps) - 1:
            break
        final = metrics(s, 300)
        if samples:
            for k in range(1, 61):
                f = 1 + 0.04 * math.sin(k * 0.9 + run_id) + 0.02 * math.sin(k * 3.1)
                m = Metrics(
                    seconds=5.0,
                    read_ios=round(s.iops * 5 * f),
                    read_bytes=round(s.mbps * 5e6 * f),
                    read_iops=s.iops * f,
                    read_bps=s.mbps * 1e6 * f,
                    read_lat_sum_ns=s.avg_ms * 1e6 / f * round(s.iops * 5 * f),
                    read_lat_n=round(s.iops * 5 * f),
                    read_lat_max_ns=s.max_ms * 1e6 * (0.6 + 0.4 * f),
                    read_hist={round(s.avg_ms * 1e6): 99, round(s.p99_ms * 1e6 * f): 1},
                )
                rec.add_samples(step_id, [SampleRow(None, "all", "ALL", k * 5.0, m, m)])
        rec.add_step_results(step_id, [ResultRow(None, "all", "ALL", final)])
        rec.end_step(step_id, "complete", ended=t + timedelta(seconds=300))
        t += timedelta(seconds=310)
    rec.end_run(run_id, status, ended=t)
    return run_id


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="fiometer-history-shots-"))
    start_app(tmp)
    db = tmp / "results.db"
    day = timedelta(days=1)
    with open_store(db) as store:
        before = demo_run(
            store,
            "EVA 4400 32 disks Vraid5",
            BEFORE,
            NOW - 12 * day,
            tags=("before", "client-x"),
            description="32 HDDs in one disk group, Vraid5",
            notes="Baseline before the expansion.",
        )
        demo_run(
            store,
            "EVA 4400 32 disks Vraid5 (repeat)",
            scaled(BEFORE, 1.015),
            NOW - 12 * day + timedelta(hours=1),
            tags=("before", "client-x"),
            description="32 HDDs in one disk group, Vraid5",
        )
        demo_run(
            store,
            "Firmware XCS 10001000 check",
            scaled(BEFORE, 1.02),
            NOW - 8 * day,
            status="stopped",
            tags=("client-x",),
            notes="Stopped after two specs: maintenance window closed.",
        )
        demo_run(
            store,
            "Overnight soak",
            scaled(AFTER, 0.98),
            NOW - 4 * day,
            status="interrupted",
            notes="Workstation rebooted by an update at 03:10.",
        )
        demo_run(
            store,
            "Both hosts, LUN 3",
            AFTER,
            NOW - 3 * day,
            status="failed",
            managers=(("DB01", "db01:8765"), ("WEB01", "web01:8765")),
            fio="3.41",
            notes="LUN 3 was not presented to WEB01.",
            samples=False,
        )
        after = demo_run(
            store,
            "EVA 4400 36 disks Vraid1",
            AFTER,
            NOW - 1 * day,
            tags=("after", "client-x"),
            fio="3.41",
            description="36 HDDs in one disk group, Vraid1",
            notes="Disk group grown to 36 disks and converted to Vraid1.",
        )

    win = HeadlessWindow(prefs.app_settings(), persist=False, db_path=db)
    win.resize(1280, 800)
    win.show()
    settle()
    ui = win.history
    ui.show_history()
    while ui.tasks.busy:
        settle(0.1)
    ui.list.select_runs([after])
    settle()
    win.grab().save(str(HERE / "history.png"))
    print(HERE / "history.png")

    ui.list.select_runs([before, after])
    ui.list._compare_selected()
    view = ui.workspace.currentWidget()
    while view.data is None:
        settle(0.1)
    settle(0.5)
    win.grab().save(str(HERE / "compare.png"))
    print(HERE / "compare.png")
    for i, name in ((1, "compare-charts.png"), (2, "compare-over-time.png")):
        view.inner_tabs.setCurrentIndex(i)
        settle(0.5)
        win.grab().save(str(tmp / name))  # looked at, not published

    run = ui.open_run(before)
    while run.data is None:
        settle(0.1)
    settle(0.5)
    win.grab().save(str(tmp / "stored-run.png"))

    dlg = ui.report(view.request)
    dlg.client.setText("Example Corp")
    dlg.author.setText("Storage Consulting Ltd")
    dlg.folder.setText(str(Path.home() / "Reports"))
    settle()
    dlg.grab().save(str(HERE / "report-dialog.png"))
    print(HERE / "report-dialog.png")
    print(f"also: {tmp}/compare-charts.png, compare-over-time.png, stored-run.png")
    dlg.close()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
