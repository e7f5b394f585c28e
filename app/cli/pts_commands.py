"""`fiometer pts`: the SNIA Solid State Storage Performance Test Specification's IOPS, throughput, latency and
write saturation tests on a raw device (app.model.pts, app.engine.run.pts_runner), stored as a run with its
rounds and steady-state decision (app.store.run_extras key ``pts``); `fiometer report RUN` shows them."""

from __future__ import annotations

import argparse
import getpass

from app.cli.common import EXIT_STORE, CliError, _store, ctrl_c_stops, number_option
from app.model.pts import STIMULUS_SETS, TESTS, VARIANTS


def _resume(args: argparse.Namespace, facts):
    """The stopped run ``--resume RUN`` continues (its settings are this run's), or None."""
    if args.resume is None:
        return None
    from app.engine.run.pts_runner import Resume
    from app.model.steady_state import pts_steady_state
    from app.store.queries import get_run
    from app.store.run_extras import PTS, extra

    store = _store(args, reading=True)
    try:
        record = extra(get_run(store, args.resume), PTS)
    finally:
        store.close()
    if not isinstance(record, dict):
        raise CliError(f"--resume {args.resume}: run {args.resume} is not a `fiometer pts` run")
    before = record.get("device") or {}
    if (before.get("path"), before.get("capacity"), before.get("serial")) != (
        facts.path,
        facts.capacity,
        facts.serial,
    ):
        raise CliError(
            f"--resume {args.resume}: run {args.resume} tested {before.get('path')} "
            f"({before.get('capacity')} bytes, serial {before.get('serial') or 'not told'}), not this device "
            f"{facts.path} ({facts.capacity} bytes, serial {facts.serial or 'not told'}); a PTS run resumes on its own device"
        )
    resume = Resume(int(args.resume), record)
    settings = record.get("settings") or {}
    rounds_max = int(settings.get("rounds_max") or 25)
    values = [r.tracking or 0.0 for r in resume.rounds()]
    if not (
        record.get("fill_step") is not None or record.get("resumed_from") or record.get("test") == "wsat"
    ):
        raise CliError(
            f"--resume {args.resume}: run {args.resume} did not finish its preconditioning, so there is nothing "
            "to resume from; start a new run"
        )
    decided = pts_steady_state(values, max_rounds=rounds_max)
    if decided.reached or len(values) >= rounds_max:
        raise CliError(
            f"--resume {args.resume}: run {args.resume} is decided ({decided.sentence()}); nothing to resume"
        )
    return resume


def _setup(args: argparse.Namespace, resume=None):
    from app.model.pts import PtsSetup

    if resume is not None:  # the stopped run's settings
        rec, settings = resume.record, resume.record.get("settings") or {}
        args.test, args.variant = rec.get("test"), rec.get("variant")
        args.rounds_max, args.round_time = settings.get("rounds_max"), settings.get("round_time_s")
        args.stimulus = settings.get("stimulus_set", "full")
        args.precondition_scale, args.purge = settings.get("precondition_scale", 1.0), "none"
        args.tested_by = args.tested_by or rec.get("tested_by")
    elif args.test is None:
        raise CliError("give --test iops|throughput|latency|wsat (or --resume RUN)")

    try:
        who = args.tested_by or getpass.getuser()
    except (OSError, KeyError):
        who = ""
    return PtsSetup(
        target=args.target,
        test=args.test,
        variant=args.variant,
        rounds_max=args.rounds_max,
        round_time=args.round_time,
        purge=args.purge,
        stimulus_set=args.stimulus,
        precondition_scale=args.precondition_scale,
        tested_by=who,
        tags=args.tag or [],
    )


def _device(target: str):
    from app.engine.devices.device_facts import device_facts, unsupported_reason

    not_here = unsupported_reason()
    if not_here:
        raise CliError(not_here)
    facts = device_facts(target)
    if facts is None:
        raise CliError(
            f"{target}: the PTS tests a raw block device (e.g. /dev/nvme1n1), and this is not one; "
            "give the device itself"
        )
    if facts.capacity <= 0:
        raise CliError(
            f"{target}: the host does not tell this device's capacity (sysfs size), so it cannot be tested"
        )
    return facts


def _make_runner(args: argparse.Namespace, setup, facts, resume=None):
    from app.engine.guards.arming_hint import copied_name
    from app.engine.guards.purge import PurgeRefused
    from app.engine.guards.safety import record_beside
    from app.engine.run.managers import ManagerError, build_endpoints
    from app.engine.run.pts_runner import PtsRunner
    from app.engine.run.runner import RunOptions, RunRefused
    from app.model.pts import build_plan
    from app.store.db_location import resolve_db_path

    plan = build_plan(setup, facts.capacity, facts.logical_sector)
    try:
        endpoints = build_endpoints(plan, {}, args.fio)
    except ManagerError as e:
        raise CliError(str(e)) from e
    options = RunOptions(
        allow_write={copied_name(a) for a in args.allow_write or []},
        allow_write_in_use={copied_name(a) for a in args.allow_write_mounted or []},
        registry=record_beside(resolve_db_path(getattr(args, "db", None))),
    )

    def on_round(r, decision) -> None:
        from app.model.steady_state import figure

        value = "no figure" if r.tracking is None else figure(r.tracking)
        print(
            f"PTS round {r.number}/{setup.rounds_max}: {setup.definition.variable_title} {value}", flush=True
        )
        print(f"  {decision.sentence()}", flush=True)

    runner = PtsRunner(
        plan,
        endpoints,
        None,
        options,
        setup=setup,
        device=facts.as_dict(),
        on_round=on_round,
        resume=resume,
    )
    try:
        runner.prepare()
        return runner
    except (RunRefused, PurgeRefused) as e:
        for ep in endpoints.values():
            if ep.close is not None:
                ep.close()
        raise CliError("this PTS run cannot start:\n  " + str(e).replace("\n", "\n  ")) from e


