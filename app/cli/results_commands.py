"""`fiometer runs / show / export`: reading stored results."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from app.cli.common import CliError, _get_run, _store, output_path, write_output, write_output_chunks

if TYPE_CHECKING:
    from app.store.records import Run


def cmd_runs(args: argparse.Namespace) -> int:
    import json

    from app.store.queries import list_runs

    store = _store(args, reading=True)
    try:
        runs = list_runs(store, text=args.search, tag=args.tag)
    finally:
        store.close()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": r.id,
                        "name": r.name,
                        "status": r.status,
                        "started": r.started,
                        "ended": r.ended,
                        "plan": r.plan_name,
                        "steps": r.step_count,
                        "tags": r.tags,
                    }
                    for r in runs
                ],
                indent=2,
            )
        )
        return 0
    if not runs:
        print(f"No runs stored in {store.path}")
        return 0
    from app.cli.progress import format_table

    rows = [
        [str(r.id), r.started[:19].replace("T", " "), r.status, str(r.step_count), r.name, ",".join(r.tags)]
        for r in runs
    ]
    print(format_table(("Run", "Started (UTC)", "Status", "Steps", "Name", "Tags"), rows))
    return 0


def _print_show_json(
    args: argparse.Namespace, run: Run, coarse: bool, notes: list[Any], unjudged: str | None
) -> None:
    """`fiometer show --json`: the run, its steps' results, and what the analyses found."""
    import dataclasses
    import json

    from app.analysis.disk_stats import run_disk_stats
    from app.analysis.sweep import find_sweeps
    from app.analysis.timed_transfer import transfers
    from app.cli.pts_commands import pts_json

    def metrics(m):
        # an imported Iometer run's histogram is its 21 coarse bins: no percentiles from it
        return {k: None if coarse and k.startswith("p") else v for k, v in m.headline().items()}

    print(
        json.dumps(
            {
                "validity": [n.to_json() | {"title": n.title} for n in notes],
                "not_judged": [unjudged] if unjudged else [],
                "curve": _curve_json(run),
                "pts": pts_json(run),
                "id": run.id,
                "name": run.name,
                "status": run.status,
                "started": run.started,
                "ended": run.ended,
                "plan": run.plan_name,
                "plan_sha256": run.plan_sha256,
                "tags": run.tags,
                "notes": run.notes,
                "fio_versions": run.fio_versions,
                "host": run.host,
                "managers": [dataclasses.asdict(m) for m in run.managers],
                "steps": [
                    {
                        "index": s.index,
                        "spec": s.spec_name,
                        "queue_depth": s.queue_depth,
                        "status": s.status,
                        "started": s.started,
                        "ended": s.ended,
                        "results": [
                            {"level": r.level, "manager": r.manager, "key": r.key, **metrics(r.metrics)}
                            for r in s.results
                        ],
                    }
                    for s in run.steps
                ],
                "messages": [dataclasses.asdict(m) for m in run.messages],
                "disk_stats": [dataclasses.asdict(d) for d in run_disk_stats(run)],
                "preconditioning": _precondition_json(args, run),
                "transfers": [dataclasses.asdict(x) for x in transfers(run)],
                "sweeps": [
                    {
                        "label": s.label,
                        "dimension": s.dimension,
                        "max_iops": dataclasses.asdict(s.max_iops),
                        "max_mbps": dataclasses.asdict(s.max_mbps),
                        "knee": dataclasses.asdict(s.knee) if s.knee else None,
                        "points": [dataclasses.asdict(p) for p in s.points],
                    }
                    for s in find_sweeps(run)
                ],
            },
            indent=2,
        )
    )


def _result_rows(run: Run, coarse: bool) -> list[list[str]]:
    """The table of `fiometer show`: per step, ALL and each manager."""
    from app.cli.progress import fmt_num

    rows = []
    for s in run.steps:
        for r in sorted(s.results, key=lambda r: (r.level != "all", r.key)):
            if r.level in ("all", "manager"):
                m = r.metrics
                rows.append(
                    [
                        str(s.index + 1),
                        s.spec_name,
                        str(s.queue_depth or "-"),
                        s.status,
                        "ALL" if r.level == "all" else r.key,
                        fmt_num(m.iops),
                        fmt_num(m.mbps),
                        fmt_num(m.lat_mean_ms, 3),
                        fmt_num(m.lat_max_ms, 3),
                        fmt_num(None if coarse else m.percentile_ms(99), 3),
                        str(m.errors),
                    ]
                )
    return rows


