"""`fiometer run / demo / probe`: running plans on fio and asking fio servers what they are."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app import __version__
from app.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_STOPPED,
    EXIT_STORE,
    CliError,
    _open,
    _parse_map,
    _store,
    add_step_overrides,
    ctrl_c_stops,
    number_option,
    parse_pairs,
    parse_size,
)
from app.model.plan import URING_OPTIONS

if TYPE_CHECKING:
    from app.session.run_session import RunEnd


def _choose_engine(plan, args: argparse.Namespace) -> str | None:
    """``--engine`` and ``--io-uring-option`` set the plan's engine for this run (app.engine.jobs.engines);
    an engine outside the plan's choices (null, for tests and benchmarks) overrides every job's instead, and
    is returned."""
    from app.model.plan import ENGINES

    uring = getattr(args, "io_uring_option", None) or []
    if uring:
        plan.setup.engine_options = list(dict.fromkeys(uring))
        if not args.engine and plan.setup.engine not in ("auto", "io_uring"):
            plan.setup.engine = "io_uring"
    if not args.engine:
        return None
    if args.engine in ENGINES:
        plan.setup.engine = args.engine
        return None
    if uring:
        raise CliError(f"--io-uring-option goes with --engine io_uring or auto, not {args.engine}")
    return args.engine


def _make_runner(args: argparse.Namespace, opened, make=None):
    """The run's Runner (``make(plan, endpoints, listener, options)`` builds another kind, e.g. a curve's)."""
    from app.engine.guards.arming_hint import copied_name
    from app.engine.guards.safety import record_beside
    from app.engine.run.managers import (
        EXPOSED_WARNING,
        ManagerError,
        build_endpoints,
        is_loopback,
        split_host,
    )
    from app.engine.run.runner import Runner, RunOptions, RunRefused
    from app.store.db_location import resolve_db_path

    plan = opened.plan
    override = _choose_engine(plan, args)
    try:
        hosts = parse_pairs(
            args.manager,
            "--manager",
            "NAME=HOST[:PORT] or NAME=ssh://[USER@]HOST[:PORT]",
            "DB01=10.0.0.5:8765",
        )
        endpoints = build_endpoints(plan, hosts, args.fio)
    except ManagerError as e:
        raise CliError(str(e)) from e
    for ep in endpoints.values():
        if (
            ep.host != "local"
            and not ep.host.startswith("ssh://")
            and not is_loopback(split_host(ep.host)[0])
        ):
            print(f"warning: manager {ep.name!r} is reached over the network at {ep.host}; {EXPOSED_WARNING}")
    options = RunOptions(
        run_time=args.run_time,
        ramp_up=args.ramp_up,
        mapping=_parse_map(args.map),
        engine=override,
        allow_write={copied_name(a) for a in args.allow_write or []},
        allow_write_in_use={copied_name(a) for a in args.allow_write_mounted or []},
        allow_unverified={copied_name(a) for a in getattr(args, "allow_unverified_writes", None) or []},
        file_size=parse_size(args.test_file_size) if args.test_file_size else None,
        registry=record_beside(resolve_db_path(getattr(args, "db", None))),
    )
    runner = (make or Runner)(plan, endpoints, None, options)
    try:
        runner.prepare()
    except RunRefused as e:
        for ep in endpoints.values():
            if ep.close is not None:
                ep.close()
        raise CliError("this plan cannot start:\n  " + str(e).replace("\n", "\n  ")) from e
    for note in runner.notes:
        print(f"warning: {note}")
    return runner


@dataclass
class Ran:
    """A plan's run as the command line ran it: its end, the runner, and the Iometer files it wrote."""

    end: RunEnd
    runner: Any
    update_log: Any  # app.analysis.iometer_update_log.IometerUpdateLog | None
    results_file: str | None


