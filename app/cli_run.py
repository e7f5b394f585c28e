"""`fiometer run / runs / show / export / probe / demo`: running plans and reading stored results."""

from __future__ import annotations

import argparse

from app import __version__
from app.cli_common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_STOPPED,
    EXIT_STORE,
    CliError,
    _get_run,
    _open,
    _parse_map,
    _store,
    output_path,
    parse_pairs,
    parse_size,
    write_output,
)


def _make_runner(args: argparse.Namespace, opened):
    from app.engine.managers import (
        EXPOSED_WARNING,
        ManagerError,
        build_endpoints,
        is_loopback,
        split_host,
    )
    from app.engine.runner import Runner, RunOptions, RunRefused

    plan = opened.plan
    try:
        hosts = parse_pairs(args.manager, "--manager", "NAME=HOST[:PORT]", "DB01=10.0.0.5:8765")
        endpoints = build_endpoints(plan, hosts, args.fio)
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


def cmd_run(args: argparse.Namespace) -> int:
    import signal

    from app.cli_progress import ProgressPrinter
    from app.recording import Fanout, StoreRecorder
    from app.store.errors import StoreError

    opened = _open(args.file)
    for w in opened.warnings:
        print(f"warning: {w}")
    runner = _make_runner(args, opened)
    store = _store(args)
    recorder = StoreRecorder(store, runner.options.mapping, tags=args.tag or [])
    progress = ProgressPrinter()
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
    except StoreError as e:  # the runner ended fio; the run keeps what was recorded before the fault
        kept = (f"Run {recorder.run_id} in {store.path} keeps what was recorded before it "
                f"({runner.summary.text()})." if recorder.run_id is not None else "Nothing was stored.")
        raise CliError(f"the results database failed during the run, so the run was ended: {e}\n{kept}",
                       EXIT_STORE) from e
    finally:
        signal.signal(signal.SIGINT, previous)
        store.close()
    print(f"\nRun {status}: {runner.summary.text()}.")
    print(f"Stored as run {recorder.run_id} in {store.path}")
    return exit_code(status, runner.summary)


def exit_code(status: str, summary) -> int:
    """The exit code of a finished run: any failed step wins over a stop (see the user guide)."""
    if status == "failed" or summary.failed:
        return EXIT_FAILED
    if status == "stopped" or summary.stopped:
        return EXIT_STOPPED
    return EXIT_OK


def cmd_runs(args: argparse.Namespace) -> int:
    import json

    from app.store.queries import list_runs

    store = _store(args, reading=True)
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

    output_path(args.iometer_csv)  # before reading the run: a mistyped folder is said at once
    run = _get_run(args)
    write_output(args.iometer_csv, run_results_csv(run).encode("cp1252", errors="replace"))
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