def cmd_show(args: argparse.Namespace) -> int:

    from app.analysis.disk_stats import run_disk_stats
    from app.analysis.iometer_import import is_iometer_run
    from app.analysis.preconditioning import fill_summary
    from app.analysis.sweep import find_sweeps
    from app.analysis.timed_transfer import transfers
    from app.cli.progress import fmt_num, format_table
    from app.cli.pts_commands import print_pts

    run = _get_run(args, raw_output=True)  # fio's per-disk counters live in its output
    coarse = is_iometer_run(run)
    notes = _validity(args, run)
    unjudged = _unjudged(args, run)
    if args.json:
        _print_show_json(args, run, coarse, notes, unjudged)
        return 0
    print(f"Run {run.id}: {run.name} [{run.status}]  started {run.started}  ended {run.ended or '-'}")
    tool = (
        f"{run.host['tool']} {run.host.get('tool_version', '')}".strip()
        if coarse
        else f"fio {', '.join(run.fio_versions) or '?'}"
    )
    print(
        f"Plan {run.plan_name!r} (sha256 {run.plan_sha256[:12]}), {tool}, "
        f"managers: {', '.join(f'{m.name} ({m.address})' for m in run.managers)}"
    )
    _print_validity(notes)
    if unjudged:
        print(f"{unjudged}.")
    rows = _result_rows(run, coarse)
    print(
        format_table(
            (
                "Step",
                "Access specification",
                "QD",
                "Status",
                "Level",
                "IOPS",
                "MB/s",
                "Avg ms",
                "Max ms",
                "p99 ms",
                "Errors",
            ),
            rows,
        )
    )
    disks = run_disk_stats(run)
    if disks:
        print("\nDisk statistics (from fio's per-disk counters, as iostat computes them):")
        print(
            format_table(
                (
                    "Step",
                    "Manager",
                    "Disk",
                    "Targets",
                    "Reads",
                    "Writes",
                    "r_await ms",
                    "w_await ms",
                    "aqu-sz",
                    "%util",
                ),
                [
                    [
                        str(d.step + 1),
                        d.manager,
                        d.disk,
                        ", ".join(d.targets) or "-",
                        str(d.reads),
                        str(d.writes),
                        fmt_num(d.r_await_ms, 3),
                        fmt_num(d.w_await_ms, 3),
                        fmt_num(d.aqu_sz, 2),
                        fmt_num(d.util_pct, 1),
                    ]
                    for d in disks
                ],
            )
        )
    precondition = fill_summary(run), _steady(args, run)
    if any(precondition):
        print("\nPreconditioning (not part of the measured results):")
        for line in precondition:
            if line:
                print(f"  {line}")
    moved = transfers(run)
    if moved:
        print("\nTimed transfer:")
        for transfer in moved:
            print(f"  {transfer.sentence()}")
    _print_curve(run)
    print_pts(run)
    sweeps = find_sweeps(run)
    if sweeps:
        print("\nSweeps:")
        for sweep in sweeps:
            for sentence in sweep.summary():
                print(f"  {sentence}")
    for msg in run.messages + [m for s in run.steps for m in s.messages]:
        print(f"{msg.level}: {msg.manager + ': ' if msg.manager else ''}{msg.text}")
    return 0


def _validity(args: argparse.Namespace, run) -> list:
    """The run's validity notes (stored with it, or computed now for a run stored without them)."""
    from app.analysis.iometer_import import is_iometer_run
    from app.analysis.validity import notes_of

    if is_iometer_run(run):
        return []
    store = _store(args, reading=True)
    try:
        return notes_of(run, store)
    finally:
        store.close()


def _unjudged(args: argparse.Namespace, run) -> str | None:
    """What the validity rules could not judge on this run and why (steps too short for steadiness)."""
    from app.analysis.iometer_import import is_iometer_run
    from app.analysis.validity import unjudged_of

    if is_iometer_run(run):
        return None
    store = _store(args, reading=True)
    try:
        return unjudged_of(run, store)
    finally:
        store.close()


def _print_validity(notes: list) -> None:
    from app.analysis.validity import lines

    if not notes:
        print(
            "Validity: no notes (the figures show no sign of cache, unwritten or compressible data, a busy "
            "generator, drift, other traffic or clock skew)."
        )
        return
    print("Validity notes (read these before the figures):")
    for line in lines(notes):
        print(f"  ! {line}")


