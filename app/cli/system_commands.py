"""`fiometer doctor / gui`: the installation and the desktop application."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from app.cli.common import CliError, _parse_map, seconds_option


def cmd_logs(tail: int = 20) -> int:
    """`fiometer doctor --logs`: where the log files are, and the last lines of the current one."""
    from app.diagnostics import log_dir, log_files, log_path

    print(
        f"Log folder: {log_path().parent}"
        + ("" if log_path().parent == log_dir() else f" (the usual folder {log_dir()} could not be written)")
    )
    files = log_files()
    if not files:
        print(f"No log yet (it will be {log_path()})")
        return 0
    for f in files:
        print(f"  {f.name}  {f.stat().st_size} bytes")
    lines = files[0].read_text(encoding="utf-8", errors="replace").splitlines()[-tail:]
    print(f"\nLast {len(lines)} lines of {files[0]}:")
    print("\n".join(lines))
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    if args.logs:
        return cmd_logs()
    from app import user_settings
    from app.about import about_text
    from app.diagnostics import log_path
    from app.engine.transports.fio_binary import FioNotFound, fio_version
    from app.first_run import check_fio, first_run_text
    from app.paths import resources_dir
    from app.store.db_location import resolve_db_path

    if args.set_fio:
        candidate = Path(args.set_fio).expanduser().absolute()
        try:
            version = fio_version(candidate)
        except FioNotFound as e:
            raise CliError(f"not saved: {e}") from e
        saved = _saving_settings(lambda: user_settings.set_fio_path(candidate))
        print(f"fio {version} at {candidate} saved in {saved}\n")
    elif args.clear_fio:
        saved = _saving_settings(lambda: user_settings.set_fio_path(None))
        print(f"custom fio path removed from {saved}; fio is searched on PATH again\n")
    settings = user_settings.load()
    status = check_fio()
    print(about_text(fio=lambda: status.version or "not found"))
    print()
    print(
        f"Settings file: {user_settings.settings_path()}"
        + ("" if user_settings.settings_path().exists() else " (not created yet)")
    )
    if settings.problem:
        print(f"  warning: {settings.problem}")
    print(f"Custom fio path: {settings.fio_path or 'none (search PATH and the installer folders)'}")
    print(f"Results database: {resolve_db_path(args.db)}")
    print(f"Log file: {log_path()}" + ("" if log_path().exists() else " (not created yet)"))
    res = resources_dir()
    print(
        f"Bundled resources: {res}"
        + ("" if (res / "examples").is_dir() else " (MISSING: reinstall Fiometer)")
    )
    print()
    print(first_run_text(status))
    return 0 if status.found else 1


NO_DISPLAY = (
    "no display to open the window on (DISPLAY and WAYLAND_DISPLAY are not set); use the command "
    "line instead: `fiometer --help`, e.g. `fiometer run PLAN`, or `fiometer gui PLAN --screenshot DIR`"
)


def has_no_display() -> bool:
    """True where a window needs an X11 or Wayland display and none is set (Qt would abort the process).
    QT_QPA_PLATFORM set means the user chose Qt's platform (offscreen, vnc...) themselves."""
    if sys.platform == "win32" or sys.platform == "darwin":
        return False
    return not any(os.environ.get(k) for k in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))


def cmd_gui(args: argparse.Namespace) -> int:
    if args.file and not Path(args.file).exists():
        raise CliError(f"{args.file}: no such file")
    if (args.run is not None or args.engine) and not args.screenshot:
        raise CliError("--run and --engine only apply with --screenshot")
    if has_no_display():
        if not args.screenshot:
            raise CliError(NO_DISPLAY)
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # screenshots are grabbed, never shown
    splash = None
    try:
        if not args.screenshot:  # on screen at once, before the window's modules are read (seconds)
            from app.ui.splash import starting, taken

            splash = taken() or starting()
        from app.ui.launch import run_gui
    except ImportError as e:
        raise CliError(
            f"the desktop GUI needs PySide6 and pyqtgraph ({e}); `fiometer import` / `fiometer plan` "
            "work without them"
        ) from e
    mapping = _parse_map(args.map)
    options = None
    if args.run is not None:
        from app.engine.run.runner import RunOptions

        options = RunOptions(run_time=args.run, ramp_up=0, engine=args.engine, mapping=mapping)
    if args.open_run is not None and (args.file or args.run is not None):
        raise CliError("--open-run shows a stored run: give no plan file and no --run with it")
    return run_gui(
        args.file,
        args.screenshot,
        options,
        mapping=mapping,
        open_run=args.open_run,
        db=getattr(args, "db", None),
        splash=splash,
    )


def register(sub) -> None:
    sp = sub.add_parser("doctor", help="versions, settings, and whether fio is found (or how to install it)")
    group = sp.add_mutually_exclusive_group()
    group.add_argument("--set-fio", metavar="PATH", help="remember this fio executable (checked first)")
    group.add_argument("--clear-fio", action="store_true", help="forget the custom fio path")
    group.add_argument(
        "--logs", action="store_true", help="where the log files are, and the last lines logged"
    )
    sp.set_defaults(func=cmd_doctor)

    sp = sub.add_parser("gui", help="open the desktop application")
    sp.add_argument("file", nargs="?", help="plan or .icf to open")
    sp.add_argument("--screenshot", metavar="DIR", help="show each tab, write DIR/NN-<tab>.png, then exit")
    sp.add_argument(
        "--run",
        type=seconds_option(1),
        metavar="SECONDS",
        help="with --screenshot: first run the plan, SECONDS per step, for real Results Display numbers",
    )
    sp.add_argument("--engine", help="with --run: fio ioengine override (e.g. null: no real I/O)")
    sp.add_argument(
        "--map",
        action="append",
        metavar="NAME=PATH",
        help="place the opened plan's target NAME at a file or device (as `fiometer run --map`)",
    )
    sp.add_argument(
        "--open-run",
        type=int,
        metavar="ID",
        help="open the stored run ID (see `fiometer runs`); with --screenshot: write DIR/run-ID.png",
    )
    sp.set_defaults(func=cmd_gui)


def _saving_settings(save: Callable[[], Path]) -> Path:
    """``save()`` of the settings file; one that cannot be written (a link or a folder planted there, a
    read-only folder) is a refusal naming the file and what to do, not an internal error."""
    from app import user_settings

    try:
        return save()
    except OSError as e:
        why = (str(e) if e.filename else f"{user_settings.settings_path()}: {e.strerror or e}").rstrip(".")
        raise CliError(
            f"not saved: the settings file cannot be written: {why}. Remove or rename it (it must be a "
            "regular file, not a link), or set FIOMETER_SETTINGS_DIR to another folder, and run the command "
            "again."
        ) from e
