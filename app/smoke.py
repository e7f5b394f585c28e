"""`fiometer --smoke`: prove an installation works, from source or from the packaged build.

1. Starts the GUI offscreen when PySide6 is importable (``QT_QPA_PLATFORM`` defaults to
   ``offscreen``): the main window with the bundled example open, rendered to an image (Qt's
   plugins, fonts and pyqtgraph are what a frozen build most often lacks). Without app.ui it
   renders a pyqtgraph chart instead.
2. Loads the bundled example plan (the Iometer .icf in ``resources/``: proves resources are there),
   keeps its first step, and runs it for one second with fio's ``null`` engine through the real
   runner, on a test file in a temporary folder, recorded into a temporary results database (never
   the user's), then reads the run back from that database.
3. Prints one line (versions, what was started, measured IOPS) and returns 0; any failure prints
   ``fiometer smoke FAILED: <reason>`` to stderr and returns 1.

GUI hook (owned by app/ui): ``app.ui.launch.smoke_window(plan: str, db_path: Path) -> QWidget``,
when defined, returns the main window, shown, with ``plan`` open and ``db_path`` as its results
database, asking no questions; settings are already redirected to a temporary folder
(``$FIOMETER_SETTINGS_DIR``). Until then this module uses ``launch.application()`` and
``launch.HeadlessWindow(settings, persist=False, db_path=...)`` with ``open_path``, as
``fiometer gui --screenshot`` does.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import os
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app import user_settings

if TYPE_CHECKING:
    from app.engine.run.runner import ManagerEndpoint
    from app.model.plan import Plan

RUN_SECONDS = 1
RUN_TIMEOUT = 60.0  # a hung fio must fail the smoke check, not hang it
GUI_HOOK = ("app.ui.launch", "smoke_window")
QT_NOISE = {"This plugin does not support propagateSizeHints()"}  # offscreen's harmless remark on show()


class SmokeFailure(Exception):
    """The reason the smoke check failed, for the user."""


@dataclass
class SmokeResult:
    versions: dict[str, str]
    gui: str
    plan: str
    step: str
    iops: float
    run_id: int

    def line(self) -> str:
        vers = ", ".join(f"{k} {v}" for k, v in self.versions.items())
        return (
            f"fiometer smoke ok: {vers}; gui: {self.gui}; {self.plan} step 1 {self.step!r}, "
            f"{RUN_SECONDS} s on fio's null engine: {self.iops:,.0f} IOPS (stored as run {self.run_id} "
            f"in a temporary database)"
        )


# --- GUI --------------------------------------------------------------------------------------------
class _Gui:
    """What was started, kept alive until the run is over, then closed."""

    def __init__(self) -> None:
        self.description = "not started"
        self.widget: Any = None
        self.app: Any = None

    def close(self) -> None:
        if self.widget is not None:
            self.widget.close()
            self.widget = None
        if self.app is not None:
            self.app.processEvents()


def _launch_module() -> Any:
    """app.ui.launch, or None when this build has no GUI."""
    try:
        if importlib.util.find_spec(GUI_HOOK[0]) is None:
            return None
    except ImportError:  # app.ui itself missing
        return None
    return importlib.import_module(GUI_HOOK[0])


def _main_window(launch: Any, plan_path: str, db_path: Path) -> Any:
    """The GUI's hook if it has one; else its headless main window (what `gui --screenshot` uses)."""
    hook = getattr(launch, GUI_HOOK[1], None)
    if hook is not None:
        return hook(plan_path, db_path)
    from app.ui import settings as prefs

    prefs.apply_environment()  # $FIOMETER_SETTINGS_DIR: smoke() pointed it at a temporary folder
    win = launch.HeadlessWindow(prefs.app_settings(), persist=False, db_path=db_path)
    if not win.files.open_path(plan_path, ask_discard=False):
        raise SmokeFailure(f"the main window could not open {plan_path}")
    win.show()
    return win


def _grab_ok(widget: Any) -> bool:
    image = widget.grab().toImage()
    return not image.isNull() and image.width() > 0 and image.height() > 0