def _curve_json(run) -> list[dict] | None:
    import dataclasses

    from app.analysis.curve import curve_of

    results = curve_of(run)
    if not results:
        return None
    return [
        {
            "label": r.label,
            "dimension": r.dimension,
            "p99_max_ms": r.p99_max_ms,
            "metric": r.metric,
            "answer_load": r.answer_load,
            "steps_measured": r.steps_measured,
            "sentence": r.sentence(),
            "points": [dataclasses.asdict(p) for p in r.points],
        }
        for r in results
    ]


def _print_curve(run) -> None:
    from app.analysis.curve import curve_of, table_rows
    from app.cli.progress import format_table

    results = curve_of(run)
    if not results:
        return
    print("\nCurve (the highest load whose p99 keeps the limit):")
    for r in results:
        print(f"  {r.sentence()}")
        print(
            "    "
            + format_table(
                (r.dimension.capitalize(), "IOPS", "MB/s", "p99 ms", f"≤ {r.p99_max_ms:g} ms", "Step"),
                table_rows(r),
            ).replace("\n", "\n    ")
        )


def _steady_state(args: argparse.Namespace, run):
    """The verdict on the run's steady-state step (its samples are read from the store), or None."""
    from app.analysis.preconditioning import steady_state_of

    store = _store(args, reading=True)
    try:
        return steady_state_of(store, run)
    finally:
        store.close()


def _precondition_json(args: argparse.Namespace, run) -> dict | None:
    import dataclasses

    from app.analysis.preconditioning import fill_summary, phases, precondition_of

    if not precondition_of(run).enabled:
        return None
    verdict = _steady_state(args, run)
    return {
        "phases": {str(k): v for k, v in phases(run).items()},
        "fill": fill_summary(run),
        "steady_state": dataclasses.asdict(verdict) | {"at_s": verdict.at_s} if verdict else None,
    }


def _steady(args: argparse.Namespace, run) -> str | None:
    from app.analysis.preconditioning import precondition_of

    verdict = _steady_state(args, run)
    return verdict.sentence(precondition_of(run)) if verdict else None


def cmd_export(args: argparse.Namespace) -> int:
    from app.analysis.export_run import run_results_csv_bytes
    from app.analysis.samples_export import samples_csv_bytes

    if not args.iometer_csv and not args.samples:
        raise CliError("say what to write: --iometer-csv OUT.csv and/or --samples OUT.csv")
    for path in (args.iometer_csv, args.samples):
        if path:
            output_path(path)  # before reading the run: a mistyped folder is said at once
    # the results (every level's histograms, every step) only for the Iometer file; the samples need
    # the run's outline alone, so that memory stays flat in the run's length
    run = _get_run(args) if args.iometer_csv else _get_run(args, result_levels=())
    if args.iometer_csv:
        write_output(args.iometer_csv, run_results_csv_bytes(run))
        print(f"Run {run.id} written to {args.iometer_csv} (Iometer 1.1.0 results.csv layout)")
    if args.samples:
        store = _store(args, reading=True)
        try:  # streamed: a stretch of a step at a time reaches the file, however long the run
            write_output_chunks(args.samples, samples_csv_bytes(store, run))
        finally:
            store.close()
        print(f"Run {run.id}: every per-second sample written to {args.samples}")
    return 0


def register(sub) -> None:
    sp = sub.add_parser("runs", help="list stored runs")
    sp.add_argument("--search", help="only runs whose name, description or notes contain this text")
    sp.add_argument("--tag", help="only runs with this tag")
    sp.add_argument("--json", action="store_true", help="machine-readable output")
    sp.set_defaults(func=cmd_runs)

    sp = sub.add_parser("show", help="show a stored run's results")
    sp.add_argument("run", type=int, help="run id (see `fiometer runs`)")
    sp.add_argument("--json", action="store_true", help="machine-readable output")
    sp.set_defaults(func=cmd_show)

    sp = sub.add_parser("export", help="export a stored run")
    sp.add_argument("run", type=int, help="run id (see `fiometer runs`)")
    sp.add_argument("--iometer-csv", metavar="OUT.csv", help="Iometer 1.1.0 results.csv layout")
    sp.add_argument(
        "--samples",
        metavar="OUT.csv",
        help="every per-second sample of every level in long form "
        "(step, time, level, name, IOPS, MB/s, response times)",
    )
    sp.set_defaults(func=cmd_export)
