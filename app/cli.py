"""The `fiometer` command: gui (default), import, plan, run, runs, show, export, probe, demo, examples,
doctor, and the top-level --smoke check."""

from __future__ import annotations

import argparse
import platform
import re
import sys
from pathlib import Path

from app import __version__


class CliError(Exception):
    """A user-facing failure: printed without a traceback, exit code 2."""


def _parse_map(items: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise CliError(f"--map {item!r}: expected NAME=PATH, e.g. --map 'C:=/tmp/iobw.tst'")
        out[name] = path
    return out


def _expand(plan):
    from app.engine.sequence import SequenceTooLong, expand

    try:
        return expand(plan)
    except SequenceTooLong as e:
        raise CliError(str(e)) from e


def _open(path: str):
    from app.model.opening import PlanOpenError, open_plan

    if not Path(path).exists():
        raise CliError(f"{path}: no such file")
    try:
        return open_plan(path)
    except PlanOpenError as e:
        raise CliError(str(e)) from e


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
    steps = _expand(plan)
    print(f"\nSteps ({len(steps)}):")
    for step in steps:
        print(_step_line(plan, step))
    _print_messages(opened)
    if args.output:
        planfile.save(plan, args.output)
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
        out.mkdir(parents=True, exist_ok=True)
        written = 0
        for step in steps:
            for mi in step.managers():
                try:
                    jf = step_jobfile(plan, step, mi, args.os, mapping=mapping, title=plan.name)
                except TargetError as e:
                    raise CliError(f"step {step.index + 1}, manager {plan.managers[mi].name!r}: {e}") from e
                path = out / f"step-{step.index + 1:03d}-{_safe(plan.managers[mi].name)}.fio"
                path.write_text(jf.text, encoding="utf-8")
                written += 1
        print(f"{written} job files written to {out}")
    return 0


def parse_size(text: str) -> int:
    """'64M', '1g', '4096', '512k' -> bytes (binary units, as fio reads them)."""
    m = re.fullmatch(r"\s*(\d+)\s*([kmgt]?)i?b?\s*", text, re.IGNORECASE)
    if not m:
        raise CliError(f"size {text!r}: expected a number with an optional K, M, G or T suffix, e.g. 64M")
    return int(m.group(1)) * 1024 ** " kmgt".index(m.group(2).lower() or " ")


def _make_runner(args: argparse.Namespace, opened):
    from app.engine.managers import (
        EXPOSED_WARNING,
        ManagerError,
        build_endpoints,
        is_loopback,
        parse_manager_args,
        split_host,
    )
    from app.engine.runner import Runner, RunOptions, RunRefused

    plan = opened.plan
    try:
        endpoints = build_endpoints(plan, parse_manager_args(args.manager), args.fio)
    except ManagerError as e:
        raise CliError(str(e)) from e
    for ep in endpoints.values():
        if ep.host != "local" and not is_loopback(split_host(ep.host)[0]):
            print(f"warning: manager {ep.name!r} is reached over the network at {ep.host}; {EXPOSED_WARNING}")
    options = RunOptions(run_time=args.run_time, ramp_up=args.ramp_up, mapping=_parse_map(args.map),
                         engine=args.engine, allow_write=set(args.allow_write or []),
                         allow_write_in_use=set(args.allow_write_mounted or []),
                         file_size=parse_size(args.test_file_size) if args.test_file_size else None)
    try:
        return Runner(plan, endpoints, None, options)
    except RunRefused as e:
        raise CliError("this plan cannot start:\n  " + str(e).replace("\n", "\n  ")) from e


def _store(args: argparse.Namespace):
    from app.store.database import open_store
    from app.store.errors import StoreError

    try:
        return open_store(getattr(args, "db", None))
    except StoreError as e:
        raise CliError(str(e)) from e


def cmd_run(args: argparse.Namespace) -> int:
    import signal

    from app.cli_progress import ProgressPrinter
    from app.recording import Fanout, StoreRecorder

    opened = _open(args.file)
    for w in opened.warnings:
        print(f"warning: {w}")
    runner = _make_runner(args, opened)
    store = _store(args)
    recorder = StoreRecorder(store, runner.options.mapping, tags=args.tag or [])
    progress = ProgressPrinter(run_time=(args.run_time or 0) + (args.ramp_up or 0) or None)
    runner.listener = Fanout(progress, recorder)
    presses = 0

    def on_sigint(signum, frame) -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            print("\nStopping after this step's final numbers (Ctrl-C again to abort)...", flush=True)
            runner.stop()
        else:
            runner.abort()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        status = runner.run()
    finally:
        signal.signal(signal.SIGINT, previous)
        store.close()
    print(f"\nStored as run {recorder.run_id} in {store.path}")
    return {"complete": 0, "stopped": 0}.get(status, 1)


def cmd_runs(args: argparse.Namespace) -> int:
    import json

    from app.store.queries import list_runs

    store = _store(args)
    try:
        runs = list_runs(store, text=args.search, tag=args.tag)
    finally:
        store.close()
    if args.json:
        print(json.dumps([{"id": r.id, "name": r.name, "status": r.status, "started": r.started,
                           "ended": r.ended, "plan": r.plan_name, "steps": r.step_count, "tags": r.tags}
                          for r in runs], indent=2))
        return 0
    if not runs:
        print(f"No runs stored in {store.path}")
        return 0
    from app.cli_progress import format_table
    rows = [[str(r.id), r.started[:19].replace("T", " "), r.status, str(r.step_count), r.name,
             ",".join(r.tags)] for r in runs]
    print(format_table(("Run", "Started (UTC)", "Status", "Steps", "Name", "Tags"), rows))
    return 0


def _get_run(args: argparse.Namespace):
    from app.store.errors import RunNotFound
    from app.store.queries import get_run

    store = _store(args)
    try:
        return get_run(store, args.run)
    except RunNotFound as e:
        raise CliError(str(e)) from e
    finally:
        store.close()


def cmd_show(args: argparse.Namespace) -> int:
    import dataclasses
    import json

    from app.analysis.iometer_import import is_iometer_run
    from app.cli_progress import fmt_num, format_table

    run = _get_run(args)
    coarse = is_iometer_run(run)
    if args.json:
        def metrics(m):
            # an imported Iometer run's histogram is its 21 coarse bins: no percentiles from it
            return {k: None if coarse and k.startswith("p") else v for k, v in m.headline().items()}
        print(json.dumps({
            "id": run.id, "name": run.name, "status": run.status, "started": run.started, "ended": run.ended,
            "plan": run.plan_name, "plan_sha256": run.plan_sha256, "tags": run.tags, "notes": run.notes,
            "fio_versions": run.fio_versions, "host": run.host,
            "managers": [dataclasses.asdict(m) for m in run.managers],
            "steps": [{"index": s.index, "spec": s.spec_name, "queue_depth": s.queue_depth, "status": s.status,
                       "started": s.started, "ended": s.ended,
                       "results": [{"level": r.level, "manager": r.manager, "key": r.key,
                                    **metrics(r.metrics)} for r in s.results]} for s in run.steps],
            "messages": [dataclasses.asdict(m) for m in run.messages],
        }, indent=2))
        return 0
    print(f"Run {run.id}: {run.name} [{run.status}]  started {run.started}  ended {run.ended or '-'}")
    tool = (f"{run.host['tool']} {run.host.get('tool_version', '')}".strip() if coarse else
            f"fio {', '.join(run.fio_versions) or '?'}")
    print(f"Plan {run.plan_name!r} (sha256 {run.plan_sha256[:12]}), {tool}, "
          f"managers: {', '.join(f'{m.name} ({m.address})' for m in run.managers)}")
    rows = []
    for s in run.steps:
        for r in sorted(s.results, key=lambda r: (r.level != "all", r.key)):
            if r.level in ("all", "manager"):
                m = r.metrics
                rows.append([str(s.index + 1), s.spec_name, str(s.queue_depth or "-"), s.status,
                             "ALL" if r.level == "all" else r.key, fmt_num(m.iops), fmt_num(m.mbps),
                             fmt_num(m.lat_mean_ms, 3), fmt_num(m.lat_max_ms, 3),
                             fmt_num(None if coarse else m.percentile_ms(99), 3), str(m.errors)])
    print(format_table(("Step", "Access specification", "QD", "Status", "Level", "IOPS", "MB/s", "Avg ms",
                        "Max ms", "p99 ms", "Errors"), rows))
    for msg in run.messages + [m for s in run.steps for m in s.messages]:
        print(f"{msg.level}: {msg.manager + ': ' if msg.manager else ''}{msg.text}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from app.analysis.export_run import run_results_csv

    run = _get_run(args)
    Path(args.iometer_csv).write_bytes(run_results_csv(run).encode("cp1252", errors="replace"))
    print(f"Run {run.id} written to {args.iometer_csv} (Iometer 1.1.0 results.csv layout)")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    import tempfile

    from app.paths import example_plan

    with tempfile.TemporaryDirectory(prefix="fiometer-demo-") as tmp:
        print(f"Fiometer {__version__}: no display, so running the bundled example plan briefly\n"
              f"({example_plan().name}, each step 2 s on a 64 MiB test file in {tmp}).\n")
        ns = argparse.Namespace(file=str(example_plan()), manager=None, fio=None, run_time=2, ramp_up=0,
                                map=[f"C:={tmp}/iobw.tst"], engine=None, allow_write=None,
                                allow_write_mounted=None, test_file_size="64M", db=args.db, tag=["demo"])
        return cmd_run(ns)


def cmd_probe(args: argparse.Namespace) -> int:
    from app.engine.managers import ManagerError, split_host
    from app.engine.remote import probe
    from app.engine.transport import TransportError

    try:
        host, port = split_host(args.host)
        info = probe(host, port, timeout=args.timeout)
    except (ManagerError, TransportError) as e:
        raise CliError(str(e)) from e
    print(f"{host}:{port}: {info.hostname}, {info.os} {info.arch}, {info.cpus} CPUs, {info.fio_version} "
          f"(protocol {info.protocol})")
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
    sp.add_argument("--run-time", type=int, metavar="S", help="override every step's run time (seconds)")
    sp.add_argument("--ramp-up", type=int, metavar="S", help="override every step's ramp-up (seconds)")
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
    sp.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for an answer")
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
    sp.add_argument("--run", type=int, metavar="SECONDS",
                    help="with --screenshot: first run the plan, SECONDS per step, for real Results Display numbers")
    sp.add_argument("--engine", help="with --run: fio ioengine override (e.g. null: no real I/O)")
    sp.add_argument("--map", action="append", metavar="NAME=PATH",
                    help="place the opened plan's target NAME at a file or device (as `fiometer run --map`)")
    sp.set_defaults(func=cmd_gui)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.smoke:
        from app.smoke import main as smoke_main

        return smoke_main()
    if args.command is None:
        args = build_parser().parse_args(["gui", *(argv or [])])
    try:
        return args.func(args)
    except CliError as e:
        print(f"fiometer: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    # Run app.cli's own main: helper modules (cli_history ...) raise app.cli.CliError, which a second copy
    # of this module loaded as __main__ would not catch.
    from app.cli import main as _main

    sys.exit(_main())