def _offscreen_fonts() -> None:
    """Qt's offscreen platform on Windows reads fonts from a folder (``QT_QPA_FONTDIR``, else a ``fonts``
    folder beside Qt's libraries, which a build does not have: "Cannot find font directory"): Windows' own."""
    if sys.platform == "win32" and not os.environ.get("QT_QPA_FONTDIR"):
        os.environ["QT_QPA_FONTDIR"] = os.path.join(os.environ.get("WINDIR", r"C:\Windows"), "Fonts")


def start_gui(plan_path: str, db_path: Path) -> _Gui:
    from app.about import qt_available

    gui = _Gui()
    if not qt_available():
        gui.description = "none (PySide6 is not installed: engine only)"
        return gui
    platform_name = os.environ.get("QT_QPA_PLATFORM") or "offscreen"
    os.environ["QT_QPA_PLATFORM"] = platform_name
    if platform_name == "offscreen":
        _offscreen_fonts()
    for prefix, display in (("xcb", "DISPLAY"), ("wayland", "WAYLAND_DISPLAY")):
        if platform_name.startswith(prefix) and not os.environ.get(display):  # Qt would abort the process
            raise SmokeFailure(
                f"QT_QPA_PLATFORM={platform_name} but ${display} is not set; "
                "leave QT_QPA_PLATFORM unset to check offscreen"
            )
    from PySide6.QtCore import qInstallMessageHandler
    from PySide6.QtWidgets import QApplication

    def qt_message(_kind: Any, _context: Any, text: str) -> None:
        if text not in QT_NOISE:
            print(f"qt: {text}", file=sys.stderr)

    qInstallMessageHandler(qt_message)
    launch = _launch_module()
    if launch is not None:
        app = launch.application()
    else:
        app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "fiometer"])
    gui.app = app
    platform_name = app.platformName()  # what Qt really loaded
    if launch is not None:
        gui.widget = _main_window(launch, plan_path, db_path)
        app.processEvents()
        if not _grab_ok(gui.widget):
            raise SmokeFailure("the main window rendered an empty image")
        title = gui.widget.windowTitle().replace("[*]", "")
        gui.description = f"main window ({platform_name}, {title!r})"
        return gui
    import pyqtgraph as pg

    plot = pg.PlotWidget(title="smoke")
    plot.plot([0, 1, 2, 3], [1, 3, 2, 4], name="IOPS")
    plot.resize(320, 200)
    plot.show()
    app.processEvents()
    gui.widget = plot
    if not _grab_ok(plot):
        raise SmokeFailure("Qt rendered an empty image")
    gui.description = f"Qt + pyqtgraph chart only ({platform_name}, this build has no main window)"
    return gui


# --- engine ------------------------------------------------------------------------------------------
def first_step_plan(plan: Plan) -> Plan:
    """A copy of ``plan`` with only its first manager and each worker's first access spec: one step."""
    plan = copy.deepcopy(plan)
    plan.managers = plan.managers[:1]
    for w in plan.managers[0].workers if plan.managers else []:
        w.specs = w.specs[:1]
    plan.setup.test_type = "NORMAL"
    return plan


