"""The `fiometer` command: the parser, one family module per group of subcommands, and the top-level
--smoke check. Every family module has `register(sub)`, which adds its subcommands with `func` set."""

from __future__ import annotations

import argparse
import sys

from app import __version__
from app.cli import (
    curve_commands,
    history_commands,
    plan_commands,
    pts_commands,
    report_commands,
    results_commands,
    run_commands,
    system_commands,
)
from app.cli.common import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_STORE, CliError, TerminalText

FAMILIES = (
    plan_commands,
    run_commands,
    curve_commands,
    pts_commands,
    results_commands,
    history_commands,
    report_commands,
    system_commands,
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fiometer", description="Iometer-compatible storage benchmark on fio")
    p.add_argument("--version", action="version", version=f"fiometer {__version__}")
    p.add_argument("--db", metavar="PATH", help="results database (default: in your user data folder)")
    p.add_argument(
        "--smoke",
        action="store_true",
        help="check this installation: GUI offscreen, a 1 s null-engine run of the bundled example "
        "(temporary files and database), one line of versions and IOPS; exit 0 or 1",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for family in FAMILIES:
        family.register(sub)
    for command in sub.choices.values():  # `fiometer runs --db X` as well as `fiometer --db X runs`
        if not any("--db" in a.option_strings for a in command._actions):
            command.add_argument(
                "--db",
                metavar="PATH",
                default=argparse.SUPPRESS,
                help="results database (default: in your user data folder)",
            )
    return p


def _sweep_job_folders() -> None:
    """Remove the job folders a killed Fiometer left in the temporary directory (never fatal)."""
    from app.diagnostics import log
    from app.engine.guards import workdirs

    try:
        for folder in workdirs.sweep_once():
            log.info("removed %s, left by a Fiometer that ended without cleaning up", folder)
    except OSError as e:
        log.warning("could not clean up old job folders: %s", e)


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
        _sweep_job_folders()
        return args.func(args)
    except CliError as e:
        log.warning("fiometer %s: %s", args.command, e)
        print(f"fiometer: {e}", file=sys.stderr)
        return e.code
    except StoreError as e:
        log.warning("fiometer %s: %s", args.command, e)
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
