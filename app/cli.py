"""The `fiometer` command: gui (default), import, plan, run, runs, show, export, probe, demo, examples,
doctor, and the top-level --smoke check."""

from __future__ import annotations

import argparse
import platform
import re
import sys
from pathlib import Path

from app import __version__
from app.cli_common import (  # noqa: F401 (re-exported)
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_STORE,
    CliError,
    TerminalText,
    _expand,
    _open,
    _parse_map,
    _store,
    number_option,
    output_path,
    parse_size,
    write_output,
)
from app.cli_run import cmd_demo, cmd_export, cmd_probe, cmd_run, cmd_runs, cmd_show
from app.model.validation import MAX_SECONDS


def _print_messages(opened) -> None:
    if opened.warnings:
        print("\nWarnings:")
        for w in opened.warnings:
            print(f"  {w}")
    if opened.notes:
        print("\nFidelity notes (what fio cannot reproduce exactly):")
        for n in opened.notes:
            print(f"  {n.where}: {n.message}")


def _step_line(plan, step) -> str:
    workers = ", ".join(f"{plan.managers[a.manager].name}/{plan.managers[a.manager].workers[a.worker].name}"
                        f"[{len(a.targets)}]" for a in step.workers)
    qd = "/".join(str(q) for q in step.queue_depths)
    return (f"{step.index + 1:4d}  {step.spec_label:<36}  workers {len(step.workers):2d}  "
            f"targets {step.target_count:3d}  QD {qd:>4}  ({workers})")


def cmd_import(args: argparse.Namespace) -> int:
    from app.model import planfile

    opened = _open(args.file)
    plan = opened.plan
    steps = _expand(plan)  # checks the plan first: nothing below meets a plan with errors
    s = plan.setup
    print(f"Plan: {plan.name}   (from {args.file})")
    print(f"Test setup: {s.test_type}, run time {s.run_time} s per step, ramp-up {s.ramp_up} s, "
          f"record {s.record_results}")
    print(f"\nAccess specifications ({len(plan.specs)}):")
    for spec in plan.specs:
        first, *rest = spec.lines
        print(f"  {spec.name:<40} {first.as_csv():<28} default {spec.default_assignment}")
        for ln in rest:
            print(f"  {'':<40} {ln.as_csv()}")
    print(f"\nManagers ({len(plan.managers)}):")
    for m in plan.managers:
        where = "this machine" if m.host == "local" else (m.host or "not mapped (use --manager NAME=HOST)")
        addr = f" (address in file: {m.address_in_file}, never contacted)" if m.address_in_file.strip() else ""
        print(f"  {m.name}: runs on {where}{addr}")
        for w in m.workers:
            print(f"    {w.name} [{w.kind}] QD {w.queue_depth}, max size {w.max_size} sectors, "
                  f"start sector {w.start_sector}; specs: {', '.join(w.specs) or '(none)'}")
            for t in w.targets:
                print(f"      target {t.name}")
    print(f"\nSteps ({len(steps)}):")
    for step in steps:
        print(_step_line(plan, step))
    _print_messages(opened)
    if args.output:
        try:
            planfile.save(plan, output_path(args.output))
        except OSError as e:
            raise CliError(f"{args.output}: cannot be written: {e.strerror or e}") from e
        print(f"\nPlan written to {args.output}")
    return 0


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "manager"


def cmd_plan(args: argparse.Namespace) -> int:
    from app.engine.jobfile import step_jobfile
    from app.engine.targets import TargetError

    opened = _open(args.file)
    plan = opened.plan
    steps = _expand(plan)
    if args.steps or not args.jobs:
        print(f"{len(steps)} steps; run time {plan.setup.run_time} s, ramp-up {plan.setup.ramp_up} s each")
        for step in steps:
            print(_step_line(plan, step))
    if args.jobs:
        mapping = _parse_map(args.map)
        out = Path(args.jobs)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CliError(f"{out}: cannot create the folder for the job files: {e.strerror or e}") from e
        written = 0
        for step in steps:
            for mi in step.managers():
                try:
                    jf = step_jobfile(plan, step, mi, args.os, mapping=mapping, title=plan.name)
                except TargetError as e:
                    raise CliError(f"step {step.index + 1}, manager {plan.managers[mi].name!r}: {e}") from e
                path = out / f"step-{step.index + 1:03d}-{_safe(plan.managers[mi].name)}.fio"
                write_output(path, jf.text)
                written += 1
        print(f"{written} job files written to {out}")
    return 0