def run_engine(
    plan_path: Path, workdir: Path, db_path: Path, fio_path: str | None
) -> tuple[ManagerEndpoint, str, float, int]:
    """Run the first step for RUN_SECONDS on the null engine; (endpoint, step label, IOPS, run id)."""
    from app.engine.run.managers import ManagerError, build_endpoints
    from app.engine.run.runner import RunListener, Runner, RunOptions, RunRefused
    from app.model.opening import PlanOpenError, open_plan
    from app.session.run_session import RunSession
    from app.store.database import open_store
    from app.store.queries import get_run

    try:
        plan = first_step_plan(open_plan(plan_path).plan)
    except (OSError, PlanOpenError) as e:
        raise SmokeFailure(f"cannot open the bundled example {plan_path}: {e}") from e
    mapping = {t.name: str(workdir / "iobw.tst") for m in plan.managers for w in m.workers for t in w.targets}
    try:
        endpoints = build_endpoints(plan, fio_path=fio_path)
        options = RunOptions(
            run_time=RUN_SECONDS, ramp_up=0, mapping=mapping, engine="null", file_size=16 * 1024 * 1024
        )
        runner = Runner(plan, endpoints, None, options)
        runner.prepare()
    except (ManagerError, RunRefused) as e:
        raise SmokeFailure(str(e)) from e
    if len(runner.steps) != 1:
        raise SmokeFailure(f"expected one step from the trimmed example, got {len(runner.steps)}")
    status: list[str] = []
    run_ids: list[int | None] = []
    errors: list[BaseException] = []

    def target() -> None:  # SQLite connections belong to their thread: the store is opened here
        try:
            session = RunSession(
                runner, RunListener(), None, store=open_store(db_path), tags=["smoke"], isolate=False
            )
            end = session.run()  # closes the store
            if end.store_failure is not None:
                raise SmokeFailure(f"the results database failed during the run: {end.store_failure}")
            status.append(end.status)
            run_ids.append(end.run_id)
        except BaseException as e:  # reported below, on the calling thread
            errors.append(e)

    thread = threading.Thread(target=target, name="fiometer-smoke", daemon=True)
    thread.start()
    thread.join(RUN_TIMEOUT)
    if thread.is_alive():
        runner.abort()
        thread.join(10)
        raise SmokeFailure(f"the run did not finish within {RUN_TIMEOUT:.0f} s")
    if errors:
        raise SmokeFailure(f"the run raised {type(errors[0]).__name__}: {errors[0]}") from errors[0]
    outcome = runner.outcomes[0] if runner.outcomes else None
    if status != ["complete"] or outcome is None:
        detail = "; ".join(
            f"{n}: {f.reason}" for n, f in (outcome.finished.items() if outcome else []) if not f.ok
        )
        raise SmokeFailure(
            f"the run ended {status[0] if status else 'without a status'}"
            + (f" ({detail})" if detail else "")
        )
    all_rows = [s for s in outcome.results if s.level == "all"]
    iops = all_rows[0].whole.iops if all_rows else 0.0
    if not iops > 0:
        raise SmokeFailure("the run measured no I/O")
    run_id = run_ids[0] if run_ids else None
    if run_id is None:
        raise SmokeFailure("the run was not recorded")
    store = open_store(db_path)
    try:
        stored = get_run(store, run_id)
    finally:
        store.close()
    if stored.status != "complete" or not stored.steps or not stored.steps[0].results:
        raise SmokeFailure(f"the stored run is incomplete (status {stored.status!r})")
    return next(iter(endpoints.values())), outcome.step.spec_label, iops, run_id


# --- the whole check ----------------------------------------------------------------------------------
def smoke(plan_path: Path | None = None) -> SmokeResult:
    from app.about import versions
    from app.model.opening import open_plan
    from app.paths import example_plan

    plan_path = plan_path or example_plan()
    fio_setting = user_settings.load().fio_path  # read before settings are redirected below
    saved_env = os.environ.get(user_settings.ENV_DIR)
    with tempfile.TemporaryDirectory(prefix="fiometer-smoke-") as tmp:
        workdir = Path(tmp)
        os.environ[user_settings.ENV_DIR] = str(workdir / "settings")  # the GUI must not touch the user's
        try:
            db_path = workdir / "smoke.db"
            gui = start_gui(str(plan_path), db_path)
            try:
                endpoint, step, iops, run_id = run_engine(plan_path, workdir, db_path, fio_setting)
            finally:
                gui.close()
            plan_name = f"{plan_path.name} ({open_plan(plan_path).plan.name})"
        finally:
            if saved_env is None:
                os.environ.pop(user_settings.ENV_DIR, None)
            else:
                os.environ[user_settings.ENV_DIR] = saved_env
    return SmokeResult(
        versions(fio=lambda: endpoint.fio_version), gui.description, plan_name, step, iops, run_id
    )


def main() -> int:
    started = time.monotonic()
    try:
        result = smoke()
    except SmokeFailure as e:
        print(f"fiometer smoke FAILED: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # anything else is a broken build: say what, with the traceback
        traceback.print_exc()
        print(f"fiometer smoke FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"{result.line()} [{time.monotonic() - started:.1f} s]", flush=True)
    return 0
