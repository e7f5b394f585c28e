"""The `fiometer` command: the parser, one family module per group of subcommands, and the top-level
--smoke check. Every family module has `register(sub)`, which adds its subcommands with `func` set."""

from __future__ import annotations

import argparse
import sys

from app import __version__
from app.cli import (
    history_commands,
    plan_commands,
    report_commands,
    results_commands,
    run_commands,
    system_commands,
)
from app.cli.common import CliError

FAMILIES = (plan_commands, run_commands, results_commands, history_commands, report_commands, system_commands)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fiometer", description="Iometer-compatible storage benchmark on fio")
    p.add_argument("--version", action="version", version=f"fiometer {__version__}")
    p.add_argument("--db", metavar="PATH", help="results database (default: in your user data folder)")
    p.add_argument("--smoke", action="store_true",
                   help="check this installation: GUI offscreen, a 1 s null-engine run of the bundled example "
                        "(temporary files and database), one line of versions and IOPS; exit 0 or 1")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for family in FAMILIES:
        family.register(sub)
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