def run_plan(args: argparse.Namespace, make=None) -> Ran:
    """Run the plan of ``args`` as a run session (app.session: the store's recorder, Iometer's per-update
    file, what a load search found), printing its progress. ``make`` builds another kind of runner (see
    _make_runner). A results database that fails during the run ends it: a CliError (EXIT_STORE)."""
    from app.cli.progress import ProgressPrinter
    from app.session.run_session import RunSession

    opened = _open(args.file)
    for w in opened.warnings:
        print(f"warning: {w}")
    results_file = getattr(args, "results_file", None)
    update_log = _update_log(opened.plan, results_file)  # before fio or the store is touched
    try:
        runner = _make_runner(args, opened, make)
        store = _store(args)
    except CliError:
        if update_log is not None:
            update_log.discard()
        raise
    session = RunSession(
        runner,
        ProgressPrinter(),
        None,
        update_log=update_log,
        store=store,
        tags=args.tag or [],
        isolate=False,
    )
    with ctrl_c_stops(runner):
        end = session.run()
    if end.store_failure is not None:  # the runner ended fio; the run keeps what was recorded before it
        kept = (
            f"Run {end.run_id} in {end.stored_in} keeps what was recorded before it ({runner.summary.text()})."
            if end.run_id is not None
            else "Nothing was stored."
        )
        raise CliError(
            f"the results database failed during the run, so the run was ended: {end.store_failure}\n{kept}",
            EXIT_STORE,
        )
    return Ran(end, runner, update_log, results_file)


def cmd_run(args: argparse.Namespace) -> int:
    """Run the plan, then say how it ended."""
    return say_ran(args, run_plan(args))


def say_ran(args: argparse.Namespace, ran: Ran) -> int:
    """How the run ended, its validity notes, where it is stored; then appended to Iometer's results file
    (--results-file). Returns the exit code."""
    end, runner, update_log = ran.end, ran.runner, ran.update_log
    print(f"\nRun {end.status}: {runner.summary.text()}.")
    for line in validity_lines(end.notes):
        print(f"validity: {line}")
    print(f"Stored as run {end.run_id} in {end.stored_in}")
    if update_log is not None and update_log.failure is None:
        print(f"Iometer per-update results: {update_log.path} ({update_log.updates_written} update(s))")
    if ran.results_file and end.run_id is not None:
        _append_results(args, ran.results_file, end.run_id)
    return exit_code(end.status, runner)


def _update_log(plan, results_file: str | None):
    """Iometer's per-update file (inst<results file>) when the plan has Record Last Update Results ENABLED,
    opened before the run so that a name that cannot be written refuses the run instead of losing updates."""
    from app.analysis.iometer_update_log import IometerUpdateLog, update_log_path
    from app.safe_files import UnsafeOutput

    if not plan.setup.iometer.record_last_update:
        return None
    if not results_file:
        print(
            "warning: Record Last Update Results is ENABLED in this plan: give --results-file FILE.csv to "
            "also write Iometer's per-update file instFILE.csv (every update is stored in the results "
            "database either way: fiometer export RUN --samples FILE.csv)"
        )
        return None
    log = IometerUpdateLog(
        update_log_path(results_file),
        on_error=lambda e: print(
            f"warning: the Iometer per-update file stopped being written: {e}; the run goes on and every update "
            f"is still stored"
        ),
    )
    try:
        log.open()
    except UnsafeOutput as e:
        raise CliError(str(e)) from e
    except OSError as e:
        raise CliError(f"{log.path}: cannot be written: {e.strerror or e}") from e
    return log


def _append_results(args: argparse.Namespace, results_file: str, run_id: int) -> None:
    """Append the stored run to Iometer's results file, as Iometer does when a series ends."""
    from app.analysis.iometer_update_log import append_results_file
    from app.store.queries import get_run

    store = _store(args, reading=True)
    try:
        append_results_file(results_file, get_run(store, run_id))
    except OSError as e:
        raise CliError(
            f"{results_file}: the run is stored but cannot be written there: {e.strerror or e}; "
            f"fiometer export {run_id} --iometer-csv FILE.csv writes it",
            EXIT_FAILED,
        ) from e
    finally:
        store.close()
    print(f"Iometer results appended to {results_file}")


def validity_lines(notes: list) -> list[str]:
    from app.analysis.validity import lines

    return lines(notes)


def exit_code(status: str, runner) -> int:
    """The exit code of a finished run: a failed step or manager wins over a stop (see the user guide)."""
    if (
        status == "failed"
        or runner.summary.failed
        or any(not f.ok for o in runner.outcomes for f in o.finished.values())
    ):
        return EXIT_FAILED  # a manager failed, even in a run that was then stopped
    if status == "stopped" or runner.summary.stopped:
        return EXIT_STOPPED
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    import tempfile

    from app.paths import example_plan

    with tempfile.TemporaryDirectory(prefix="fiometer-demo-") as tmp:
        print(
            f"Fiometer {__version__}: no display, so running the bundled example plan briefly\n"
            f"({example_plan().name}, each step 2 s on a 64 MiB test file in {tmp}).\n"
        )
        ns = argparse.Namespace(
            file=str(example_plan()),
            manager=None,
            fio=None,
            run_time=2,
            ramp_up=0,
            map=[f"C:={tmp}/iobw.tst"],
            engine=None,
            allow_write=None,
            allow_write_mounted=None,
            test_file_size="64M",
            db=args.db,
            tag=["demo"],
        )
        return cmd_run(ns)


