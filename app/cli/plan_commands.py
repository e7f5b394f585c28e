"""`fiometer import / plan / examples`: reading plans, their steps and their fio job files."""

from __future__ import annotations

import argparse
import platform
import re
from pathlib import Path

from app.cli.common import (
    CliError,
    _expand,
    _open,
    _parse_map,
    add_step_overrides,
    output_path,
    parse_size,
    write_output,
)


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
    workers = ", ".join(
        f"{plan.managers[a.manager].name}/{plan.managers[a.manager].workers[a.worker].name}[{len(a.targets)}]"
        for a in step.workers
    )
    qd = "/".join(str(q) for q in step.queue_depths)
    return (
        f"{step.index + 1:4d}  {step.spec_label:<36}  workers {len(step.workers):2d}  "
        f"targets {step.target_count:3d}  QD {qd:>4}  ({workers})"
    )


def cmd_import(args: argparse.Namespace) -> int:
    from app.model import planfile

    opened = _open(args.file)
    plan = opened.plan
    steps = _expand(plan, opened.warnings)  # checks the plan first: nothing below meets a plan with errors
    s = plan.setup
    print(f"Plan: {plan.name}   (from {args.file})")
    print(
        f"Test setup: {s.test_type}, run time {s.run_time} s per step, ramp-up {s.ramp_up} s, "
        f"record {s.record_results}"
    )
    print(f"\nAccess specifications ({len(plan.specs)}):")
    for spec in plan.specs:
        first, *rest = spec.lines
        print(f"  {spec.name:<40} {first.as_csv():<28} default {spec.default_assignment}")
        for ln in rest:
            print(f"  {'':<40} {ln.as_csv()}")
    print(f"\nManagers ({len(plan.managers)}):")
    for m in plan.managers:
        where = "this machine" if m.host == "local" else (m.host or "not mapped (use --manager NAME=HOST)")
        addr = (
            f" (address in file: {m.address_in_file}, never contacted)" if m.address_in_file.strip() else ""
        )
        print(f"  {m.name}: runs on {where}{addr}")
        for w in m.workers:
            print(
                f"    {w.name} [{w.kind}] QD {w.queue_depth}, max size {w.max_size} sectors, "
                f"start sector {w.start_sector}; specs: {', '.join(w.specs) or '(none)'}"
            )
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
    from app.engine.jobs.engines import EngineRefused, choose
    from app.engine.jobs.jobfile import JobSettings, step_jobfile
    from app.engine.jobs.targets import TargetError

    opened = _open(args.file)
    plan = opened.plan
    # a job fio would refuse is never written
    steps = _expand(
        plan,
        opened.warnings,
        "no job files written; the plan cannot run as it is" if args.jobs else "the plan cannot be used",
    )
    run_time = plan.setup.run_time if args.run_time is None else args.run_time
    ramp_up = plan.setup.ramp_up if args.ramp_up is None else args.ramp_up
    file_size = parse_size(args.test_file_size) if args.test_file_size else None
    if args.steps or not args.jobs:
        print(f"{len(steps)} steps; run time {run_time} s, ramp-up {ramp_up} s each")
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
                try:  # for another machine: an explicit engine as chosen, auto as that OS's usual one
                    use = choose(
                        plan.setup, plan.managers[mi].name, args.os, local=False, uring_refusal=lambda: None
                    )
                except EngineRefused as e:
                    raise CliError(f"{args.file}: {e}") from None
                try:
                    jf = step_jobfile(
                        plan,
                        step,
                        mi,
                        args.os,
                        JobSettings(
                            mapping=mapping,
                            engine=use.name,
                            engine_options=use.options,
                            title=plan.name,
                            run_time=args.run_time,
                            ramp_up=args.ramp_up,
                            file_size=file_size,
                        ),
                    )
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
        print(
            f"\nSave them as plan files with `fiometer examples --save DIR`; their target is {TESTFILE} "
            f"(run with --map '{TESTFILE}=/path/iobw.tst'). Iometer template: {example_plan()}"
        )
        return 0
    out = Path(args.save)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for ex in EXAMPLES:
            planfile.save(ex.build(), out / f"{ex.key}.json")
    except OSError as e:
        raise CliError(f"cannot save the examples in {out}: {e}") from e
    print(
        f"\n{len(EXAMPLES)} plan files written to {out} ({', '.join(e.key + '.json' for e in EXAMPLES)}); "
        f"run one with: fiometer run {out / EXAMPLES[0].key}.json --map '{TESTFILE}=/path/iobw.tst'"
    )
    return 0


def cmd_export_icf(args: argparse.Namespace) -> int:
    """A plan (Fiometer's JSON or an .icf) as an Iometer 1.1.0 configuration, as File > Export does."""
    import icf_import
    from app.model.to_icf import ENCODING, plan_to_icf, unwritable

    opened = _open(args.file)
    plan = opened.plan
    problems = unwritable(plan)
    if problems:  # never a '?' or a name Iometer reads back cut short
        raise CliError("the .icf would not say what the plan says:\n" + "\n".join(f"  {p}" for p in problems))
    doc, notes = plan_to_icf(plan)
    out = write_output(args.output, icf_import.write(doc, "\r\n").encode(ENCODING, errors="replace"))
    for n in notes:
        print(f"note: {n}")
    print(
        f"{plan.name}: written to {out} as an Iometer 1.1.0 configuration ({len(plan.specs)} access "
        f"specification(s), {len(plan.managers)} manager(s))"
    )
    return 0


def register(sub) -> None:
    sp = sub.add_parser("import", help="read an Iometer .icf, print a summary, optionally save a plan")
    sp.add_argument("file", help="Iometer configuration file (.icf)")
    sp.add_argument("-o", "--output", help="write the plan as a Fiometer plan file (JSON)")
    sp.set_defaults(func=cmd_import)

    sp = sub.add_parser(
        "export-icf", help="write a plan (Fiometer plan file or .icf) as an Iometer 1.1.0 .icf"
    )
    sp.add_argument("file", help="Fiometer plan file (JSON) or .icf")
    sp.add_argument("-o", "--output", required=True, metavar="FILE", help="the .icf to write")
    sp.set_defaults(func=cmd_export_icf)

    sp = sub.add_parser("plan", help="show a plan's test steps or write its fio job files")
    sp.add_argument("file", help=".icf or Fiometer plan file")
    sp.add_argument("--steps", action="store_true", help="print the expanded test sequence")
    sp.add_argument(
        "--jobs", metavar="DIR", help="write DIR/step-NNN-<manager>.fio for every step and manager"
    )
    sp.add_argument("--map", action="append", metavar="NAME=PATH", help="place a target at a file or device")
    add_step_overrides(sp)  # so that the job files are those `run` with the same options gives fio
    sp.add_argument("--os", default=platform.system(), help="OS of the managers (default: this machine's)")
    sp.set_defaults(func=cmd_plan)

    sp = sub.add_parser("examples", help="list the bundled example plans, or save them as plan files")
    sp.add_argument("--save", metavar="DIR", help="write DIR/<key>.json for every example")
    sp.set_defaults(func=cmd_examples)