def cmd_pts(args: argparse.Namespace) -> int:
    from app.cli.progress import ProgressPrinter
    from app.cli.run_commands import exit_code, validity_lines
    from app.session.run_session import RunSession

    facts = _device(args.target)
    resume = _resume(args, facts)
    setup = _setup(args, resume)
    runner = _make_runner(args, setup, facts, resume)
    store = _store(args)
    tags = ["pts", f"pts-{setup.test}", *setup.tags]
    session = RunSession(runner, ProgressPrinter(), None, store=store, tags=tags, isolate=False)
    with ctrl_c_stops(runner):
        end = session.run()  # the PTS rounds kept with the run (app.store.run_extras.PTS)
    if end.store_failure is not None:
        raise CliError(
            f"the results database failed during the PTS run, so it was ended: {end.store_failure}",
            EXIT_STORE,
        )
    print(f"\nPTS run {end.status}: {runner.summary.text()}.")
    if runner.purge_result is not None:
        print(runner.purge_result.sentence())
    d = runner.decision
    print(d.sentence() if d is not None else "Steady state: no round ran to its end.")
    for line in validity_lines(end.notes):
        print(f"validity: {line}")
    print(f"Stored as run {end.run_id} in {end.stored_in}")
    print(f"Report: fiometer report {end.run_id} --pdf FILE.pdf (or --html, --xlsx)")
    return exit_code(end.status, runner)


def register(sub) -> None:
    from app.engine.guards.purge import METHODS

    sp = sub.add_parser(
        "pts",
        help="run a SNIA SSS PTS v2.0.2 test (IOPS, throughput, latency, write saturation) on a raw device: "
        "purge, precondition, rounds until steady state (window of 5 rounds, range <= 20 %%, fit <= 10 %%)",
    )
    sp.add_argument("target", metavar="TARGET", help="the raw block device to test (its data is destroyed)")
    sp.add_argument("--test", choices=TESTS, help="which PTS test")
    sp.add_argument(
        "--variant",
        choices=VARIANTS,
        default="enterprise",
        help="client: active range 75 %%, QD 16 x 2 threads; enterprise: 100 %%, QD 32 x 4 (default)",
    )
    sp.add_argument(
        "--rounds-max",
        type=number_option(int, 5, 1000, "rounds"),
        default=25,
        metavar="N",
        help="rounds run at most before steady state is declared not reached (the PTS: 25)",
    )
    sp.add_argument(
        "--round-time",
        type=number_option(int, 1, 86400, "seconds"),
        default=60,
        metavar="S",
        help="seconds each stimulus runs in a round (the PTS: 60)",
    )
    sp.add_argument(
        "--purge",
        choices=METHODS,
        default="none",
        help="purge the device first: blkdiscard, blkdiscard-secure, or none (recorded as not purged); only "
        "an armed raw device that nothing uses is ever purged",
    )
    sp.add_argument(
        "--stimulus",
        choices=STIMULUS_SETS,
        default="full",
        help="full: every stimulus of the test each round (the PTS); tracking: the tracking stimulus alone "
        "(quick checks: the report then says so)",
    )
    sp.add_argument(
        "--precondition-scale",
        type=number_option(float, 0.001, 1.0, "of the capacity"),
        default=1.0,
        metavar="F",
        help="the share of the capacity the preconditioning writes twice (the PTS: 1; less for quick checks)",
    )
    sp.add_argument("--allow-write", action="append", metavar="TARGET", help="arm writes to the device")
    sp.add_argument(
        "--allow-write-mounted",
        action="append",
        metavar="TARGET",
        help="also allow benchmark writes to a device in use (never arms a purge)",
    )
    sp.add_argument(
        "--resume",
        type=number_option(int, 1, 1 << 62, "run id"),
        metavar="RUN",
        help="continue a stopped PTS run after its preconditioning (no purge, no preconditioning): its settings "
        "and rounds carry on in a new run",
    )
    sp.add_argument("--tested-by", metavar="NAME", help="who tested (default: your login name)")
    sp.add_argument("--tag", action="append", help="tag the stored run (e.g. firmware-1.2)")
    sp.add_argument("--fio", metavar="PATH", help="the fio binary to use (default: found on PATH)")
    sp.set_defaults(func=cmd_pts)


def print_pts(run) -> None:
    """`fiometer show`: a PTS run's test, purge and steady-state decision, and its rounds."""
    from app.analysis.pts import pts_of
    from app.cli.progress import format_table
    from app.model.steady_state import figure

    p = pts_of(run)
    if p is None:
        return
    print(f"\nSNIA PTS: {p.title} test ({p.variant_letter}), {p.revision}")
    purge = p.record.get("purge") or {}
    print(
        f"  Purge: {purge.get('outcome', 'not run')}"
        + (f" ({purge['command']})" if purge.get("command") else "")
    )
    print(f"  {p.decision.sentence()}")
    rows = [
        [str(r.get("round")), "-" if r.get("tracking") is None else figure(float(r["tracking"]))]
        for r in p.rounds
    ]
    if rows:
        print(
            "    "
            + format_table(("Round", str(p.settings.get("variable_title", ""))), rows).replace("\n", "\n    ")
        )


def pts_json(run) -> dict | None:
    """`fiometer show --json`: the decision worked out again from the stored rounds by the PTS rule."""
    from app.analysis.pts import pts_of
    from app.engine.run.pts_runner import decision_dict

    p = pts_of(run)
    return (
        None
        if p is None
        else {"test": p.test, "variant": p.record.get("variant"), **decision_dict(p.decision)}
    )