def cmd_examples(args: argparse.Namespace) -> int:
    from app.model import planfile
    from app.model.examples import EXAMPLES, TESTFILE
    from app.paths import example_plan

    width = max(len(e.key) for e in EXAMPLES)
    for ex in EXAMPLES:
        print(f"{ex.key:<{width}}  {ex.title}: {ex.description}")
    if not args.save:
        print(f"\nSave them as plan files with `fiometer examples --save DIR`; their target is {TESTFILE} "
              f"(run with --map '{TESTFILE}=/path/iobw.tst'). Iometer template: {example_plan()}")
        return 0
    out = Path(args.save)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for ex in EXAMPLES:
            planfile.save(ex.build(), out / f"{ex.key}.json")
    except OSError as e:
        raise CliError(f"cannot save the examples in {out}: {e}") from e
    print(f"\n{len(EXAMPLES)} plan files written to {out} ({', '.join(e.key + '.json' for e in EXAMPLES)}); "
          f"run one with: fiometer run {out / EXAMPLES[0].key}.json --map '{TESTFILE}=/path/iobw.tst'")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from app import user_settings
    from app.about import about_text
    from app.diagnostics import log_path
    from app.engine.fio_binary import FioNotFound, fio_version
    from app.first_run import check_fio, first_run_text
    from app.paths import resources_dir
    from app.store.paths import resolve_db_path

    if args.set_fio:
        candidate = Path(args.set_fio).expanduser().absolute()
        try:
            version = fio_version(candidate)
        except FioNotFound as e:
            raise CliError(f"not saved: {e}") from e
        saved = user_settings.set_fio_path(candidate)
        print(f"fio {version} at {candidate} saved in {saved}\n")
    elif args.clear_fio:
        saved = user_settings.set_fio_path(None)
        print(f"custom fio path removed from {saved}; fio is searched on PATH again\n")
    settings = user_settings.load()
    status = check_fio()
    print(about_text(fio=lambda: status.version or "not found"))
    print()
    print(f"Settings file: {user_settings.settings_path()}"
          + ("" if user_settings.settings_path().exists() else " (not created yet)"))
    if settings.problem:
        print(f"  warning: {settings.problem}")
    print(f"Custom fio path: {settings.fio_path or 'none (search PATH and the installer folders)'}")
    print(f"Results database: {resolve_db_path(args.db)}")
    print(f"Log file: {log_path()}" + ("" if log_path().exists() else " (not created yet)"))
    res = resources_dir()
    print(f"Bundled resources: {res}" + ("" if (res / "examples").is_dir() else " (MISSING: reinstall Fiometer)"))
    print()
    print(first_run_text(status))
    return 0 if status.found else 1


def cmd_gui(args: argparse.Namespace) -> int:
    if args.file and not Path(args.file).exists():
        raise CliError(f"{args.file}: no such file")
    if (args.run is not None or args.engine) and not args.screenshot:
        raise CliError("--run and --engine only apply with --screenshot")
    try:
        from app.ui.launch import run_gui
    except ImportError as e:
        raise CliError(f"the desktop GUI needs PySide6 and pyqtgraph ({e}); `fiometer import` / `fiometer plan` "
                       "work without them") from e
    mapping = _parse_map(args.map)
    options = None
    if args.run is not None:
        from app.engine.runner import RunOptions

        options = RunOptions(run_time=args.run, ramp_up=0, engine=args.engine, mapping=mapping)
    return run_gui(args.file, args.screenshot, options, mapping=mapping)