def cmd_probe(args: argparse.Namespace) -> int:
    from app.engine.run.managers import ManagerError, split_host
    from app.engine.transports.fioproto import probe
    from app.engine.transports.transport import TransportError

    try:
        host, port = split_host(args.host)
        info = probe(host, port, timeout=args.timeout)
    except (ManagerError, TransportError) as e:
        raise CliError(str(e)) from e
    print(
        f"{host}:{port}: {info.hostname}, {info.os} {info.arch}, {info.cpus} CPUs, {info.fio_version} "
        f"(protocol {info.protocol})"
    )
    if info.decoded_as is not None:
        print(
            f"{host}:{port}: protocol {info.protocol} is newer than this Fiometer knows; a calibration job "
            f"decoded exactly as protocol {info.decoded_as}, so its statistics are read that way"
        )
    return 0


def register(sub) -> None:
    sp = sub.add_parser("run", help="run a plan on fio with live progress, then print the results")
    add_run_options(sp)
    sp.set_defaults(func=cmd_run)

    sp = sub.add_parser("demo", help="headless: run the bundled example plan briefly and print the results")
    sp.set_defaults(func=cmd_demo)

    sp = sub.add_parser("probe", help="ask a host running `fio --server` what it is")
    sp.add_argument("host", metavar="HOST[:PORT]", help="default port 8765")
    sp.add_argument(
        "--timeout",
        type=number_option(float, 0.1, 3600, "seconds"),
        default=5.0,
        help="seconds to wait for an answer",
    )
    sp.set_defaults(func=cmd_probe)


def add_run_options(sp) -> None:
    """The plan and the options of `run` (shared by `curve`)."""
    sp.add_argument("file", help=".icf or Fiometer plan file")
    sp.add_argument("--map", action="append", metavar="NAME=PATH", help="place a target at a file or device")
    sp.add_argument(
        "--manager",
        action="append",
        metavar="NAME=HOST[:PORT]",
        help="run a manager on a host running `fio --server` (or NAME=local); NAME=ssh://[USER@]HOST"
        "[:PORT] starts fio --server there over SSH, on that host's loopback only",
    )
    add_step_overrides(sp)
    sp.add_argument(
        "--allow-write",
        action="append",
        metavar="TARGET",
        help="arm writes to a raw device or an existing file (name or path)",
    )
    sp.add_argument(
        "--allow-write-mounted",
        action="append",
        metavar="TARGET",
        help="also allow writes to a device in use (mounted, partitioned, swap, LVM/md member)",
    )
    sp.add_argument(
        "--allow-unverified-writes",
        action="append",
        metavar="NAME",
        help="allow this run to write on a plain fio --server manager (its name or host), where Fiometer "
        "cannot verify what fio opens; an ssh:// manager is checked instead",
    )
    sp.add_argument("--fio", metavar="PATH", help="the fio binary to use (default: found on PATH)")
    sp.add_argument("--tag", action="append", help="tag the stored run (e.g. before, after, client-x)")
    sp.add_argument(
        "--results-file",
        metavar="FILE.csv",
        help="Iometer's results file (its /r): the run is appended to it as results.csv when it ends; "
        "with Record Last Update Results ENABLED in the plan, every update also goes to "
        "instFILE.csv beside it as the run goes",
    )
    sp.add_argument(
        "--engine",
        metavar="ENGINE",
        help="fio's I/O engine for this run, instead of the plan's: auto (io_uring where this machine's kernel "
        "allows it, libaio on other Linux hosts, windowsaio on Windows), io_uring, libaio, posixaio, psync "
        "or windowsaio",
    )
    sp.add_argument(
        "--io-uring-option",
        action="append",
        choices=URING_OPTIONS,
        metavar="OPTION",
        help="an io_uring option for this run (repeat for more): fixedbufs, registerfiles, sqthread_poll, "
        "hipri (a disk with polled queues)",
    )
