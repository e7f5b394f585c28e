"""`fiometer curve`: for each access spec, the highest load whose p99 stays under a limit (app.engine.run.curve_runner)."""

from __future__ import annotations

import argparse

from app.cli.common import number_option
from app.cli.run_commands import add_run_options, run_plan, say_ran


def cmd_curve(args: argparse.Namespace) -> int:
    from app.engine.run.curve_runner import CurveRunner

    def make(plan, endpoints, listener, options):
        return CurveRunner(
            plan,
            endpoints,
            listener,
            options,
            p99_max_ms=args.p99_max,
            max_load=args.max_load,
            exhaustive=args.exhaustive,
            metric=args.metric,
        )

    ran = run_plan(args, make)
    if ran.end.run_id is not None:
        _say_curve(args, ran.end.run_id)
    return say_ran(args, ran)


def _say_curve(args: argparse.Namespace, run_id: int) -> None:
    """What the load search found (kept with its run by the session), as tables."""
    from app.analysis.curve import curve_of
    from app.cli.common import _store
    from app.cli.progress import format_table
    from app.store.queries import get_run

    store = _store(args, reading=True)
    try:
        run = get_run(store, run_id)
    finally:
        store.close()
    print()
    for result in curve_of(run):
        print(f"Curve: {result.sentence()}")
        print(
            format_table(
                (result.dimension.capitalize(), "IOPS", "MB/s", "p99 ms", f"≤ {args.p99_max:g} ms", "Step"),
                _rows(result),
            )
        )


def _rows(result) -> list[list[str]]:
    from app.analysis.curve import table_rows

    return table_rows(result)


def register(sub) -> None:
    sp = sub.add_parser(
        "curve",
        help="for each access spec, find the highest load (queue depth, or workers when "
        "the plan cycles workers) whose p99 stays under a limit, in at most 8 "
        "measured steps, and confirm it once",
    )
    add_run_options(sp)
    sp.add_argument(
        "--p99-max",
        type=number_option(float, 0.001, 3_600_000, "milliseconds"),
        required=True,
        metavar="MS",
        help="the p99 response time limit, in milliseconds",
    )
    sp.add_argument(
        "--metric",
        choices=("iops", "mbps"),
        default="iops",
        help="the figure the answer leads with (default iops)",
    )
    sp.add_argument(
        "--max-load",
        type=number_option(int, 1, 65536, "load"),
        metavar="N",
        help="the highest queue depth (default 256) or worker count (default: the plan's) to try",
    )
    sp.add_argument(
        "--exhaustive",
        action="store_true",
        help="measure every load of the search's grid instead (1-8, then four per doubling), to check "
        "a search's answer against",
    )
    sp.set_defaults(func=cmd_curve)