SECONDS = number_option(int, 0, MAX_SECONDS, "seconds")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fiometer", description="Iometer-compatible storage benchmark on fio")
    p.add_argument("--version", action="version", version=f"fiometer {__version__}")
    p.add_argument("--db", metavar="PATH", help="results database (default: in your user data folder)")
    p.add_argument("--smoke", action="store_true",
                   help="check this installation: GUI offscreen, a 1 s null-engine run of the bundled example "
                        "(temporary files and database), one line of versions and IOPS; exit 0 or 1")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    sp = sub.add_parser("import", help="read an Iometer .icf, print a summary, optionally save a plan")
    sp.add_argument("file", help="Iometer configuration file (.icf)")
    sp.add_argument("-o", "--output", help="write the plan as a Fiometer plan file (JSON)")
    sp.set_defaults(func=cmd_import)

    sp = sub.add_parser("plan", help="show a plan's test steps or write its fio job files")
    sp.add_argument("file", help=".icf or Fiometer plan file")
    sp.add_argument("--steps", action="store_true", help="print the expanded test sequence")
    sp.add_argument("--jobs", metavar="DIR", help="write DIR/step-NNN-<manager>.fio for every step and manager")
    sp.add_argument("--map", action="append", metavar="NAME=PATH", help="place a target at a file or device")
    sp.add_argument("--os", default=platform.system(), help="OS of the managers (default: this machine's)")
    sp.set_defaults(func=cmd_plan)

    sp = sub.add_parser("run", help="run a plan on fio with live progress, then print the results")
    sp.add_argument("file", help=".icf or Fiometer plan file")
    sp.add_argument("--map", action="append", metavar="NAME=PATH", help="place a target at a file or device")
    sp.add_argument("--manager", action="append", metavar="NAME=HOST[:PORT]",
                    help="run a manager on a host running `fio --server` (or NAME=local)")
    sp.add_argument("--run-time", type=SECONDS, metavar="S",
                    help="override every step's run time (seconds; 0 = until Ctrl-C)")
    sp.add_argument("--ramp-up", type=SECONDS, metavar="S", help="override every step's ramp-up (seconds)")
    sp.add_argument("--test-file-size", metavar="SIZE", help="size of every test file, e.g. 256M (quick checks)")
    sp.add_argument("--allow-write", action="append", metavar="TARGET",
                    help="arm writes to a raw device or an existing file (name or path)")
    sp.add_argument("--allow-write-mounted", action="append", metavar="TARGET",
                    help="also allow writes to a device that is mounted or partitioned")
    sp.add_argument("--fio", metavar="PATH", help="the fio binary to use (default: found on PATH)")
    sp.add_argument("--tag", action="append", help="tag the stored run (e.g. before, after, client-x)")
    sp.add_argument("--engine", help=argparse.SUPPRESS)  # e.g. null, for tests and benchmarks
    sp.set_defaults(func=cmd_run)

    sp = sub.add_parser("runs", help="list stored runs")
    sp.add_argument("--search", help="only runs whose name, description or notes contain this text")
    sp.add_argument("--tag", help="only runs with this tag")
    sp.add_argument("--json", action="store_true", help="machine-readable output")
    sp.set_defaults(func=cmd_runs)

    from app import cli_history

    cli_history.add_parsers(sub)
    from app import cli_report

    cli_report.add_parsers(sub)

    sp = sub.add_parser("show", help="show a stored run's results")
    sp.add_argument("run", type=int, help="run id (see `fiometer runs`)")
    sp.add_argument("--json", action="store_true", help="machine-readable output")
    sp.set_defaults(func=cmd_show)

    sp = sub.add_parser("export", help="export a stored run")
    sp.add_argument("run", type=int, help="run id (see `fiometer runs`)")
    sp.add_argument("--iometer-csv", required=True, metavar="OUT.csv", help="Iometer 1.1.0 results.csv layout")
    sp.set_defaults(func=cmd_export)

    sp = sub.add_parser("demo", help="headless: run the bundled example plan briefly and print the results")
    sp.set_defaults(func=cmd_demo)

    sp = sub.add_parser("probe", help="ask a host running `fio --server` what it is")
    sp.add_argument("host", metavar="HOST[:PORT]", help="default port 8765")
    sp.add_argument("--timeout", type=number_option(float, 0.1, 3600, "seconds"), default=5.0,
                    help="seconds to wait for an answer")
    sp.set_defaults(func=cmd_probe)

    sp = sub.add_parser("examples", help="list the bundled example plans, or save them as plan files")
    sp.add_argument("--save", metavar="DIR", help="write DIR/<key>.json for every example")
    sp.set_defaults(func=cmd_examples)

    sp = sub.add_parser("doctor", help="versions, settings, and whether fio is found (or how to install it)")
    group = sp.add_mutually_exclusive_group()
    group.add_argument("--set-fio", metavar="PATH", help="remember this fio executable (checked first)")
    group.add_argument("--clear-fio", action="store_true", help="forget the custom fio path")
    sp.set_defaults(func=cmd_doctor)

    sp = sub.add_parser("gui", help="open the desktop application")
    sp.add_argument("file", nargs="?", help="plan or .icf to open")
    sp.add_argument("--screenshot", metavar="DIR", help="show each tab, write DIR/NN-<tab>.png, then exit")
    sp.add_argument("--run", type=number_option(int, 1, MAX_SECONDS, "seconds"), metavar="SECONDS",
                    help="with --screenshot: first run the plan, SECONDS per step, for real Results Display numbers")
    sp.add_argument("--engine", help="with --run: fio ioengine override (e.g. null: no real I/O)")
    sp.add_argument("--map", action="append", metavar="NAME=PATH",
                    help="place the opened plan's target NAME at a file or device (as `fiometer run --map`)")
    sp.set_defaults(func=cmd_gui)
    for command in sub.choices.values():  # `fiometer runs --db X` as well as `fiometer --db X runs`
        if not any("--db" in a.option_strings for a in command._actions):
            command.add_argument("--db", metavar="PATH", default=argparse.SUPPRESS,
                                 help="results database (default: in your user data folder)")
    return p


def main(argv: list[str] | None = None) -> int:
    """The one top-level handler: a user-facing problem is one message with its exit code; anything
    unexpected is one line naming the log file that holds the traceback (never a traceback)."""
    from app.diagnostics import log, report_unexpected, setup_logging
    from app.store.errors import StoreError

    args = build_parser().parse_args(argv)
    setup_logging()
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TerminalText(out), TerminalText(err)
    try:
        if args.smoke:
            from app.smoke import main as smoke_main

            return smoke_main()
        if args.command is None:
            args = build_parser().parse_args(["gui", *(argv or [])])
        log.info("fiometer %s", args.command)
        return args.func(args)
    except CliError as e:
        print(f"fiometer: {e}", file=sys.stderr)
        return e.code
    except StoreError as e:
        print(f"fiometer: {e}", file=sys.stderr)
        return EXIT_STORE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("fiometer: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:
        print(f"fiometer: {report_unexpected(e, args.command or 'fiometer')}", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        sys.stdout, sys.stderr = out, err


if __name__ == "__main__":
    # Run app.cli's own main: helper modules (cli_history ...) raise app.cli.CliError, which a second copy
    # of this module loaded as __main__ would not catch.
    from app.cli import main as _main

    sys.exit(_main())
